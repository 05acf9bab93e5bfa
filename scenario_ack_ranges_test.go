package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// A peer whose ACK frames carry more ranges than the parser keeps (its
// receiver remembers 4,000 ranges, and every other datagram it receives
// is lost): RFC 9000, Section 19.3 sets no limit on the ACK Range Count,
// so the frames are legal. The connection processes the highest ranges,
// ignores the rest, and the transfer completes.
func TestSimAckManyRanges(t *testing.T) {
	// Windows as large as the transfer, so that the whole of it is in
	// flight at once whatever auto-tuning does.
	cfg := &Config{
		Congestion:                     func(congestion.ControllerConfig) congestion.Controller { return &fixedWindowCC{window: 4 << 20} },
		InitialStreamReceiveWindow:     4 << 20,
		InitialConnectionReceiveWindow: 8 << 20,
	}
	p := newSimPair(t, reassemblyLink, cfg, 91)
	p.connect(t)
	p.client.c.spaces[ackhandler.SpaceApplication].recv.SetMaxRanges(4000)
	n := 0
	p.client.dropIn = func(time.Time, *netsim.Datagram) bool {
		n++
		return n%2 == 0
	}
	maxRanges := 0
	p.server.c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		if f.Type == wire.FrameTypeAck || f.Type == wire.FrameTypeAckECN {
			maxRanges = max(maxRanges, len(f.Ack.Ranges)+f.Ack.IgnoredRanges)
		}
	}
	s, _, err := p.server.c.streams.openStream(false)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v %v", s, err)
	}
	const size = 4 << 20
	w := newPatternWriter(s, 0, size)
	var r *patternReader
	p.run(t, 60*time.Second, func() bool {
		if p.server.c.closeState != stateActive || p.client.c.closeState != stateActive {
			t.Fatalf("closed: server %v, client %v", p.server.c.closeErr, p.client.c.closeErr)
		}
		w.step()
		if r == nil {
			if acc := acceptAll(p.client.c, false); len(acc) > 0 {
				r = newPatternReader(t, acc[0], 0)
			}
		}
		return r != nil && r.step(0)
	})
	if r.got != size {
		t.Fatalf("EOF after %d bytes, want %d", r.got, size)
	}
	t.Logf("ACK frames of up to %d ranges", maxRanges)
	if maxRanges <= wire.DefaultMaxAckRanges {
		t.Fatalf("the largest ACK frame had %d ranges: the test did not exceed the parser's %d", maxRanges, wire.DefaultMaxAckRanges)
	}
}

// reassemblyLink is a fast path with room in its queue for a whole
// receive window of injected packets, and Ethernet-sized datagrams.
var reassemblyLink = netsim.LinkConfig{Bandwidth: 10_000_000_000, Delay: 5 * time.Millisecond, QueuePackets: 100_000, MTU: 1452}

// fixedWindowCC is a congestion controller with a constant window and no
// pacing: a sender that keeps a whole receive window in flight whatever
// it loses.
type fixedWindowCC struct{ window int }

func (c *fixedWindowCC) OnPacketSent(time.Time, int64, int, int)                  {}
func (c *fixedWindowCC) OnAck(time.Time, *congestion.AckEvent)                    {}
func (c *fixedWindowCC) OnCongestionEvent(time.Time, *congestion.CongestionEvent) {}
func (c *fixedWindowCC) OnAppLimited(time.Time, int)                              {}
func (c *fixedWindowCC) SetMaxDatagramSize(int)                                   {}
func (c *fixedWindowCC) CongestionWindow() int                                    { return c.window }
func (c *fixedWindowCC) PacingRate() uint64                                       { return 0 }
func (c *fixedWindowCC) State() congestion.State                                  { return congestion.State{Name: "fixed"} }
