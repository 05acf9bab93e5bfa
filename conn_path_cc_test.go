package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/netsim"
)

// pathCCRecorder is a congestion controller that knows which packets it
// was told were sent, and counts the acknowledgments and losses of
// others: packets sent on another path before the connection moved.
type pathCCRecorder struct {
	congestion.Controller
	rtt            *congestion.RTTStats
	sent           map[int64]bool
	foreignAcked   int
	foreignLost    int
	foreignBytes   int
	ownAcked       bool
	foreignRTTSeen bool // an RTT sample existed before any own packet was acknowledged
	hadSample      bool // the estimator had a sample when the controller was made
}

func (r *pathCCRecorder) OnPacketSent(now time.Time, pn int64, bytes, inFlight int) {
	r.sent[pn] = true
	r.Controller.OnPacketSent(now, pn, bytes, inFlight)
}

func (r *pathCCRecorder) OnAck(now time.Time, ev *congestion.AckEvent) {
	own := false
	for _, a := range ev.Acked {
		if r.sent[a.PacketNumber] {
			own = true
		} else {
			r.foreignAcked++
			r.foreignBytes += a.Bytes
		}
	}
	if !r.ownAcked && !own && !r.hadSample && r.rtt.HasSample() {
		r.foreignRTTSeen = true
	}
	r.ownAcked = r.ownAcked || own
	r.Controller.OnAck(now, ev)
}

func (r *pathCCRecorder) OnCongestionEvent(now time.Time, ev *congestion.CongestionEvent) {
	for _, l := range ev.Lost {
		if !r.sent[l.PacketNumber] {
			r.foreignLost++
			r.foreignBytes += l.Bytes
		}
	}
	r.Controller.OnCongestionEvent(now, ev)
}

// "Packets sent on the old path MUST NOT contribute to congestion control
// or RTT estimation for the new path." (RFC 9000, Section 9.4) The
// client's address changes in the middle of a download, by a NAT (the
// packets in flight to the old address are lost) or by the client's own
// migration (they arrive, and the client acknowledges them from its new
// address): the server's fresh controller for the new path hears of no
// packet sent before the move, acknowledged or lost, and the new path's
// RTT estimator takes no sample from one.
func TestSimPathOldPacketsStayOffNewController(t *testing.T) {
	for _, how := range []string{"nat", "migrate"} {
		t.Run(how, func(t *testing.T) {
			var ctls []*pathCCRecorder
			cfg := &Config{Congestion: func(c congestion.ControllerConfig) congestion.Controller {
				r := &pathCCRecorder{Controller: congestion.NewCubic(c), rtt: c.RTT, sent: map[int64]bool{}, hadSample: c.RTT.HasSample()}
				ctls = append(ctls, r)
				return r
			}}
			p := newSimPair(t, testLink, cfg, 126)
			caddr := p.cnode.Addr()
			newAddr := netsim.Addr{Host: 6, Port: 7000}
			p.net.Connect(6, 2, testLink, testLink)
			p.cnode.AddAddr(newAddr)
			if how == "nat" {
				p.net.SetNAT(caddr, netsim.Addr{Host: 1, Port: 40000})
			}
			p.connect(t)
			srv, cl := p.server.c, p.client.c
			moved := false
			simDownload(t, p, 3<<20, 30*time.Second, func(got int) {
				if moved || got < 1<<20 {
					return
				}
				moved = true
				if how == "nat" {
					p.net.SetNAT(caddr, netsim.Addr{Host: 3, Port: 40000}) // a new address
					return
				}
				target := pathAddrs{local: newAddr.AddrPort(), remote: cl.activePath().addrs.remote}
				if err := cl.probePath(p.sim.Now(), target, false, true, nil); err != nil {
					t.Fatal(err)
				}
			})
			var fresh *pathCCRecorder
			for _, r := range ctls {
				if srv.ccw.cc == congestion.Controller(r) {
					fresh = r
				}
			}
			if fresh == nil || len(ctls) < 3 {
				t.Fatalf("the server's controller was not replaced on the move (%d controllers made)", len(ctls))
			}
			if fresh.foreignAcked+fresh.foreignLost > 0 {
				t.Errorf("the new path's controller was credited %d acknowledged and %d lost packets (%d bytes) sent on the old path",
					fresh.foreignAcked, fresh.foreignLost, fresh.foreignBytes)
			}
			if fresh.foreignRTTSeen {
				t.Error("the new path's RTT estimator took a sample from a packet sent on the old path")
			}
			t.Logf("moved at %v; download done at %v", how, p.sim.Elapsed())
		})
	}
}
