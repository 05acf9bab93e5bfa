package quic

import (
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// ttfbRTT is the round-trip time of the time-to-first-byte benchmark.
const ttfbRTT = 50 * time.Millisecond

// ttfbMode is how the client connects.
type ttfbMode int

const (
	ttfbFresh   ttfbMode = iota // full handshake
	ttfbResumed                 // TLS session resumption, request after the handshake
	ttfb0RTT                    // resumption with the request in 0-RTT
)

// timeToFirstByte runs one simulated connection over a 50 ms RTT path and
// returns the simulated time from the client's first packet to the first
// byte of the server's response on the client. The client sends its
// request as soon as it may: with DialEarly semantics in 0-RTT mode,
// otherwise once its handshake is complete (when Dial would return).
func timeToFirstByte(b *testing.B, mode ttfbMode, seed uint64) time.Duration {
	ctls, stls, cache := resumeTLS(b)
	srvCfg := &Config{Allow0RTT: true}
	if mode != ttfbFresh {
		primeSession(b, ctls, stls, cache, srvCfg)
	}
	link := netsim.LinkConfig{Bandwidth: 100_000_000, Delay: ttfbRTT / 2, QueuePackets: 1000}
	p := newSimPairOpts(b, link, seed, simPairOpts{server: srvCfg, ctls: ctls, stls: stls, early: mode == ttfb0RTT})
	start := p.sim.Now()
	var cs, ss *stream
	var reqDone, respSent bool
	var first time.Duration
	buf := make([]byte, 4096)
	p.run(b, 10*time.Second, func() bool {
		c := p.client.c
		if cs == nil && (mode == ttfb0RTT || c.handshakeComplete) {
			cs, _, _ = c.streams.openStream(true)
			if cs != nil {
				simWrite(cs, []byte("GET /index.html"))
				cs.closeWrite()
			}
		}
		if ss == nil && p.server.c != nil {
			ss, _, _ = p.server.c.streams.acceptStream(true)
		}
		if ss != nil && !reqDone {
			for {
				n, err := simRead(ss, buf)
				if err == io.EOF {
					reqDone = true
					break
				}
				if n == 0 {
					break
				}
			}
		}
		if reqDone && !respSent {
			simWrite(ss, []byte("<html>hello</html>"))
			ss.closeWrite()
			respSent = true
		}
		if cs != nil && first == 0 {
			if n, _ := simRead(cs, buf); n > 0 {
				first = p.sim.Now().Sub(start)
			}
		}
		return first > 0
	})
	if mode == ttfb0RTT && !p.server.c.tls.EarlyDataAccepted() {
		b.Fatal("0-RTT was not accepted")
	}
	if mode != ttfbFresh && !p.client.c.tls.ConnectionState().DidResume {
		b.Fatal("session not resumed")
	}
	return first
}

// BenchmarkTimeToFirstByte reports the simulated time to the first
// response byte at a 50 ms RTT, in milliseconds and in round trips, for a
// fresh connection, a resumed one, and a resumed one with the request in
// 0-RTT (expected about 2, 2 and 1 RTTs). Run it with
// `go test -run '^$' -bench TimeToFirstByte .`.
func BenchmarkTimeToFirstByte(b *testing.B) {
	for _, bc := range []struct {
		name string
		mode ttfbMode
	}{{"fresh", ttfbFresh}, {"resumed", ttfbResumed}, {"0-RTT", ttfb0RTT}} {
		b.Run(bc.name, func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				total += timeToFirstByte(b, bc.mode, uint64(100+i))
			}
			avg := total / time.Duration(b.N)
			b.ReportMetric(float64(avg)/float64(time.Millisecond), "ms-ttfb")
			b.ReportMetric(float64(avg)/float64(ttfbRTT), "RTTs")
		})
	}
}
