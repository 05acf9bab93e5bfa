package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// captureGlobalLog sends package log's and slog.Default's output to a
// buffer for the test's duration.
func captureGlobalLog(t *testing.T) *syncBuffer {
	var b syncBuffer
	prevOut, prevSlog := log.Writer(), slog.Default()
	log.SetOutput(&b)
	slog.SetDefault(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { log.SetOutput(prevOut); slog.SetDefault(prevSlog) })
	return &b
}

// A handler's panic reaches Server.Logger at level Error with the panic
// value, the request and the stack, as net/http logs it; the client sees
// the stream reset with H3_INTERNAL_ERROR, named in the error. A panic
// with http.ErrAbortHandler is not logged. Nothing goes to the global
// loggers, with or without a Logger.
func TestServerLoggerHandlerPanic(t *testing.T) {
	global := captureGlobalLog(t)
	var logs syncBuffer
	mux := http.NewServeMux()
	mux.HandleFunc("/boom", func(http.ResponseWriter, *http.Request) { panicInHandler() })
	mux.HandleFunc("/abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	e := newTestEnvWith(t, mux, func(s *Server) {
		s.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	_, err := e.client.Get(e.url + "/boom?x=1")
	if err == nil || !strings.Contains(err.Error(), "H3_INTERNAL_ERROR") {
		t.Errorf("client error %v, want one naming H3_INTERNAL_ERROR", err)
	}
	if _, err := e.client.Get(e.url + "/abort"); err == nil {
		t.Error("aborted request succeeded")
	}
	out := logs.String()
	for _, want := range []string{"level=ERROR", "panic serving", "kaboom", "uri=\"/boom?x=1\"", "method=GET", "panicInHandler", "server_log_test.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "/abort") || strings.Contains(out, http.ErrAbortHandler.Error()) {
		t.Errorf("http.ErrAbortHandler was logged:\n%s", out)
	}
	// Without a Logger: nothing anywhere.
	e2 := newTestEnv(t, mux)
	if _, err := e2.client.Get(e2.url + "/boom"); err == nil {
		t.Error("panicking request succeeded")
	}
	if g := global.String(); g != "" {
		t.Errorf("the global loggers got: %s", g)
	}
}

//go:noinline
func panicInHandler() { panic("kaboom") }

// A connection the server closes because the peer broke the protocol is
// logged at level Warn with the code's name.
func TestServerLoggerConnectionError(t *testing.T) {
	var logs syncBuffer
	e := newTestEnvWith(t, http.NotFoundHandler(), func(s *Server) {
		s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	qc := bareConn(t, e)
	openUni(t, qc, appendIDFrame(appendVarint(nil, streamTypeControl), frameGoaway, 0), false)
	if code := closeCode(t, qc); code != ErrCodeMissingSettings {
		t.Fatalf("closed with %v", code)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "H3_MISSING_SETTINGS") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "H3_MISSING_SETTINGS") {
		t.Errorf("log:\n%s", out)
	}
}

// Requests rejected at MaxConcurrentHandlers are logged, at most once a
// second.
func TestServerLoggerRejected(t *testing.T) {
	var logs syncBuffer
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}), func(s *Server) {
		s.MaxConcurrentHandlers = 1
		s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	defer close(release)
	go e.client.Get(e.url + "/held")
	<-started
	qc := bareConn(t, e)
	for range 3 {
		s, err := qc.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte{0})
		s.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := s.Read(make([]byte, 1)); h3Code(err) != ErrCodeRequestRejected {
			t.Fatalf("stream: %v, want H3_REQUEST_REJECTED", err)
		}
	}
	if n := strings.Count(logs.String(), "MaxConcurrentHandlers reached"); n != 1 {
		t.Errorf("%d messages for 3 rejections in a burst, want 1:\n%s", n, logs.String())
	}
}

// A connection closed with an HTTP/3 code fails the request with an error
// naming the code (not its number) that unwraps to *quic.ApplicationError.
func TestConnectionCloseErrorNamesCode(t *testing.T) {
	rs := newRawServer(t, func(s *rawStream) {
		s.c.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeInternalError), "going away")
	})
	_, err := rs.client.Get(rs.url + "/")
	var ae *quic.ApplicationError
	if err == nil || !errors.As(err, &ae) || ErrCode(ae.Code) != ErrCodeInternalError {
		t.Fatalf("error %v, want a *quic.ApplicationError of H3_INTERNAL_ERROR", err)
	}
	if s := err.Error(); !strings.Contains(s, "H3_INTERNAL_ERROR") || strings.Contains(s, "0x102") || !strings.Contains(s, "going away") {
		t.Errorf("error %q should name H3_INTERNAL_ERROR and the reason", s)
	}
}

type connKey struct{}

// ConnContext derives the requests' contexts: its values reach the
// handler, and a request's context is still done when its stream ends.
func TestServerConnContext(t *testing.T) {
	var calls sync.Map
	done := make(chan error, 1)
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := r.Context().Value(connKey{}).(string)
		io.WriteString(w, v)
		if r.URL.Path == "/wait" {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				done <- nil
			case <-time.After(20 * time.Second):
				done <- errors.New("request context not done after the client cancelled")
			}
		}
	}), func(s *Server) {
		s.ConnContext = func(ctx context.Context, c *quic.Conn) context.Context {
			calls.Store(c, true)
			return context.WithValue(ctx, connKey{}, "conn "+c.RemoteAddr().String())
		}
	})
	resp, body := e.get(t, "/")
	if !strings.HasPrefix(string(body), "conn 127.0.0.1:") || resp.StatusCode != 200 {
		t.Fatalf("handler saw %q", body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/wait", nil)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 1))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n := 0
	calls.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("ConnContext called for %d connections, want 1", n)
	}
}

// A ConnContext that takes its time (a lookup, say) holds up only its own
// connection: another connection is served meanwhile, and Close returns.
func TestServerConnContextBlocksOnlyItsConn(t *testing.T) {
	var first sync.Once
	entered, release := make(chan struct{}), make(chan struct{})
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), func(s *Server) {
		s.ConnContext = func(ctx context.Context, c *quic.Conn) context.Context {
			block := false
			first.Do(func() { block = true })
			if block {
				close(entered)
				<-release
			}
			return ctx
		}
	})
	defer close(release)
	go e.client.Get(e.url + "/") // its connection's ConnContext blocks
	<-entered
	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: e.pool, ServerName: "localhost"}}
	defer tr.Close()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get(e.url + "/")
	if err != nil {
		t.Fatalf("a second connection while the first one's ConnContext runs: %v", err)
	}
	resp.Body.Close()
	closed := make(chan struct{})
	go func() { e.srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close blocked by a ConnContext in progress")
	}
}

// ConfigureTLSConfig returns a copy offering only "h3", as quic-go's
// does, and leaves its argument alone; a config from GetConfigForClient
// gets the same treatment.
func TestConfigureTLSConfig(t *testing.T) {
	inner := &tls.Config{NextProtos: []string{"http/1.1"}}
	orig := &tls.Config{NextProtos: []string{"h2", "http/1.1"}, GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return inner, nil }}
	c := ConfigureTLSConfig(orig)
	if len(c.NextProtos) != 1 || c.NextProtos[0] != NextProtoH3 {
		t.Errorf("NextProtos %q, want [h3]", c.NextProtos)
	}
	if len(orig.NextProtos) != 2 || len(inner.NextProtos) != 1 {
		t.Error("the argument was modified")
	}
	got, err := c.GetConfigForClient(&tls.ClientHelloInfo{})
	if err != nil || len(got.NextProtos) != 1 || got.NextProtos[0] != NextProtoH3 {
		t.Errorf("GetConfigForClient: %v, %v", got, err)
	}
	// It serves: a quic.Listener made with it accepts HTTP/3 clients.
	cert, pool := testCert(t)
	l, err := quic.ListenAddr("127.0.0.1:0", ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go srv.ServeListener(l)
	defer srv.Close()
	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.Close()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get("https://localhost:" + strings.Split(l.Addr().String(), ":")[1] + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Errorf("body %q", b)
	}
}
