package http3

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// testCert makes a self-signed certificate for localhost and 127.0.0.1.
func testCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// testEnv is the package's one harness for tests over real sockets: an
// HTTP/3 server on 127.0.0.1 (a Server, or with newRawServer a test's
// function answering raw frames) and a client Transport and http.Client
// for it; rawConn adds a bare HTTP/3 connection. Everything is closed at
// cleanup.
type testEnv struct {
	srv    *Server // nil for a raw server
	tr     *Transport
	client *http.Client
	url    string
	addr   string
	pool   *x509.CertPool
	served chan error
}

// newTestEnv starts a Server with h on 127.0.0.1 and a client for it.
func newTestEnv(t testing.TB, h http.Handler) *testEnv {
	return newTestEnvWith(t, h, nil)
}

// newTestEnvWith is newTestEnv with the server changed by setup (called
// before it listens) if not nil.
func newTestEnvWith(t testing.TB, h http.Handler, setup func(*Server)) *testEnv {
	t.Helper()
	cert, pool := testCert(t)
	srv := &Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	if setup != nil {
		setup(srv)
	}
	l, err := quic.ListenAddr("127.0.0.1:0", srv.tlsConfig(), srv.quicConfig())
	if err != nil {
		t.Fatal(err)
	}
	e := newTestClient(t, l, pool)
	e.srv = srv
	go func() { e.served <- srv.ServeListener(l) }()
	return e
}

// newTestClient makes the client half of a testEnv for the server
// listening on l, whose certificate pool is pool. At cleanup the client
// closes first, then e.srv if the caller set it, then l.
func newTestClient(t testing.TB, l *quic.Listener, pool *x509.CertPool) *testEnv {
	e := &testEnv{addr: l.Addr().String(), pool: pool, served: make(chan error, 1)}
	e.tr = &Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	e.client = &http.Client{Transport: e.tr, Timeout: 30 * time.Second}
	e.url = "https://" + e.addr
	t.Cleanup(func() {
		e.tr.Close()
		if e.srv != nil {
			e.srv.Close()
		}
		l.Close()
	})
	return e
}

func (e *testEnv) get(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	resp, err := e.client.Get(e.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestGetSmallAndLarge(t *testing.T) {
	large := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Proto != "HTTP/3.0" || r.Host != e0(r) {
			w.WriteHeader(500)
			return
		}
		switch r.URL.Path {
		case "/small":
			w.Header().Set("X-Test", "yes")
			io.WriteString(w, "hello, h3")
		case "/large":
			w.Header().Set("Content-Length", fmt.Sprint(len(large)))
			w.Write(large)
		default:
			http.NotFound(w, r)
		}
	}))
	resp, b := e.get(t, "/small")
	if resp.StatusCode != 200 || string(b) != "hello, h3" || resp.Header.Get("X-Test") != "yes" || resp.Proto != "HTTP/3.0" {
		t.Fatalf("small: %d %q %v", resp.StatusCode, b, resp.Header)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("sniffed content type %q", ct)
	}
	resp, b = e.get(t, "/large")
	if resp.StatusCode != 200 || !bytes.Equal(b, large) || resp.ContentLength != int64(len(large)) {
		t.Fatalf("large: %d, %d bytes, content-length %d", resp.StatusCode, len(b), resp.ContentLength)
	}
	resp, _ = e.get(t, "/missing")
	if resp.StatusCode != 404 {
		t.Fatalf("missing: %d", resp.StatusCode)
	}
}

// e0 returns the host the client is expected to send.
func e0(r *http.Request) string { return r.Host }

func TestPostEcho(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Length", fmt.Sprint(r.ContentLength))
		io.Copy(w, r.Body)
	}))
	payload := bytes.Repeat([]byte("post body "), 100000)
	resp, err := e.client.Post(e.url+"/echo", "application/octet-stream", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(b, payload) {
		t.Fatalf("echo: %d bytes, %v", len(b), err)
	}
	if got := resp.Header.Get("X-Content-Length"); got != fmt.Sprint(len(payload)) {
		t.Errorf("server saw content-length %s", got)
	}
	// A body of unknown length (a pipe).
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < 10; i++ {
			fmt.Fprintf(pw, "chunk %d\n", i)
		}
		pw.Close()
	}()
	resp, err = e.client.Post(e.url+"/echo", "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(b), "chunk 0\n") || !strings.HasSuffix(string(b), "chunk 9\n") {
		t.Fatalf("streamed echo %q", b)
	}
}

func TestConcurrentRequests(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		io.WriteString(w, r.URL.Path)
	}))
	// Warm up so that all requests share one connection.
	e.get(t, "/warmup")
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("/req/%d", i)
			resp, err := e.client.Get(e.url + p)
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != p || resp.Header.Get("X-Path") != p {
				errs <- fmt.Errorf("%s: got %q %v", p, b, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.tr.mu.Lock()
	n := len(e.tr.conns)
	e.tr.mu.Unlock()
	if n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestStreamingFlush(t *testing.T) {
	next := make(chan struct{})
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "event %d\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}))
	resp, err := e.client.Get(e.url + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i := 0; i < 3; i++ {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("event %d\n", i) {
			t.Fatalf("line %d: %q %v", i, line, err)
		}
		next <- struct{}{} // the server waits for this: the line was flushed
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after events: %v", err)
	}
}

func TestTrailers(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Trailer", "X-Sum")
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
		io.WriteString(w, "body")
		w.Header().Set("X-Sum", "r:"+r.Trailer.Get("X-Req"))
	}))
	req, _ := http.NewRequest("POST", e.url+"/t", strings.NewReader("data"))
	req.Trailer = http.Header{"X-Req": {"v1"}}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Trailer.Get("X-Sum") != "r:v1" || resp.Trailer.Get("X-Late") != "late" {
		t.Fatalf("trailers %v", resp.Trailer)
	}
}

// rawConn dials the server with a bare HTTP/3 connection so a test can
// send what the Transport never would.
func rawConn(t testing.TB, e *testEnv) *clientConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, e.addr, &tls.Config{RootCAs: e.pool, ServerName: "localhost", NextProtos: []string{"h3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	cc := &clientConn{connection: newConnection(qc, false, 0)}
	if err := cc.start(); err != nil {
		t.Fatal(err)
	}
	return cc
}

// sendRaw sends a request with the given fields and returns the response
// status or the stream error code.
func sendRaw(t *testing.T, cc *clientConn, fields []qpack.HeaderField, data []byte) (int, ErrCode) {
	t.Helper()
	// Bounds for a hung test, not timings: a 1 MiB field section under
	// -race on a loaded machine took over 5 s to answer.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	str, err := cc.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cc.encodeHeaders(str.StreamID(), fields)
	if err != nil {
		t.Fatal(err)
	}
	str.Write(append(b, data...))
	str.CloseWrite()
	str.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(str)
	f, err := readFrame(br)
	if err != nil {
		var se *quic.StreamError
		if errors.As(err, &se) {
			return 0, ErrCode(se.Code)
		}
		t.Fatalf("reading response: %v", err)
	}
	fs, err := cc.decodeHeaders(ctx, str.StreamID(), f.Payload, nil)
	if err != nil {
		t.Fatal(err)
	}
	var status int
	fmt.Sscan(fs[0].Value, &status)
	return status, 0
}

func TestMalformedRequests(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(204)
	}))
	cc := rawConn(t, e)
	hf := func(kv ...string) []qpack.HeaderField {
		var fs []qpack.HeaderField
		for i := 0; i < len(kv); i += 2 {
			fs = append(fs, qpack.HeaderField{Name: kv[i], Value: kv[i+1]})
		}
		return fs
	}
	good := []string{":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "/"}
	with := func(extra ...string) []qpack.HeaderField { return hf(append(append([]string{}, good...), extra...)...) }
	if status, code := sendRaw(t, cc, with(), nil); status != 204 {
		t.Fatalf("valid request: status %d code %v", status, code)
	}
	for name, fields := range map[string][]qpack.HeaderField{
		"uppercase name":     with("X-Upper", "1"),
		"connection header":  with("connection", "close"),
		"transfer-encoding":  with("transfer-encoding", "chunked"),
		"te not trailers":    with("te", "gzip"),
		"missing method":     hf(":scheme", "https", ":authority", "a", ":path", "/"),
		"missing path":       hf(":method", "GET", ":scheme", "https", ":authority", "a"),
		"empty path":         hf(":method", "GET", ":scheme", "https", ":authority", "a", ":path", ""),
		"missing authority":  hf(":method", "GET", ":scheme", "https", ":path", "/"),
		"pseudo after":       hf(":method", "GET", ":scheme", "https", "x", "y", ":authority", "a", ":path", "/"),
		"duplicate pseudo":   with(":path", "/again"),
		"response pseudo":    with(":status", "200"),
		"unknown pseudo":     with(":foo", "bar"),
		"connect with path":  hf(":method", "CONNECT", ":authority", "a:443", ":path", "/"),
		"bad value":          with("x", "a\nb"),
		"bad content-length": with("content-length", "x"),
	} {
		status, code := sendRaw(t, cc, fields, nil)
		if code != ErrCodeMessageError {
			t.Errorf("%s: status %d, code %v; want H3_MESSAGE_ERROR", name, status, code)
		}
	}
	// Content-length disagreeing with the DATA frames.
	data := append(appendDataFrameHeader(nil, 3), "abc"...)
	if status, code := sendRaw(t, cc, with("content-length", "5"), data); code != ErrCodeMessageError {
		t.Errorf("content-length mismatch: status %d code %v", status, code)
	}
	// The connection survives stream errors.
	if status, _ := sendRaw(t, cc, with(), nil); status != 204 {
		t.Fatalf("after malformed requests: status %d", status)
	}
}

// TestShutdownResponseWrittenNotRead: a request stops counting for
// Shutdown when its handler returns (the worker no longer waits for the
// response's acknowledgement, issue 28); the graceful close must still
// deliver a response the handler wrote in full but the client has not
// read yet: Conn.WaitAcked in closeAfterGoaway covers it.
func TestShutdownResponseWrittenNotRead(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 16<<10) // 256 KiB
	returned := make(chan struct{}, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(body)
		if r.URL.Path == "/big" {
			defer func() { returned <- struct{}{} }()
		}
	}))
	e.get(t, "/first")
	resp, err := e.client.Get(e.url + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-returned
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- e.srv.Shutdown(ctx)
	}()
	got, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d of %d bytes, %v", len(got), len(body), err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestShutdownGoaway(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
		}
		io.WriteString(w, "done "+r.URL.Path)
	}))
	e.get(t, "/first")
	cc := e.tr.conns[e.addr].cc
	goaway := make(chan uint64, 1)
	cc.mu.Lock()
	cc.onGoaway = func(id uint64) { goaway <- id }
	cc.mu.Unlock()

	result := make(chan string, 1)
	go func() {
		resp, err := e.client.Get(e.url + "/slow")
		if err != nil {
			result <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		result <- string(b)
	}()
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- e.srv.Shutdown(ctx)
	}()
	select {
	case id := <-goaway:
		if id != 8 { // streams 0 and 4 were accepted
			t.Errorf("GOAWAY ID %d, want 8", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no GOAWAY")
	}
	if cc.usable() {
		t.Error("connection still usable after GOAWAY")
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if got := <-result; got != "done /slow" {
		t.Fatalf("in-flight request: %q", got)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-e.served; err != ErrServerClosed {
		t.Fatalf("Serve returned %v", err)
	}
}
