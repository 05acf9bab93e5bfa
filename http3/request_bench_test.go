package http3

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/quicstack/quic"
)

// BenchmarkRequestOneInFlight is a small GET with one request in flight
// on one connection over loopback, client and server in this process:
// our HTTP/3 (h3) against net/http's HTTP/2 over TLS (h2), the handler of
// make perf's one-in-flight row. cpu-ns/op is the process's CPU time per
// request, both sides, garbage collection included. Run with
//
//	go test -run '^$' -bench RequestOneInFlight -benchmem -count 6 ./http3
//
// (interleave the two with -count; compare with benchstat).
func BenchmarkRequestOneInFlight(b *testing.B) {
	for _, proto := range []string{"h3", "h2"} {
		b.Run(proto, func(b *testing.B) {
			c, url, stop := benchRequestSetup(b, proto)
			defer stop()
			get := func() {
				resp, err := c.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || n != int64(len(benchSmallBody)) || resp.StatusCode != 200 {
					b.Fatalf("%d bytes, status %d, %v", n, resp.StatusCode, err)
				}
			}
			for range 20 { // the connection, QPACK and HPACK tables, buffers
				get()
			}
			b.ReportAllocs()
			b.ResetTimer()
			m := startCPU()
			for b.Loop() {
				get()
			}
			m.report(b)
		})
	}
}

var benchSmallBody = []byte("hello, small GET\n")

func benchSmallHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(benchSmallBody)
	})
}

// benchRequestSetup starts a server on loopback for proto (h3 or h2)
// and returns a client for it, its URL and a cleanup function.
func benchRequestSetup(b testing.TB, proto string) (*http.Client, string, func()) {
	cert, pool := testCert(b)
	stls := &tls.Config{Certificates: []tls.Certificate{cert}}
	ctls := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	switch proto {
	case "h3":
		srv := &Server{Handler: benchSmallHandler(), TLSConfig: stls}
		l, err := quic.ListenAddr("127.0.0.1:0", srv.tlsConfig(), srv.quicConfig())
		if err != nil {
			b.Fatal(err)
		}
		go srv.ServeListener(l)
		tr := &Transport{TLSClientConfig: ctls}
		return &http.Client{Transport: tr}, "https://" + l.Addr().String() + "/", func() {
			tr.Close()
			srv.Close()
			l.Close()
		}
	default:
		stls.NextProtos = []string{"h2"}
		ctls.NextProtos = []string{"h2"}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: benchSmallHandler(), TLSConfig: stls}
		go srv.Serve(tls.NewListener(ln, stls))
		tr := &http.Transport{TLSClientConfig: ctls, ForceAttemptHTTP2: true}
		return &http.Client{Transport: tr}, "https://" + ln.Addr().String() + "/", func() {
			tr.CloseIdleConnections()
			srv.Close()
		}
	}
}

// TestRequestAllocs bounds the allocations of a small GET with one request
// in flight, client and server together in this process (issue 28): 61
// today, against 105 before the request path was trimmed and 70 for
// net/http's HTTP/2 over TLS (BenchmarkRequestOneInFlight). The bound
// leaves room for the occasional allocation of the QUIC connections'
// background work (timers, a packet's retransmission) within the average.
func TestRequestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are asserted without the race detector")
	}
	c, url, stop := benchRequestSetup(t, "h3")
	defer stop()
	get := func() {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != int64(len(benchSmallBody)) || resp.StatusCode != 200 {
			t.Fatalf("%d bytes, status %d, %v", n, resp.StatusCode, err)
		}
	}
	for range 50 {
		get()
	}
	const bound = 68
	if a := testing.AllocsPerRun(300, get); a > bound {
		t.Fatalf("%.1f allocations per request, want at most %d", a, bound)
	}
}
