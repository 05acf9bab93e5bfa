package quic

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"
)

// Quiet connections release their 1-RTT keys after key updates too, on
// a path with a long round trip. Release keeps the keys while the
// previous read keys of an update are kept (three PTOs from the update,
// RFC 9001, Section 6.5), and the connection tried once, at its release
// deadline, which the PTO of the update's time could put after.
func TestSynctestIdleReleasesKeysAfterKeyUpdate(t *testing.T) {
	for _, latency := range []time.Duration{10 * time.Millisecond, 200 * time.Millisecond} {
		synctest.Test(t, func(t *testing.T) {
			// The client updates its keys every other packet it may.
			p := newConnPair(t, connPairOpts{Mem: true, Latency: latency,
				Client: &Config{MaxIdleTimeout: time.Hour, KeyUpdateInterval: 2},
				Server: &Config{MaxIdleTimeout: time.Hour}})
			for i := range 4 {
				roundTrip(t, p, string(bytes.Repeat([]byte{'a'}, 3000*i)))
				time.Sleep(time.Minute)
				synctest.Wait()
				if !parkedQuiet(p.server) || !parkedQuiet(p.client) {
					t.Fatalf("latency %v, round %d: keys kept after a minute of quiet: server parked %v, released %v; client parked %v, released %v (%d key updates)",
						latency, i, p.server.parked.Load(), p.server.state.oneRTT.Released(),
						p.client.parked.Load(), p.client.state.oneRTT.Released(), p.client.state.oneRTT.Updates())
				}
			}
			if p.client.state.oneRTT.Updates() < 2 {
				t.Fatalf("%d key updates", p.client.state.oneRTT.Updates())
			}
		})
	}
}
