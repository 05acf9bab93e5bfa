package http3

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

func TestRequestCancellation(t *testing.T) {
	handlerCancelled := make(chan string, 2)
	started := make(chan struct{}, 2)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/after-header" {
			io.WriteString(w, "first part")
			w.(http.Flusher).Flush()
		}
		started <- struct{}{}
		select {
		case <-r.Context().Done():
			handlerCancelled <- r.URL.Path
		case <-time.After(10 * time.Second):
			handlerCancelled <- "not cancelled"
		}
	}))
	// Cancelled while waiting for the response header.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/before-header", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := e.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip after cancel: %v", err)
	}
	if p := <-handlerCancelled; p != "/before-header" {
		t.Fatalf("handler: %s", p)
	}
	// Cancelled while reading the body.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "GET", e.url+"/after-header", nil)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first part" {
		t.Fatalf("first part: %q %v", buf, err)
	}
	cancel()
	if _, err := resp.Body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Fatalf("body read after cancel: %v", err)
	}
	resp.Body.Close()
	if p := <-handlerCancelled; p != "/after-header" {
		t.Fatalf("handler: %s", p)
	}
}

// TestCancelSendsRequestCancelled checks the code of the reset the server
// sees.
func TestCancelSendsRequestCancelled(t *testing.T) {
	codes := make(chan error, 1)
	started := make(chan struct{})
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		_, err := io.ReadAll(r.Body)
		codes <- err
	}))
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("some"))
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/", pr)
	go func() {
		<-started
		cancel()
	}()
	if _, err := e.client.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip: %v", err)
	}
	err := <-codes
	var se *quic.StreamError
	if !errors.As(err, &se) || ErrCode(se.Code) != ErrCodeRequestCancelled {
		t.Fatalf("server's body read: %v, want a reset with H3_REQUEST_CANCELLED", err)
	}
}

func TestTransparentGzip(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Accept-Encoding", r.Header.Get("Accept-Encoding"))
		if r.Header.Get("Accept-Encoding") != "gzip" {
			io.WriteString(w, "plain text")
			return
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		io.WriteString(zw, "compressed text")
		zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", fmt.Sprint(buf.Len()))
		w.Write(buf.Bytes())
	}))
	resp, b := e.get(t, "/")
	if string(b) != "compressed text" || !resp.Uncompressed || resp.Header.Get("Content-Encoding") != "" || resp.ContentLength != -1 {
		t.Fatalf("gzip: %q uncompressed=%v %v cl=%d", b, resp.Uncompressed, resp.Header, resp.ContentLength)
	}
	// The user's own Accept-Encoding: the body is left as sent.
	req, _ := http.NewRequest("GET", e.url+"/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Uncompressed || resp.Header.Get("Content-Encoding") != "gzip" || len(raw) < 2 || raw[0] != 0x1f {
		t.Fatalf("user's Accept-Encoding: %v %q", resp.Header, raw)
	}
	// DisableCompression.
	e.tr.DisableCompression = true
	resp, b = e.get(t, "/")
	if string(b) != "plain text" || resp.Header.Get("X-Accept-Encoding") != "" {
		t.Fatalf("DisableCompression: %q %v", b, resp.Header)
	}
}

func waitClosed(t *testing.T, qc *quic.Conn, what string) {
	t.Helper()
	select {
	case <-qc.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: connection still open", what)
	}
}

func TestIdleConnections(t *testing.T) {
	release := make(chan struct{})
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			w.(http.Flusher).Flush()
			<-release
		}
	}))
	// CloseIdleConnections spares a connection with a request in progress.
	resp, err := e.client.Get(e.url + "/hold")
	if err != nil {
		t.Fatal(err)
	}
	cc := e.conn(t)
	e.client.CloseIdleConnections()
	if cc.qc.Context().Err() != nil {
		t.Fatal("CloseIdleConnections closed a busy connection")
	}
	close(release)
	io.ReadAll(resp.Body)
	resp.Body.Close()
	e.client.CloseIdleConnections()
	waitClosed(t, cc.qc, "CloseIdleConnections")
	// A new request dials again.
	e.get(t, "/")
	// IdleConnTimeout.
	e.tr.IdleConnTimeout = 200 * time.Millisecond
	e.tr.CloseIdleConnections()
	e.get(t, "/")
	waitClosed(t, e.conn(t).qc, "IdleConnTimeout")
	e.tr.IdleConnTimeout = 0
	if _, b := e.get(t, "/"); len(b) != 0 {
		t.Fatal(b)
	}
}

func TestServerIdleTimeout(t *testing.T) {
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), func(s *Server) {
		s.IdleTimeout = 200 * time.Millisecond
	})
	e.get(t, "/")
	waitClosed(t, e.conn(t).qc, "Server.IdleTimeout")
	e.get(t, "/") // a new connection
}

func TestNewConnectionAtStreamLimit(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	remotes := map[string]bool{}
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes[r.RemoteAddr] = true
		mu.Unlock()
		w.(http.Flusher).Flush()
		<-release
	}), func(s *Server) { s.QUICConfig = &quic.Config{MaxIncomingStreams: 2} })
	var resps []*http.Response
	for i := 0; i < 5; i++ {
		resp, err := e.client.Get(e.url + "/")
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, resp)
	}
	close(release)
	for _, resp := range resps {
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(remotes) != 3 {
		t.Fatalf("5 concurrent requests, 2 streams per connection: %d connections, want 3", len(remotes))
	}
}

func TestZeroRTT(t *testing.T) {
	cert, pool := testCert(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var mu sync.Mutex
	var methods []string
	tooEarly := false // a 425 was sent
	srv := &Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			methods = append(methods, r.Method+" "+r.URL.Path)
			// As RFC 8470 servers do: 425 for a request that arrived
			// before the handshake completed.
			refuse := r.URL.Path == "/too-early" && !r.TLS.HandshakeComplete
			if refuse {
				tooEarly = true
			}
			mu.Unlock()
			io.Copy(io.Discard, r.Body)
			if refuse {
				w.WriteHeader(http.StatusTooEarly)
				return
			}
			io.WriteString(w, r.Method+" ok")
		}),
		TLSConfig:  &tls.Config{Certificates: []tls.Certificate{cert}},
		QUICConfig: &quic.Config{Allow0RTT: true},
	}
	go srv.Serve(pc)
	defer srv.Close()
	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}, Allow0RTT: true}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	url := "https://" + pc.LocalAddr().String()
	do := func(method string, path ...string) (string, *clientConn) {
		t.Helper()
		req, _ := http.NewRequest(method, url+strings.Join(path, ""), bytes.NewReader([]byte("x")))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.mu.Lock()
		cc := tr.conns[pc.LocalAddr().String()].cc
		tr.mu.Unlock()
		return string(b), cc
	}
	b, cc := do("GET")
	if b != "GET ok" || cc.qc.ConnectionState().Used0RTT {
		t.Fatalf("first connection: %q, 0-RTT %v", b, cc.qc.ConnectionState().Used0RTT)
	}
	// Wait for the session ticket (sent after the handshake).
	for i := 0; ; i++ {
		tr.mu.Lock()
		// Sessions are kept per QUIC version (RFC 9369, Section 5).
		_, ok := tr.sessions.Get("localhost|" + cc.qc.ConnectionState().Version.String())
		tr.mu.Unlock()
		if ok {
			break
		}
		if i == 500 {
			t.Fatal("no session ticket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tr.CloseIdleConnections()
	waitClosed(t, cc.qc, "CloseIdleConnections")
	b, cc2 := do("GET")
	<-cc2.qc.HandshakeComplete()
	if b != "GET ok" || cc2 == cc || !cc2.qc.ConnectionState().Used0RTT {
		t.Fatalf("resumed connection: %q, 0-RTT %v", b, cc2.qc.ConnectionState().Used0RTT)
	}
	// A POST on a fresh resumed connection waits for the handshake: the
	// server answers it (no 425).
	tr.CloseIdleConnections()
	waitClosed(t, cc2.qc, "CloseIdleConnections")
	b, cc3 := do("POST")
	if b != "POST ok" {
		t.Fatalf("POST: %q", b)
	}
	// A 425 (Too Early) answer to a request sent in 0-RTT: the Transport
	// sends it again after the handshake (RFC 8470, Section 5.2).
	tr.CloseIdleConnections()
	waitClosed(t, cc3.qc, "CloseIdleConnections")
	if b, _ := do("GET", "/too-early"); b != "GET ok" {
		t.Fatalf("after 425: %q", b)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "[GET / GET / POST / GET /too-early]"
	if tooEarly {
		want = "[GET / GET / POST / GET /too-early GET /too-early]"
	} else {
		t.Log("the request after 425 arrived after the handshake: no 425 to retry")
	}
	if got := fmt.Sprint(methods); got != want {
		t.Fatalf("server saw %v, want %v", got, want)
	}
}

// conn returns the Transport's current connection to the test server.
func (e *testEnv) conn(t *testing.T) *clientConn {
	t.Helper()
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	call := e.tr.conns[e.addr]
	if call == nil || call.cc == nil {
		t.Fatal("no connection")
	}
	return call.cc
}

// Transport.Dial makes the connections: here from a quic.Transport of
// the test's own, with GSO and GRO off, dialing early so that the second
// connection's GET goes out in 0-RTT.
func TestTransportDial(t *testing.T) {
	cert, pool := testCert(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	srv := &Server{
		Handler:    http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }),
		TLSConfig:  &tls.Config{Certificates: []tls.Certificate{cert}},
		QUICConfig: &quic.Config{Allow0RTT: true},
	}
	go srv.Serve(pc)
	defer srv.Close()
	cpc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer cpc.Close()
	qtr := &quic.Transport{Conn: cpc, DisableGSO: true, DisableGRO: true}
	defer qtr.Close()
	var mu sync.Mutex
	var dials []string
	tr := &Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		Allow0RTT:       true,
		Dial: func(ctx context.Context, addr string, tc *tls.Config, conf *quic.Config) (*quic.Conn, error) {
			mu.Lock()
			dials = append(dials, fmt.Sprintf("%s %s %v", addr, tc.ServerName, tc.NextProtos))
			mu.Unlock()
			ua, err := net.ResolveUDPAddr("udp", addr)
			if err != nil {
				return nil, err
			}
			return qtr.DialEarly(ctx, ua, tc, conf)
		},
	}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	url := "https://localhost:" + fmt.Sprint(pc.LocalAddr().(*net.UDPAddr).Port) + "/"
	get := func() *clientConn {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello" {
			t.Fatalf("body %q", b)
		}
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for cc := range tr.all {
			return cc
		}
		t.Fatal("no connection")
		return nil
	}
	cc := get()
	if cc.qc.LocalAddr().String() != cpc.LocalAddr().String() {
		t.Fatalf("connection from %v, not from the Transport Dial used (%v)", cc.qc.LocalAddr(), cpc.LocalAddr())
	}
	// Wait for the session ticket, then reconnect: 0-RTT.
	for i := 0; !hasSession(tr.sessionCache(), "localhost|"+cc.qc.ConnectionState().Version.String()); i++ {
		if i == 500 {
			t.Fatal("no session ticket in the Transport's session cache")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tr.CloseIdleConnections()
	waitClosed(t, cc.qc, "CloseIdleConnections")
	cc2 := get()
	<-cc2.qc.HandshakeComplete()
	if !cc2.qc.ConnectionState().Used0RTT {
		t.Error("the second connection, dialed early by Dial, did not use 0-RTT")
	}
	want := fmt.Sprintf("localhost:%d localhost [h3]", pc.LocalAddr().(*net.UDPAddr).Port)
	mu.Lock()
	defer mu.Unlock()
	if len(dials) != 2 || dials[0] != want || dials[1] != want {
		t.Errorf("Dial calls %q; want two of %q", dials, want)
	}
}

func hasSession(c tls.ClientSessionCache, key string) bool {
	_, ok := c.Get(key)
	return ok
}
