package http3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
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
