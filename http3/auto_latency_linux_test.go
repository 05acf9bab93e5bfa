package http3

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/linkem"
)

// TestNetnsLatencyTable measures the request latency of AutoTransport,
// net/http's Transport and the HTTP/3-only Transport side by side, over
// a 40 ms round trip (linkem), in four situations: both protocols
// available (the client learned HTTP/3 on an earlier run, AltSvcFile),
// UDP dropped by the site's firewall, UDP rejected with ICMP (the client
// still believing HTTP/3 works), and an origin on TCP only that does not
// advertise HTTP/3. "first" is a new client's first request
// (connections included), "next" a request on its open connections; the
// figures are medians of 5 runs. It prints a Markdown table; run it with
// `make auto-latency` (root, a few minutes).
func TestNetnsLatencyTable(t *testing.T) {
	if os.Getenv("H3_LATENCY") == "" {
		t.Skip("set H3_LATENCY=1 (make auto-latency) to measure")
	}
	const runs = 5
	o := newNsOrigin(t, linkem.Params{Delay: 20 * time.Millisecond})
	file := filepath.Join(t.TempDir(), "altsvc.json")
	learn := o.auto(t)
	learn.AltSvcFile = file
	timedGet(t, learn, o.url+"/")
	timedGet(t, learn, o.url+"/")
	learn.Close()
	learned, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	type client struct {
		name string
		make func() (http.RoundTripper, func())
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	clients := []client{
		{"AutoTransport", func() (http.RoundTripper, func()) {
			// Each client starts from what the first learned (unless
			// the scenario removed it), without what the others saw.
			a := o.auto(t)
			a.AltSvcFile = filepath.Join(t.TempDir(), "altsvc.json")
			if learned != nil {
				os.WriteFile(a.AltSvcFile, learned, 0o600)
			}
			return a, func() { a.Close() }
		}},
		{"net/http", func() (http.RoundTripper, func()) {
			tr := &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: o.pool}, ForceAttemptHTTP2: true,
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					return o.p.Dial(ctx, linkem.A, dialer, network, addr)
				},
			}
			return tr, tr.CloseIdleConnections
		}},
		{"http3.Transport", func() (http.RoundTripper, func()) {
			tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: o.pool},
				Dial: o.auto(t).H3.Dial}
			return tr, func() { tr.Close() }
		}},
	}
	scenarios := []struct {
		name  string
		setup func()
	}{
		{"both available", func() {}},
		{"UDP dropped", func() { o.blockUDP(t, "drop") }},
		{"UDP rejected (ICMP)", func() { o.nft(t, "delete table inet h3block\n"); o.blockUDP(t, "reject") }},
		{"UDP rejected, broken mark remembered", func() {
			// A client that found UDP blocked (its QUIC handshake
			// timed out) and saved the mark, restarted.
			b := o.auto(t)
			b.AltSvcFile = filepath.Join(t.TempDir(), "altsvc.json")
			os.WriteFile(b.AltSvcFile, learned, 0o600)
			timedGet(t, b, o.url+"/")
			waitStats(t, b, "QUIC failure", func(s AutoStats) bool { return s.QUICFailures == 1 })
			b.Close()
			learned, _ = os.ReadFile(b.AltSvcFile)
		}},
		{"TCP only (no Alt-Svc, no UDP)", func() {
			o.noAltSvc.Store(true)
			learned = nil
		}},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| Situation (RTT 40 ms) |")
	for _, c := range clients {
		fmt.Fprintf(&table, " %s first | next |", c.name)
	}
	fmt.Fprintf(&table, "\n|---|")
	for range clients {
		fmt.Fprintf(&table, "---|---|")
	}
	fmt.Fprintf(&table, "\n")
	for _, s := range scenarios {
		s.setup()
		fmt.Fprintf(&table, "| %s |", s.name)
		for _, c := range clients {
			var first, next []time.Duration
			proto, failed := "", ""
			for r := 0; r < runs; r++ {
				rt, closeRT := c.make()
				d, p, err := measureGet(rt, o.url+"/")
				if err != nil {
					failed = fmt.Sprintf("fails after %v", d.Round(100*time.Millisecond))
					closeRT()
					break
				}
				proto = p
				first = append(first, d)
				for i := 0; i < 3; i++ {
					d, p, err = measureGet(rt, o.url+"/")
					if err == nil {
						next = append(next, d)
						proto = p
					}
				}
				closeRT()
			}
			if failed != "" {
				fmt.Fprintf(&table, " %s | - |", failed)
				continue
			}
			fmt.Fprintf(&table, " %v | %v (%s) |", median(first), median(next), strings.TrimPrefix(proto, "HTTP/"))
		}
		fmt.Fprintf(&table, "\n")
	}
	t.Logf("request latency, medians of %d runs; RaceDelay 300 ms, QUIC handshake timeout 5 s:\n%s", runs, table.String())
}

// measureGet times one GET through rt, body included.
func measureGet(rt http.RoundTripper, url string) (time.Duration, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	start := time.Now()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return time.Since(start), "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start), resp.Proto, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}
