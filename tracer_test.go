package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// directTransfer moves stream data from a connected client to the server
// by calling the two state machines directly, without a network: each
// step writes a chunk, passes the client's datagrams to the server, reads
// them, and returns the server's ACKs. It counts 1-RTT packets sent.
type directTransfer struct {
	p        *simPair
	cs, ss   *stream
	now      time.Time
	buf, rd  []byte
	chunk    []byte
	packets  int
	received int
}

func newDirectTransfer(t testing.TB) *directTransfer {
	p := newSimPair(t, testLink, nil, 5)
	p.connect(t)
	cs, _, err := p.client.c.streams.openStream(true)
	if err != nil || cs == nil {
		t.Fatalf("openStream: %v", err)
	}
	d := &directTransfer{p: p, cs: cs, now: p.sim.Now(), buf: make([]byte, 0, 1500), rd: make([]byte, 64<<10), chunk: make([]byte, 4096)}
	for d.ss == nil {
		d.step()
		if s := acceptAll(p.server.c, true); len(s) > 0 {
			d.ss = s[0]
		}
	}
	return d
}

func (d *directTransfer) step() {
	c, s := d.p.client.c, d.p.server.c
	simWrite(d.cs, d.chunk)
	d.now = d.now.Add(200 * time.Microsecond)
	for range 4 {
		out := c.pollTransmit(d.now, d.buf[:0])
		if out == nil {
			break
		}
		d.packets++
		s.handleDatagram(d.now, out, ackhandler.NotECT)
	}
	if d.ss != nil {
		for {
			n, _ := simRead(d.ss, d.rd)
			d.received += n
			if n == 0 {
				break
			}
		}
	}
	for {
		out := s.pollTransmit(d.now, d.buf[:0])
		if out == nil {
			break
		}
		c.handleDatagram(d.now, out, ackhandler.NotECT)
	}
	if dl := c.nextDeadline(d.now); !dl.IsZero() && !dl.After(d.now) {
		c.handleTimeout(d.now)
	}
	if dl := s.nextDeadline(d.now); !dl.IsZero() && !dl.After(d.now) {
		s.handleTimeout(d.now)
	}
}

// noopTracer has every hook set, doing nothing.
func noopTracer() *Tracer {
	return &Tracer{
		PacketSent:     func(PacketInfo) {},
		PacketReceived: func(PacketInfo) {},
		PacketDropped:  func(wire.PacketType, int, PacketDropReason) {},
		PacketLost:     func(wire.PacketType, wire.PacketNumber, int) {},
		MetricsUpdated: func(RecoveryMetrics) {},
		KeyUpdated:     func(KeyUpdate) {},
		ParametersSet:  func(bool, *wire.TransportParameters) {},
	}
}

// With no Tracer, sending and receiving a packet allocates nothing, and
// a Tracer whose hooks get plain values adds no allocation either.
func TestTracerAlloc(t *testing.T) {
	if connIDRaceEnabled {
		// Stream data lives in pooled chunks, and the race detector makes
		// sync.Pool drop items at random; the non-race pass of make test
		// (-run Alloc) asserts this.
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, traced := range []bool{false, true} {
		d := newDirectTransfer(t)
		if traced {
			d.p.client.c.obs.t, d.p.server.c.obs.t = noopTracer(), noopTracer()
		}
		for range 3000 { // warm up: windows, buffers and rings reach their size
			d.step()
			d.p.client.c.tracePoll()
			d.p.server.c.tracePoll()
		}
		before := d.packets
		allocs := testing.AllocsPerRun(500, func() {
			d.step()
			d.p.client.c.tracePoll()
			d.p.server.c.tracePoll()
		})
		packets := d.packets - before
		if packets < 500 || d.received == 0 {
			t.Fatalf("traced=%v: %d packets, %d bytes received: the transfer did not run", traced, packets, d.received)
		}
		if allocs != 0 {
			t.Errorf("traced=%v: %.2f allocations per step of about %.1f packets, want 0", traced, allocs, float64(packets)/501)
		}
	}
}

// BenchmarkDirectTransfer reports the cost of moving data through two
// connections' state machines, untraced and with no-op tracer hooks.
func BenchmarkDirectTransfer(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "tracer=nil"
		if traced {
			name = "tracer=noop"
		}
		b.Run(name, func(b *testing.B) {
			d := newDirectTransfer(b)
			if traced {
				d.p.client.c.obs.t, d.p.server.c.obs.t = noopTracer(), noopTracer()
			}
			b.ReportAllocs()
			start := d.received
			b.ResetTimer()
			for range b.N {
				d.step()
				d.p.client.c.tracePoll()
				d.p.server.c.tracePoll()
			}
			b.SetBytes(int64(d.received-start) / int64(b.N))
		})
	}
}
