package interop

// BenchmarkH3SmallGet compares small GET requests over loopback in one
// run: our HTTP/3 (client and server), quic-go's http3 (client and
// server), and net/http over HTTP/2 with TLS, each at 1 and 64 requests
// in flight on one connection:
//
//	cd internal/interop && go test -run '^$' -bench H3SmallGet -benchmem
//
// It reports requests per second and the connections the server saw
// (1 unless the client needed more); allocs/op is per request, client and
// server together (both run in this process). Every implementation runs
// with its defaults: our HTTP/3 server allows 250 concurrent requests per
// connection, quic-go's 100, net/http's HTTP/2 server 250.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	qgh3 "github.com/quic-go/quic-go/http3"
	oursh3 "github.com/quicstack/quic/http3"
)

// smallGetBody is the response of the small-GET benchmark.
var smallGetBody = []byte("hello, small GET\n")

func smallGetHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(smallGetBody)
	})
}

// h3BenchSetup starts a server and returns a client for it, the URL and
// a cleanup function.
type h3BenchSetup func(b testing.TB, h http.Handler) (c *http.Client, url string, stop func())

func setupOurH3(b testing.TB, h http.Handler) (*http.Client, string, func()) {
	ctls, stls := h3TLS(b)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	srv := &oursh3.Server{Handler: h, TLSConfig: stls}
	go srv.Serve(udp)
	tr := &oursh3.Transport{TLSClientConfig: ctls}
	return &http.Client{Transport: tr}, "https://" + udp.LocalAddr().String() + "/", func() {
		tr.Close()
		srv.Close()
		udp.Close()
	}
}

func setupQuicGoH3(b testing.TB, h http.Handler) (*http.Client, string, func()) {
	ctls, stls := h3TLS(b)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	srv := &qgh3.Server{Handler: h, TLSConfig: stls}
	go srv.Serve(udp)
	tr := &qgh3.Transport{TLSClientConfig: ctls}
	return &http.Client{Transport: tr}, "https://" + udp.LocalAddr().String() + "/", func() {
		tr.Close()
		srv.Close()
		udp.Close()
	}
}

func setupHTTP2(b testing.TB, h http.Handler) (*http.Client, string, func()) {
	ctls, stls := h3TLS(b)
	ctls, stls = ctls.Clone(), stls.Clone()
	ctls.NextProtos = []string{"h2"}
	stls.NextProtos = []string{"h2"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, TLSConfig: stls}
	go srv.Serve(tls.NewListener(ln, stls))
	tr := &http.Transport{TLSClientConfig: ctls, ForceAttemptHTTP2: true}
	return &http.Client{Transport: tr}, "https://" + ln.Addr().String() + "/", func() {
		tr.CloseIdleConnections()
		srv.Close()
	}
}

func BenchmarkH3SmallGet(b *testing.B) {
	impls := []struct {
		name  string
		setup h3BenchSetup
		proto string
	}{
		{"ours", setupOurH3, "HTTP/3.0"},
		{"quic-go", setupQuicGoH3, "HTTP/3.0"},
		{"http2-tls", setupHTTP2, "HTTP/2.0"},
	}
	for _, conc := range []int{1, 64} {
		for _, im := range impls {
			b.Run(fmt.Sprintf("c%d/%s", conc, im.name), func(b *testing.B) {
				benchSmallGet(b, im.setup, im.proto, conc)
			})
		}
	}
}

func benchSmallGet(b *testing.B, setup h3BenchSetup, proto string, conc int) {
	var conns sync.Map // client addresses the server saw
	var nconns atomic.Int64
	h := smallGetHandler()
	c, url, stop := setup(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, seen := conns.LoadOrStore(r.RemoteAddr, true); !seen {
			nconns.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer stop()
	get := func() error {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || n != int64(len(smallGetBody)) || resp.Proto != proto {
			return fmt.Errorf("status %d, %d bytes, %s", resp.StatusCode, n, resp.Proto)
		}
		return nil
	}
	// Warm up: the connection, and the QPACK tables where there are any.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 2*conc; i++ {
		if err := get(); err != nil {
			b.Fatal(err)
		}
		if ctx.Err() != nil {
			b.Fatal("warm-up took too long")
		}
	}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := get(); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(nconns.Load()), "conns")
}
