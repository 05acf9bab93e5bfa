package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/http3/qpack"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/wire"
)

// seen is what the backend saw of a request.
type seen struct {
	Method, Proto, Host string
	Header              http.Header
	Body                string
	ContentLength       int64
	TransferEncoding    []string
}

// backend is an HTTP/1.1 test backend that records the requests it
// sees; reply, if set, answers them (default: 200 and "ok").
type backend struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []seen
	reply func(w http.ResponseWriter, r *http.Request, n int)
}

func newBackend(t *testing.T) *backend {
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.reqs = append(b.reqs, seen{r.Method, r.Proto, r.Host, r.Header.Clone(), string(body), r.ContentLength, r.TransferEncoding})
		n := len(b.reqs)
		reply := b.reply
		b.mu.Unlock()
		if reply != nil {
			reply(w, r, n)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *backend) requests() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]seen(nil), b.reqs...)
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testProxy is a running proxy.
type testProxy struct {
	started
	out, errOut *syncBuffer
	hup         chan os.Signal
	pool        *x509.CertPool
}

// writeCert writes cert's chain and key as PEM files in dir.
func writeCert(t *testing.T, dir string, cert tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	key, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	// Written to new files renamed over the old, as a deployment would.
	os.WriteFile(certFile+".new", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644)
	os.WriteFile(keyFile+".new", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key}), 0o600)
	os.Rename(keyFile+".new", keyFile)
	os.Rename(certFile+".new", certFile)
	return certFile, keyFile
}

// startProxy runs the proxy in front of backendURL with a certificate of
// the test's; it stops at the end of the test and must exit cleanly.
func startProxy(t *testing.T, backendURL string, args ...string) *testProxy {
	t.Helper()
	cert, pool, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := writeCert(t, t.TempDir(), cert)
	p := &testProxy{out: &syncBuffer{}, errOut: &syncBuffer{}, hup: make(chan os.Signal, 1), pool: pool}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan started, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-listen", "127.0.0.1:0", "-backend", backendURL, "-cert", certFile, "-key", keyFile}, args...),
			p.out, p.errOut, p.hup, func(s started) { ready <- s })
	}()
	select {
	case p.started = <-ready:
	case err := <-done:
		t.Fatalf("proxy: %v\n%s%s", err, p.out, p.errOut)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("proxy exited with %v", err)
		}
	})
	return p
}

// h3 returns an HTTP/3 client trusting the proxy's certificate.
func (p *testProxy) h3(t *testing.T, tc *tls.Config) (*http.Client, *http3.Transport) {
	if tc == nil {
		tc = &tls.Config{RootCAs: p.pool}
	}
	tr := &http3.Transport{TLSClientConfig: tc, QUICConfig: &quic.Config{HandshakeIdleTimeout: testHandshakeTimeout}}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}, tr
}

// tcp returns an HTTP/2 (h2) or HTTP/1.1 client over TLS.
func (p *testProxy) tcp(t *testing.T, h2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.pool}, ForceAttemptHTTP2: h2}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

func (p *testProxy) url(path string) string {
	_, port, _ := net.SplitHostPort(p.addr)
	return "https://localhost:" + port + path
}

func get(t *testing.T, c *http.Client, url string, hdr http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// The three protocols reach the backend; the TCP side advertises HTTP/3
// with http3's Alt-Svc; each request is in the access log and counted.
func TestProxyProtocols(t *testing.T) {
	be := newBackend(t)
	p := startProxy(t, be.URL)
	h3, _ := p.h3(t, nil)
	_, port, _ := net.SplitHostPort(p.addr)
	for _, c := range []struct {
		client *http.Client
		proto  string
	}{{h3, "HTTP/3.0"}, {p.tcp(t, true), "HTTP/2.0"}, {p.tcp(t, false), "HTTP/1.1"}} {
		resp, body := get(t, c.client, p.url("/path?q=1"), nil)
		if resp.StatusCode != 200 || body != "ok" || resp.Proto != c.proto {
			t.Errorf("%s: %s %s %q", c.proto, resp.Proto, resp.Status, body)
		}
		if c.proto != "HTTP/3.0" {
			if got, want := resp.Header.Get("Alt-Svc"), `h3=":`+port+`"; ma=86400`; got != want {
				t.Errorf("%s: Alt-Svc %q, want %q", c.proto, got, want)
			}
		}
	}
	reqs := be.requests()
	if len(reqs) != 3 {
		t.Fatalf("backend saw %d requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Proto != "HTTP/1.1" || r.Host != "localhost:"+port {
			t.Errorf("backend saw %s, Host %q", r.Proto, r.Host)
		}
	}
	log := p.out.String()
	for _, proto := range []string{"HTTP/3.0", "HTTP/2.0", "HTTP/1.1"} {
		re := regexp.MustCompile(`(?m)^127\.0\.0\.1 - - \[[^]]+\] "GET /path\?q=1 ` + regexp.QuoteMeta(proto) + `" 200 2 "-" "(-|Go-http-client/[12]\.[01])" [\d.]+ms early=0 retried=0$`)
		if !re.MatchString(log) {
			t.Errorf("no access log line for %s:\n%s", proto, log)
		}
	}
	st := p.stats.snapshot()
	if st.Requests["HTTP/3.0"] != 1 || st.Requests["HTTP/2.0"] != 1 || st.Requests["HTTP/1.1"] != 1 || st.Statuses["2xx"] != 3 || st.BytesOut != 6 {
		t.Errorf("stats %+v", st)
	}
}

// Forwarded and X-Forwarded-* come from the proxy, whatever the client
// sent; hop-by-hop fields (Connection and those it names, Keep-Alive,
// TE, Upgrade, Proxy-*) do not reach the backend.
func TestProxyHeaders(t *testing.T) {
	be := newBackend(t)
	p := startProxy(t, be.URL)
	h3, _ := p.h3(t, nil)
	spoof := http.Header{
		"X-Forwarded-For":   {"6.6.6.6"},
		"X-Forwarded-Host":  {"evil.example"},
		"X-Forwarded-Proto": {"http"},
		"Forwarded":         {"for=6.6.6.6;proto=http"},
	}
	_, port, _ := net.SplitHostPort(p.addr)
	for _, c := range []*http.Client{h3, p.tcp(t, true), p.tcp(t, false)} {
		get(t, c, p.url("/"), spoof)
	}
	// HTTP/1.1 with hop-by-hop fields, written as they are.
	conn, err := tls.Dial("tcp", p.addr, &tls.Config{RootCAs: p.pool, ServerName: "localhost", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /hop HTTP/1.1\r\nHost: localhost:"+port+"\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\n"+
		"Keep-Alive: timeout=5\r\nTE: gzip\r\nProxy-Authorization: Basic eA==\r\nUpgrade: h2c\r\nX-Kept: k\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("raw HTTP/1.1: %v, %v", resp, err)
	}
	reqs := be.requests()
	if len(reqs) != 4 {
		t.Fatalf("backend saw %d requests", len(reqs))
	}
	for i, r := range reqs {
		h := r.Header
		if got := h.Values("X-Forwarded-For"); len(got) != 1 || got[0] != "127.0.0.1" {
			t.Errorf("request %d: X-Forwarded-For %q", i, got)
		}
		if got := h.Values("Forwarded"); len(got) != 1 || got[0] != `for=127.0.0.1;host="localhost:`+port+`";proto=https` {
			t.Errorf("request %d: Forwarded %q", i, got)
		}
		if h.Get("X-Forwarded-Host") != "localhost:"+port || h.Get("X-Forwarded-Proto") != "https" {
			t.Errorf("request %d: X-Forwarded-Host %q, -Proto %q", i, h.Get("X-Forwarded-Host"), h.Get("X-Forwarded-Proto"))
		}
	}
	hop := reqs[3].Header
	for _, name := range []string{"X-Secret", "Keep-Alive", "Te", "Proxy-Authorization", "Upgrade"} {
		if v, ok := hop[name]; ok {
			t.Errorf("backend got hop-by-hop %s: %q", name, v)
		}
	}
	if hop.Get("X-Kept") != "k" {
		t.Errorf("an end-to-end field was lost: %v", hop)
	}
}

// rawH3 is an HTTP/3 client that writes whatever header fields and DATA
// it is given, as a hostile client would.
type rawH3 struct {
	qc  *quic.Conn
	enc *qpack.Encoder
}

func dialRawH3(t *testing.T, p *testProxy) *rawH3 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, p.addr, &tls.Config{RootCAs: p.pool, ServerName: "localhost", NextProtos: []string{"h3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	ctrl, err := qc.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	ctrl.Write([]byte{0x00, 0x04, 0x00}) // control stream: an empty SETTINGS frame
	return &rawH3{qc: qc, enc: qpack.NewEncoder(qpack.EncoderConfig{})}
}

func appendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return binary.BigEndian.AppendUint16(b, uint16(v)|0x4000)
	case v < 1<<30:
		return binary.BigEndian.AppendUint32(b, uint32(v)|0x80000000)
	}
	return binary.BigEndian.AppendUint64(b, v|0xc0<<56)
}

// request sends a request with fields (after the pseudo-header fields of
// a POST to /) and data as one DATA frame, and returns the status, or the
// error that ended the stream.
func (c *rawH3) request(t *testing.T, authority string, fields []qpack.HeaderField, data []byte) (string, error) {
	t.Helper()
	s, err := c.qc.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	all := append([]qpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: authority}, {Name: ":path", Value: "/"}}, fields...)
	block := c.enc.EncodeFieldSection(nil, uint64(s.StreamID()), all)
	b := appendVarint(appendVarint(nil, 0x01), uint64(len(block)))
	b = append(b, block...)
	b = appendVarint(appendVarint(b, 0x00), uint64(len(data)))
	b = append(b, data...)
	s.Write(b)
	s.CloseWrite()
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := io.ReadAll(s)
	if err != nil {
		return "", err
	}
	// The first frame is the response's HEADERS (the proxy's encoder has
	// no dynamic table: our SETTINGS allowed none).
	typ, n := readVarint(resp)
	length, m := readVarint(resp[n:])
	if typ != 0x01 || n+m+int(length) > len(resp) {
		t.Fatalf("response does not start with a HEADERS frame: %x", resp)
	}
	got, err := qpack.NewDecoder(qpack.DecoderConfig{}).DecodeFieldSection(uint64(s.StreamID()), resp[n+m:n+m+int(length)], nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if f.Name == ":status" {
			return f.Value, nil
		}
	}
	t.Fatalf("no :status in %v", got)
	return "", nil
}

// readVarint reads a QUIC variable-length integer (RFC 9000, Section 16).
func readVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}

// HTTP/3 requests that could smuggle a second request into HTTP/1.1, or
// whose body does not match Content-Length, never reach the backend:
// connection-specific fields and Transfer-Encoding make the request
// malformed (RFC 9114, Section 4.2); a body shorter or longer than its
// Content-Length fails it.
func TestProxyHTTP3Smuggling(t *testing.T) {
	be := newBackend(t)
	p := startProxy(t, be.URL)
	_, port, _ := net.SplitHostPort(p.addr)
	authority := "localhost:" + port
	smuggled := []byte("0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, c := range []struct {
		name   string
		fields []qpack.HeaderField
		data   []byte
	}{
		{"transfer-encoding", []qpack.HeaderField{{Name: "transfer-encoding", Value: "chunked"}}, smuggled},
		{"connection", []qpack.HeaderField{{Name: "connection", Value: "keep-alive"}}, nil},
		{"keep-alive", []qpack.HeaderField{{Name: "keep-alive", Value: "timeout=5"}}, nil},
		{"upgrade", []qpack.HeaderField{{Name: "upgrade", Value: "h2c"}}, nil},
		{"proxy-connection", []qpack.HeaderField{{Name: "proxy-connection", Value: "keep-alive"}}, nil},
		{"te gzip", []qpack.HeaderField{{Name: "te", Value: "gzip"}}, nil},
		{"body shorter than content-length", []qpack.HeaderField{{Name: "content-length", Value: "100"}}, []byte("short")},
		{"body longer than content-length", []qpack.HeaderField{{Name: "content-length", Value: "3"}}, smuggled},
		{"two content-lengths", []qpack.HeaderField{{Name: "content-length", Value: "3"}, {Name: "content-length", Value: "40"}}, smuggled[:3]},
	} {
		raw := dialRawH3(t, p)
		status, err := raw.request(t, authority, c.fields, c.data)
		if err == nil && status != "400" {
			t.Errorf("%s: answered %s", c.name, status)
		}
		t.Logf("%s: status %q, stream error %v", c.name, status, err)
		if n := len(be.requests()); n != 0 {
			t.Fatalf("%s: the backend saw %d requests: %+v", c.name, n, be.requests())
		}
	}
	// A well-formed one goes through, with its body.
	raw := dialRawH3(t, p)
	if _, err := raw.request(t, authority, []qpack.HeaderField{{Name: "content-length", Value: "5"}}, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if r := be.requests(); len(r) != 1 || r[0].Body != "hello" || r[0].ContentLength != 5 {
		t.Errorf("backend saw %+v", r)
	}
}

// Bodies reach the backend whole, buffered below -max-buffer (within
// -max-buffered in total) and streamed otherwise, with their
// Content-Length.
func TestProxyBodies(t *testing.T) {
	be := newBackend(t)
	p := startProxy(t, be.URL, "-max-buffer", "100000", "-max-buffered", "60000")
	h3, _ := p.h3(t, nil)
	for _, size := range []int{50_000, 70_000, 3_000_000} {
		body := strings.Repeat("x", size)
		resp, err := h3.Post(p.url("/up"), "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		r := be.requests()
		last := r[len(r)-1]
		if last.Body != body || last.ContentLength != int64(size) {
			t.Errorf("%d bytes: backend got %d bytes, Content-Length %d", size, len(last.Body), last.ContentLength)
		}
	}
}

// handshakeDropRelay relays UDP datagrams between a client and the
// proxy. While withhold is set it drops the client's datagrams that carry
// a Handshake packet (its Finished is in one), so that the proxy's side
// of the handshake cannot complete; its Initial and 0-RTT packets pass.
// Until release is called it also holds back the proxy's datagrams, so
// that the client cannot complete its side either and sends its request
// in 0-RTT, however late its goroutines run (with the proxy's flight in
// hand it would send it in 1-RTT, which the proxy cannot read before the
// client's Finished).
type handshakeDropRelay struct {
	pc       net.PacketConn
	up       net.PacketConn
	withhold atomic.Bool
	mu       sync.Mutex
	client   net.Addr
	held     [][]byte // the proxy's datagrams, until released
	released bool
}

func newRelay(t *testing.T, to string) *handshakeDropRelay {
	server, err := net.ResolveUDPAddr("udp", to)
	if err != nil {
		t.Fatal(err)
	}
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	up, _ := net.ListenPacket("udp", "127.0.0.1:0")
	r := &handshakeDropRelay{pc: pc, up: up}
	t.Cleanup(func() { pc.Close(); up.Close() })
	go func() {
		b := make([]byte, 65536)
		for {
			n, addr, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.client = addr
			r.mu.Unlock()
			if r.withhold.Load() && hasHandshakePacket(b[:n]) {
				continue
			}
			up.WriteTo(b[:n], server)
		}
	}()
	go func() {
		b := make([]byte, 65536)
		for {
			n, _, err := up.ReadFrom(b)
			if err != nil {
				return
			}
			r.mu.Lock()
			if !r.released {
				r.held = append(r.held, bytes.Clone(b[:n]))
				r.mu.Unlock()
				continue
			}
			c := r.client
			r.mu.Unlock()
			pc.WriteTo(b[:n], c)
		}
	}()
	return r
}

// release sends the proxy's held datagrams to the client, and those after
// them at once.
func (r *handshakeDropRelay) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.held {
		r.pc.WriteTo(d, r.client)
	}
	r.held, r.released = nil, true
}

// releaseWhen calls release once cond holds (polled each millisecond),
// or when the test ends.
func (r *handshakeDropRelay) releaseWhen(t *testing.T, cond func() bool) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for !cond() {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
		r.release()
	}()
}

// hasHandshakePacket reports whether datagram d holds a Handshake packet
// among its coalesced long-header packets (RFC 9000, Section 12.2).
func hasHandshakePacket(d []byte) bool {
	for len(d) > 0 && wire.IsLongHeader(d[0]) {
		h, n, err := wire.ParseLongHeader(d)
		if err != nil {
			return false
		}
		if h.Type == wire.PacketTypeHandshake {
			return true
		}
		d = d[n+int(h.Length):]
	}
	return false
}

func (r *handshakeDropRelay) url(path string) string {
	return "https://" + r.pc.LocalAddr().String() + path
}

// earlyClient makes a client whose next connection to the proxy resumes
// a session with 0-RTT: a first request primes the session cache.
func earlyClient(t *testing.T, p *testProxy) *http.Client {
	t.Helper()
	cache := &notifyingCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), put: make(chan struct{}, 1)}
	tc := &tls.Config{RootCAs: p.pool, ServerName: "localhost", ClientSessionCache: cache}
	c, tr := p.h3(t, tc)
	get(t, c, p.url("/prime"), nil)
	// The session ticket may arrive after the response: closing before
	// it did would leave nothing to resume.
	select {
	case <-cache.put:
	case <-time.After(20 * time.Second):
		t.Fatal("no session ticket from the proxy")
	}
	tr.Close()
	c, _ = p.h3(t, tc)
	c.Transport.(*http3.Transport).Allow0RTT = true
	return c
}

// notifyingCache signals each session stored.
type notifyingCache struct {
	tls.ClientSessionCache
	put chan struct{}
}

func (c *notifyingCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.put <- struct{}{}:
		default:
		}
	}
}

// A GET received in 0-RTT is forwarded at once with "Early-Data: 1"
// (RFC 8470, Section 5.1): through a relay that keeps the client's
// Finished from the proxy, the response still arrives.
func TestProxyEarlyData(t *testing.T) {
	be := newBackend(t)
	p := startProxy(t, be.URL)
	c := earlyClient(t, p)
	relay := newRelay(t, p.addr)
	relay.withhold.Store(true)
	relay.releaseWhen(t, func() bool { return earlyRequests(be.requests()) == 1 })
	resp, body := get(t, c, relay.url("/early"), nil)
	if resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("0-RTT GET: %s %q", resp.Status, body)
	}
	r := be.requests()
	if last := r[len(r)-1]; last.Header.Get("Early-Data") != "1" {
		t.Errorf("the backend did not get Early-Data: 1: %v", last.Header)
	}
	if r[0].Header.Get("Early-Data") != "" {
		t.Errorf("a request after the handshake carried Early-Data")
	}
	if !strings.Contains(p.out.String(), `"GET /early HTTP/3.0" 200 2 "-"`) || !strings.Contains(p.out.String(), "early=1 retried=0") {
		t.Errorf("access log:\n%s", p.out)
	}
	closeThrough(c, relay)
}

// A backend that answers 425 (Too Early) to an early request gets it
// again once the client's handshake completed, without Early-Data
// (RFC 8470, Section 5.2); if the handshake does not complete in time,
// the client gets the 425.
func TestProxyTooEarly(t *testing.T) {
	be := newBackend(t)
	be.reply = func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Header.Get("Early-Data") == "1" {
			w.WriteHeader(http.StatusTooEarly)
			return
		}
		io.WriteString(w, "after the handshake")
	}
	p := startProxy(t, be.URL)
	c := earlyClient(t, p)
	relay := newRelay(t, p.addr)
	relay.withhold.Store(true)
	// Once the backend refused the early request, let the client's
	// Finished through: the client sends it again (PTO).
	relay.releaseWhen(t, func() bool {
		if earlyRequests(be.requests()) == 0 {
			return false
		}
		relay.withhold.Store(false)
		return true
	})
	resp, body := get(t, c, relay.url("/retry"), nil)
	if resp.StatusCode != 200 || body != "after the handshake" {
		t.Fatalf("GET: %s %q", resp.Status, body)
	}
	r := be.requests()
	if n := len(r); n < 3 || r[n-2].Header.Get("Early-Data") != "1" || r[n-1].Header.Get("Early-Data") != "" {
		t.Errorf("backend saw %d requests; the last two with Early-Data %q, %q", n, r[n-2].Header.Get("Early-Data"), r[n-1].Header.Get("Early-Data"))
	}
	if st := p.stats.snapshot(); st.TooEarlyRetried != 1 || st.Early != 1 {
		t.Errorf("stats %+v", st)
	}
	if !strings.Contains(p.out.String(), "early=1 retried=1") {
		t.Errorf("access log:\n%s", p.out)
	}
	closeThrough(c, relay)

	// The handshake never completes: the 425 goes back.
	defer func(d time.Duration) { tooEarlyWait = d }(tooEarlyWait)
	tooEarlyWait = 200 * time.Millisecond
	c = earlyClient(t, p)
	relay2 := newRelay(t, p.addr)
	relay2.withhold.Store(true)
	relay2.releaseWhen(t, func() bool { return earlyRequests(be.requests()) == 2 })
	c.Timeout = 3 * time.Second
	c.Get(relay2.url("/never")) // the client retries a 425 after its handshake, which never completes
	if st := p.stats.snapshot(); st.TooEarlyReturned != 1 {
		t.Errorf("stats %+v", st)
	}
	if !strings.Contains(p.out.String(), `"GET /never HTTP/3.0" 425 0`) {
		t.Errorf("access log:\n%s", p.out)
	}
	closeThrough(c, relay2)
}

// closeThrough closes the client's connections through a relay that lets
// everything pass again, so that the proxy learns at once that they
// ended, rather than at its handshake timeout or its shutdown's deadline.
func closeThrough(c *http.Client, r *handshakeDropRelay) {
	r.withhold.Store(false)
	r.release()
	c.Transport.(*http3.Transport).Close()
}

// earlyRequests counts the requests forwarded with Early-Data: 1.
func earlyRequests(reqs []seen) int {
	n := 0
	for _, r := range reqs {
		if r.Header.Get("Early-Data") == "1" {
			n++
		}
	}
	return n
}

// SIGHUP reloads the certificate: new connections get the new one, a
// connection made before keeps working.
func TestProxyCertificateReload(t *testing.T) {
	be := newBackend(t)
	dir := t.TempDir()
	certA, poolA, _ := certs.SelfSigned(certs.DefaultHosts...)
	certB, poolB, _ := certs.SelfSigned(certs.DefaultHosts...)
	certFile, keyFile := writeCert(t, dir, certA)
	p := startProxy(t, be.URL, "-cert", certFile, "-key", keyFile)
	pool := poolA.Clone()
	pool.AddCert(certB.Leaf)
	_ = poolB
	old, _ := p.h3(t, &tls.Config{RootCAs: pool})
	resp, _ := get(t, old, p.url("/"), nil)
	if !resp.TLS.PeerCertificates[0].Equal(certA.Leaf) {
		t.Fatal("not certificate A at first")
	}
	writeCert(t, dir, certB)
	p.hup <- syscallSIGHUP
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.errOut.String(), "certificate reloaded") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	fresh, _ := p.h3(t, &tls.Config{RootCAs: pool})
	resp, _ = get(t, fresh, p.url("/"), nil)
	if !resp.TLS.PeerCertificates[0].Equal(certB.Leaf) {
		t.Error("a new connection after SIGHUP did not get certificate B")
	}
	resp, _ = get(t, old, p.url("/"), nil)
	if resp.StatusCode != 200 || !resp.TLS.PeerCertificates[0].Equal(certA.Leaf) {
		t.Error("the connection made before the reload did not go on")
	}
	// A broken file keeps the certificate in use.
	os.WriteFile(certFile, []byte("garbage"), 0o644)
	if err := p.reload(); err == nil {
		t.Error("reloading garbage succeeded")
	}
	fresh2, _ := p.h3(t, &tls.Config{RootCAs: pool})
	if resp, _ = get(t, fresh2, p.url("/"), nil); !resp.TLS.PeerCertificates[0].Equal(certB.Leaf) {
		t.Error("a failed reload changed the certificate")
	}
}

// -stats serves the counters as JSON, with the QUIC Transport's.
func TestProxyStatsEndpoint(t *testing.T) {
	be := newBackend(t)
	p := startProxy(t, be.URL, "-stats", "127.0.0.1:0")
	h3, _ := p.h3(t, nil)
	get(t, h3, p.url("/"), nil)
	m := regexp.MustCompile(`statistics at (http://\S+/stats)`).FindStringSubmatch(p.out.String())
	if m == nil {
		t.Fatalf("no stats address in:\n%s", p.out)
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Requests map[string]uint64
		QUIC     map[string]any
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Requests["HTTP/3.0"] != 1 || st.QUIC == nil {
		t.Errorf("stats: %+v", st)
	}
}

// A backend that is down: 502, counted and logged to stderr.
func TestProxyBackendDown(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	p := startProxy(t, "http://"+addr)
	h3, _ := p.h3(t, nil)
	resp, _ := get(t, h3, p.url("/"), nil)
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %s", resp.Status)
	}
	if st := p.stats.snapshot(); st.BackendErrors != 1 || st.Statuses["5xx"] != 1 {
		t.Errorf("stats %+v", st)
	}
	if !strings.Contains(p.errOut.String(), "backend request failed") {
		t.Errorf("stderr:\n%s", p.errOut)
	}
}

func TestProxyUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"-backend", "ftp://x"}, {"-backend", "http://x", "-cert", "a"}, {"-backend", "http://x", "extra"}} {
		err := run(context.Background(), args, io.Discard, io.Discard, nil, nil)
		var ue interface{ Unwrap() error }
		if err == nil || !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// testHandshakeTimeout is the QUIC handshake timeout of the tests' proxies
// and clients: the default 5 s is too short on a loaded machine for a
// handshake that a relay holds up (TestProxyEarlyData).
const testHandshakeTimeout = 30 * time.Second

func TestMain(m *testing.M) {
	handshakeTimeout = testHandshakeTimeout
	os.Exit(m.Run())
}

// A client's own Early-Data field on a request that arrived in 0-RTT does
// not keep the proxy from marking it: "An intermediary that forwards a
// request prior to the completion of the TLS handshake with its client
// MUST send it with the Early-Data header field set to "1" (i.e., it adds
// it if not present in the request)" (RFC 8470, Section 5.1). A
// replayable request forwarded with "Early-Data: 0" reaches a backend
// that checks for "1" as if it were safe.
func TestProxyEarlyDataValueForced(t *testing.T) {
	be := newBackend(t)
	p := startProxy(t, be.URL)
	c := earlyClient(t, p)
	relay := newRelay(t, p.addr)
	relay.withhold.Store(true)
	// The priming request, then the early one.
	relay.releaseWhen(t, func() bool { return len(be.requests()) >= 2 })
	resp, body := get(t, c, relay.url("/early0"), http.Header{"Early-Data": {"0"}})
	if resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("0-RTT GET: %s %q", resp.Status, body)
	}
	r := be.requests()
	last := r[len(r)-1]
	if !strings.Contains(p.out.String(), "early=1") {
		t.Fatalf("the request did not arrive in 0-RTT; access log:\n%s", p.out)
	}
	if v := last.Header.Values("Early-Data"); len(v) != 1 || v[0] != "1" {
		t.Errorf("the backend got Early-Data %q for a request forwarded before the handshake completed, want [\"1\"]", v)
	}
	closeThrough(c, relay)
}

// A streamed body (past -max-buffer) longer than its Content-Length never
// reaches the backend as a complete request: "A request or response that
// is defined as having content when it contains a Content-Length header
// field is malformed if the value of the Content-Length header field does
// not equal the sum of the DATA frame lengths received." (RFC 9114,
// Section 4.1.2). The proxy must not hand the backend the last byte of
// the declared length before it knows the body ends there.
func TestProxyStreamedBodyLongerThanContentLength(t *testing.T) {
	for _, frames := range [][]int{{20, 40}, {60}} {
		be := newBackend(t)
		p := startProxy(t, be.URL, "-max-buffer", "10")
		_, port, _ := net.SplitHostPort(p.addr)
		raw := dialRawH3(t, p)
		s, err := raw.qc.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		fields := []qpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "https"},
			{Name: ":authority", Value: "localhost:" + port}, {Name: ":path", Value: "/"}, {Name: "content-length", Value: "20"}}
		block := raw.enc.EncodeFieldSection(nil, uint64(s.StreamID()), fields)
		b := appendVarint(appendVarint(nil, 0x01), uint64(len(block)))
		b = append(b, block...)
		for _, n := range frames {
			b = appendVarint(appendVarint(b, 0x00), uint64(n))
			b = append(b, strings.Repeat("y", n)...)
		}
		s.Write(b)
		s.CloseWrite()
		s.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.ReadAll(s) // a 400 or 502, or the stream reset
		for i := 0; len(be.requests()) == 0 && i < 500; i++ {
			time.Sleep(20 * time.Millisecond) // the backend may not see the request at all
		}
		for _, r := range be.requests() {
			if len(r.Body) == 20 {
				t.Errorf("DATA frames %v with Content-Length 20: the backend got a complete request (20-byte body)", frames)
			}
		}
	}
}
