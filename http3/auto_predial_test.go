package http3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// strictOrigin is a net/http origin over TCP that closes a connection on
// which no request began within limit of its accept, as servers and
// proxies with short handshake or header timeouts do (net/http's own
// ReadHeaderTimeout for HTTP/1.1; HTTP/2 gateways waiting for the
// preface). h1 serves HTTP/1.1 only, else HTTP/2.
// closed receives once per connection the server gave up on, after it
// closed it.
func strictOrigin(t *testing.T, limit time.Duration, h1 bool) (addr string, tr *AutoTransport, closed <-chan struct{}) {
	t.Helper()
	cert, pool := testCert(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gaveUp := make(chan struct{}, 16)
	var mu sync.Mutex
	active := make(map[net.Conn]bool)
	srv := &http.Server{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.Proto)
		}),
		// StateActive: the HTTP/2 preface, or the first byte of an
		// HTTP/1.1 request, was read.
		ConnState: func(c net.Conn, s http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			switch s {
			case http.StateNew:
				time.AfterFunc(limit, func() {
					mu.Lock()
					ok := active[c]
					mu.Unlock()
					if !ok {
						c.Close()
						gaveUp <- struct{}{}
					}
				})
			case http.StateActive:
				active[c] = true
			}
		},
	}
	if h1 {
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	go srv.ServeTLS(l, "", "")
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), newAuto(t, pool), gaveUp
}

// A connection dialed ahead for a race that QUIC won waits in the pool;
// the server gives up on it (it sent no request within the server's
// limit, 500 ms here, well below predialTTL); a request that then goes
// over TCP (UDP blocked, HTTP/3 broken, or ForbidHTTP3 as here) must not
// be handed the dead connection: it gets a new one and succeeds. Before
// the fix, net/http failed the request ("http: server closed idle
// connection" for HTTP/1.1; "http2: client connection force closed via
// ClientConn.Close" or a broken pipe for HTTP/2): it does not retry a
// request whose fresh connection fails.
func TestAutoPredialedServerClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h1   bool
	}{{"HTTP/2", false}, {"HTTP/1.1", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, a, closed := strictOrigin(t, 500*time.Millisecond, tc.h1)
			if err := a.init(); err != nil {
				t.Fatal(err)
			}
			// The TCP side of a race (waitRace).
			if err := <-a.pool.ready(context.Background(), addr); err != nil {
				t.Fatal(err)
			}
			// Wait until the server closed the connection (no
			// timed assertion: a loaded machine only makes this
			// longer). Over loopback its FIN is with us once
			// Close returned.
			select {
			case <-closed:
			case <-time.After(time.Minute):
				t.Fatal("the server did not close the connection")
			}
			req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
			req = req.WithContext(WithProtocolPolicy(context.Background(), ForbidHTTP3))
			proto, body := autoDo(t, a, req)
			if proto != body {
				t.Fatalf("response %s, body %q", proto, body)
			}
			if st := a.Stats(); st.TCPDials != 2 || st.TCPPredialsStale != 1 {
				t.Fatalf("stats %+v: want 2 TCP dials (the stale one replaced)", st)
			}
		})
	}
}

// A connection dialed ahead that the server keeps open is handed to the
// request, whether the server's first bytes (HTTP/2 SETTINGS, TLS session
// tickets) already wait on the socket or not yet (a slow server): the
// check before handing it over must neither drop it nor consume those
// bytes (net/http's HTTP/2 client fails without the server's SETTINGS).
func TestAutoPredialedLiveKept(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h1   bool
		wait time.Duration // after the dial; the server's bytes are there
	}{{"HTTP/2 at once", false, 0}, {"HTTP/2 later", false, 200 * time.Millisecond},
		{"HTTP/1.1 at once", true, 0}, {"HTTP/1.1 later", true, 200 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, a, _ := strictOrigin(t, time.Hour, tc.h1)
			if err := a.init(); err != nil {
				t.Fatal(err)
			}
			if err := <-a.pool.ready(context.Background(), addr); err != nil {
				t.Fatal(err)
			}
			time.Sleep(tc.wait)
			for i := 0; i < 3; i++ {
				req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
				req = req.WithContext(WithProtocolPolicy(context.Background(), ForbidHTTP3))
				if proto, body := autoDo(t, a, req); proto != body {
					t.Fatalf("response %s, body %q", proto, body)
				}
			}
			if st := a.Stats(); st.TCPDials != 1 || st.TCPPredialsStale != 0 {
				t.Fatalf("stats %+v: want the one connection dialed ahead to carry every request", st)
			}
		})
	}
}

// killOrigin is a net/http origin over TCP that closes the nth connection
// (from 1) on which a request began if kill(n), without an answer, as a
// server does that gave up on the connection just as the request came.
// conns returns how many connections a request began on.
func killOrigin(t *testing.T, h1 bool, kill func(n int) bool) (addr string, a *AutoTransport, conns func() int) {
	t.Helper()
	cert, pool := testCert(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	seen := make(map[net.Conn]bool)
	srv := &http.Server{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, r.Proto)
		}),
		ConnState: func(c net.Conn, s http.ConnState) {
			if s != http.StateActive {
				return
			}
			mu.Lock()
			k := false
			if !seen[c] { // HTTP/2 is active again at each request
				seen[c] = true
				n++
				k = kill(n)
			}
			mu.Unlock()
			if k {
				c.Close()
			}
		},
	}
	if h1 {
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	go srv.ServeTLS(l, "", "")
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), newAuto(t, pool), func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// The server closes the connection dialed ahead as the first request on it
// arrives (its limit for a connection without a request ran out just
// then; the check in take saw it open): the request, a GET, is sent again
// once on a new connection and succeeds. A connection dialed for the
// request itself that fails is not retried (net/http's rule), and a retry
// happens at most once.
func TestAutoPredialedRetry(t *testing.T) {
	t.Parallel()
	for _, h1 := range []bool{false, true} {
		name := "HTTP/2"
		if h1 {
			name = "HTTP/1.1"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			get := func(a *AutoTransport, addr string) (*http.Response, error) {
				req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
				req = req.WithContext(WithProtocolPolicy(context.Background(), ForbidHTTP3))
				return a.RoundTrip(req)
			}
			predial := func(a *AutoTransport, addr string) {
				if err := a.init(); err != nil {
					t.Fatal(err)
				}
				if err := <-a.pool.ready(context.Background(), addr); err != nil {
					t.Fatal(err)
				}
			}
			// The first connection dies: retried, succeeds.
			addr, a, conns := killOrigin(t, h1, func(n int) bool { return n == 1 })
			predial(a, addr)
			resp, err := get(a, addr)
			if err != nil {
				t.Fatalf("request on the closed connection dialed ahead: %v; stats %+v", err, a.Stats())
			}
			resp.Body.Close()
			if st := a.Stats(); st.TCPPredialRetries != 1 || st.TCPDials != 2 || conns() != 2 {
				t.Fatalf("stats %+v, %d connections", st, conns())
			}
			// Every connection dies: one retry, then the error.
			addr, a, conns = killOrigin(t, h1, func(int) bool { return true })
			predial(a, addr)
			if _, err := get(a, addr); err == nil {
				t.Fatal("no error from a server that closes every connection")
			}
			if st := a.Stats(); st.TCPPredialRetries != 1 || conns() != 2 {
				t.Fatalf("stats %+v, %d connections: want one retry", st, conns())
			}
			// No connection dialed ahead: no retry.
			addr, a, conns = killOrigin(t, h1, func(int) bool { return true })
			if _, err := get(a, addr); err == nil {
				t.Fatal("no error from a server that closes every connection")
			}
			if st := a.Stats(); st.TCPPredialRetries != 0 || conns() != 1 {
				t.Fatalf("stats %+v, %d connections: want no retry", st, conns())
			}
		})
	}
}

// A POST (not idempotent) whose request was written on a connection dialed
// ahead that the server then closed is not sent again: the server may
// have acted on it. HTTP/1.1, where the server closes only after it read
// the request's first bytes.
func TestAutoPredialedNoRetryWrittenPOST(t *testing.T) {
	t.Parallel()
	addr, a, conns := killOrigin(t, true, func(n int) bool { return n == 1 })
	if err := a.init(); err != nil {
		t.Fatal(err)
	}
	if err := <-a.pool.ready(context.Background(), addr); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/", strings.NewReader("order 1"))
	req = req.WithContext(WithProtocolPolicy(context.Background(), ForbidHTTP3))
	if _, err := a.RoundTrip(req); err == nil {
		t.Fatal("the POST succeeded: it was sent again")
	}
	if st := a.Stats(); st.TCPPredialRetries != 0 || conns() != 1 {
		t.Fatalf("stats %+v, %d connections: want no retry", st, conns())
	}
}
