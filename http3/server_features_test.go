package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

func TestHeadAndContentLength(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello, world")
	}))
	resp, err := e.client.Head(e.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != 12 {
		t.Fatalf("HEAD: %d, body %q, content-length %d", resp.StatusCode, b, resp.ContentLength)
	}
	// A GET of the same short body carries its Content-Length too.
	resp, b = e.get(t, "/")
	if string(b) != "hello, world" || resp.ContentLength != 12 {
		t.Fatalf("GET: %q, content-length %d", b, resp.ContentLength)
	}
}

func TestEarlyHints(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Add("Link", "</app.js>; rel=preload; as=script")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("X-Final", "1")
		io.WriteString(w, "page")
	}))
	var got []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		got = append(got, strings.Join(h["Link"], " | "))
		if code != http.StatusEarlyHints {
			t.Errorf("interim status %d", code)
		}
		return nil
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", e.url+"/", nil)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "page" || resp.Header.Get("X-Final") != "1" {
		t.Fatalf("final response %d %q %v", resp.StatusCode, b, resp.Header)
	}
	want := []string{"</style.css>; rel=preload; as=style", "</style.css>; rel=preload; as=style | </app.js>; rel=preload; as=script"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("103 responses %q, want %q", got, want)
	}
	// An error from Got1xxResponse aborts the request.
	stop := errors.New("stop")
	trace = &httptrace.ClientTrace{Got1xxResponse: func(int, textproto.MIMEHeader) error { return stop }}
	req, _ = http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", e.url+"/", nil)
	if _, err := e.client.Do(req); !errors.Is(err, stop) {
		t.Fatalf("Got1xxResponse error: RoundTrip returned %v", err)
	}
}

func TestResponseControllerDeadlines(t *testing.T) {
	type result struct {
		err     error
		timeout bool
	}
	results := make(chan result, 1)
	gotHeader := make(chan struct{}) // the client has the /write response's header
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		switch r.URL.Path {
		case "/read":
			if err := rc.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
				results <- result{err: err}
				return
			}
			_, err := io.ReadAll(r.Body)
			var ne net.Error
			results <- result{err: err, timeout: errors.As(err, &ne) && ne.Timeout()}
			w.WriteHeader(http.StatusRequestTimeout)
		case "/write":
			if err := rc.EnableFullDuplex(); err != nil {
				results <- result{err: err}
				return
			}
			if err := rc.Flush(); err != nil { // sends the header
				results <- result{err: err}
				return
			}
			// The deadline starts once the client has the header: on a
			// busy machine it could otherwise expire, and reset the
			// stream, before the header arrives.
			<-gotHeader
			rc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			chunk := make([]byte, 64<<10)
			var err error
			for i := 0; i < 1000 && err == nil; i++ { // far beyond the flow-control windows
				if _, err = w.Write(chunk); err == nil {
					err = rc.Flush()
				}
			}
			var ne net.Error
			results <- result{err: err, timeout: errors.As(err, &ne) && ne.Timeout()}
		}
	}))
	// The client never ends its body: the handler's read times out.
	pr, pw := io.Pipe()
	defer pw.Close()
	pw2 := pw
	go pw2.Write([]byte("partial"))
	resp, err := e.client.Post(e.url+"/read", "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := <-results
	if resp.StatusCode != http.StatusRequestTimeout || !r.timeout {
		t.Fatalf("read deadline: status %d, handler's error %v", resp.StatusCode, r.err)
	}
	// The client does not read the response: the handler's writes time
	// out.
	resp, err = e.client.Get(e.url + "/write")
	if err != nil {
		t.Fatal(err)
	}
	close(gotHeader)
	r = <-results
	resp.Body.Close()
	if !r.timeout {
		t.Fatalf("write deadline: handler's error %v", r.err)
	}
}

func TestMaxBytesReader(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1000)
		_, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, "ok")
	}))
	resp, err := e.client.Post(e.url+"/", "application/octet-stream", bytes.NewReader(make([]byte, 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "too large") {
		t.Fatalf("1 MB through MaxBytesReader(1000): %d %q", resp.StatusCode, b)
	}
	resp, err = e.client.Post(e.url+"/", "text/plain", strings.NewReader("small"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("small body: %d %q", resp.StatusCode, b)
	}
}

func TestHandlerPanicResetsOnlyItsStream(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic("handler bug")
		}
		io.WriteString(w, "fine")
	}))
	e.get(t, "/before")
	cc := e.tr.conns[e.addr].cc
	resp, err := e.client.Get(e.url + "/panic")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "H3_INTERNAL_ERROR") && !strings.Contains(err.Error(), "0x102") {
		t.Fatalf("panicking handler: %v", err)
	}
	if _, b := e.get(t, "/after"); string(b) != "fine" {
		t.Fatalf("after the panic: %q", b)
	}
	if e.tr.conns[e.addr].cc != cc {
		t.Fatal("the panic cost the connection")
	}
}

// freeUDPAddr returns a loopback UDP address with a port that was free.
func freeUDPAddr(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return addr
}

// writeCertFiles writes cert as PEM files and returns their names.
func writeCertFiles(t *testing.T, cert tls.Certificate) (certFile, keyFile string) {
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	return certFile, keyFile
}

func TestListenAndServeTLSAndServePacketConn(t *testing.T) {
	cert, pool := testCert(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "via "+r.URL.Path) })
	certFile, keyFile := writeCertFiles(t, cert)
	addr := freeUDPAddr(t)
	srv1 := &Server{Addr: addr, Handler: h}
	done1 := make(chan error, 1)
	go func() { done1 <- srv1.ListenAndServeTLS(certFile, keyFile) }()

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	srv2 := &Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	done2 := make(chan error, 1)
	go func() { done2 <- srv2.Serve(pc) }()

	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, u := range []string{"https://" + addr + "/tls-files", "https://" + pc.LocalAddr().String() + "/packetconn"} {
		var resp *http.Response
		for i := 0; i < 50; i++ { // ListenAndServeTLS may not be listening yet
			if resp, err = c.Get(u); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(string(b), "via /") {
			t.Fatalf("%s: %q", u, b)
		}
	}
	srv1.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr.Close()
	if err := srv2.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done1; err != ErrServerClosed {
		t.Errorf("ListenAndServeTLS returned %v", err)
	}
	if err := <-done2; err != ErrServerClosed {
		t.Errorf("Serve returned %v", err)
	}
	// Serve leaves the socket to its owner.
	if _, err := pc.WriteTo([]byte("x"), pc.LocalAddr()); err != nil {
		t.Errorf("Serve closed the PacketConn: %v", err)
	}
}

func TestFieldSectionSizeLimits(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := r.URL.Query().Get("big"); n != "" {
			w.Header().Set("X-Big", strings.Repeat("b", 5000))
		}
		io.WriteString(w, "ok")
	}))
	// The server's limit: 1 MiB by default; a request header above it gets
	// 431 (sent raw: our Transport would refuse to send it once it knows
	// the server's SETTINGS).
	cc := rawConn(t, e)
	fields := []qpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "localhost"}, {Name: ":path", Value: "/"}, {Name: "x-huge", Value: strings.Repeat("h", 1<<20)}}
	if status, code := sendRaw(t, cc, fields, nil); status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("huge request header: status %d, code %v", status, code)
	}
	// A client advertising a 1 KiB limit: the server does not send its
	// 5 KB header (RFC 9114, Section 4.2.2) and answers 500 instead.
	tr := &Transport{TLSClientConfig: e.tr.TLSClientConfig, MaxResponseHeaderBytes: 1024}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := c.Get(e.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("small response: %d", resp.StatusCode)
	}
	// The server has the client's SETTINGS (deterministically, for the
	// test) before it answers.
	e.srv.mu.Lock()
	var scs []*serverConn
	for sc := range e.srv.conns {
		scs = append(scs, sc)
	}
	e.srv.mu.Unlock()
	for _, sc := range scs {
		if sc.qc.Context().Err() == nil {
			<-sc.peerSettingsDone
		}
	}
	resp, err = c.Get(e.url + "/?big=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("X-Big") != "" {
		t.Fatalf("response header above the client's limit: %d %d bytes", resp.StatusCode, len(resp.Header.Get("X-Big")))
	}
	// The client honours the server's limit too: a server advertising
	// 2 KiB never sees the oversized request.
	e.srv.mu.Lock()
	e.srv.MaxHeaderBytes = 2048
	e.srv.mu.Unlock()
	tr2 := &Transport{TLSClientConfig: e.tr.TLSClientConfig}
	defer tr2.Close()
	c2 := &http.Client{Transport: tr2, Timeout: 10 * time.Second}
	if resp, err := c2.Get(e.url + "/"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	<-tr2.conns[e.addr].cc.peerSettingsDone
	if got := tr2.conns[e.addr].cc.peerMaxFieldSectionSize(); got != 2048 {
		t.Fatalf("server's SETTINGS_MAX_FIELD_SECTION_SIZE %d", got)
	}
	req, _ := http.NewRequest("GET", e.url+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("c", 4000))
	if _, err := c2.Do(req); !errors.Is(err, errFieldSectionTooLarge) {
		t.Fatalf("request header above the server's limit: %v", err)
	}
}

func TestInvalidRequestFieldsRejected(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, h := range []http.Header{
		{"Bad Name": {"x"}},
		{"X-Ok": {"line\nbreak"}},
	} {
		req, _ := http.NewRequest("GET", e.url+"/", nil)
		req.Header = h
		if _, err := e.client.Do(req); err == nil || !strings.Contains(err.Error(), "invalid header field") {
			t.Errorf("header %q: %v", h, err)
		}
	}
}

func TestExpectContinue(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/read" {
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, string(b))
			return
		}
		w.WriteHeader(http.StatusForbidden) // refuses without reading
	}))
	for _, timeout := range []time.Duration{0, 10 * time.Second} {
		// With ExpectContinueTimeout the client holds the body back until
		// the 100, and does not send it at all after a final response.
		e.tr.ExpectContinueTimeout = timeout
		for _, tc := range []struct {
			path   string
			cont   bool
			status int
		}{{"/read", true, 200}, {"/refuse", false, 403}} {
			got := false
			trace := &httptrace.ClientTrace{Got100Continue: func() { got = true }}
			body := &readTracker{r: strings.NewReader("payload")}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", e.url+tc.path, body)
			req.Header.Set("Expect", "100-continue")
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || got != tc.cont || tc.cont && string(b) != "payload" {
				t.Errorf("timeout %v, %s: status %d %q, 100 Continue %v", timeout, tc.path, resp.StatusCode, b, got)
			}
			if timeout > 0 && !tc.cont && body.read.Load() {
				t.Errorf("timeout %v, %s: body read after a final response", timeout, tc.path)
			}
		}
	}
}

// readTracker records whether its reader was read.
type readTracker struct {
	r    io.Reader
	read atomic.Bool
}

func (r *readTracker) Read(p []byte) (int, error) {
	r.read.Store(true)
	return r.r.Read(p)
}

func TestHandlerContentLength(t *testing.T) {
	writeErr := make(chan error, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		switch r.URL.Path {
		case "/more":
			_, err := io.WriteString(w, "toolong")
			writeErr <- err
		case "/less":
			io.WriteString(w, "abc")
			w.(http.Flusher).Flush()
		}
	}))
	// Writing past the declared length fails; a response shorter than
	// its Content-Length is reset (H3_INTERNAL_ERROR) rather than sent
	// malformed (RFC 9114, Section 4.1.2).
	for _, path := range []string{"/more", "/less"} {
		resp, err := e.client.Get(e.url + path)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		var se *quic.StreamError
		if !errors.As(err, &se) || ErrCode(se.Code) != ErrCodeInternalError {
			t.Errorf("%s: client got %v, want a reset with H3_INTERNAL_ERROR", path, err)
		}
	}
	if err := <-writeErr; err != http.ErrContentLength {
		t.Fatalf("writing past Content-Length: %v", err)
	}
}
