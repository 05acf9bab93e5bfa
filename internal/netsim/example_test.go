package netsim_test

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// pacer sends count datagrams of size bytes to to, one every gap, each
// carrying its sequence number, and counts the acknowledgements.
type pacer struct {
	to    netsim.Addr
	size  int
	count int
	gap   time.Duration

	sent, acked int
	next        time.Time
	lastAck     time.Time
	buf         []byte
}

func (p *pacer) HandleDatagram(now time.Time, d *netsim.Datagram) {
	p.acked++
	p.lastAck = now
}

func (p *pacer) HandleTimeout(now time.Time) {} // PollTransmit follows

func (p *pacer) PollTransmit(now time.Time, out *netsim.Outbox) {
	if p.buf == nil {
		p.buf = make([]byte, p.size)
		p.next = now
	}
	for p.sent < p.count && !p.next.After(now) {
		binary.BigEndian.PutUint32(p.buf, uint32(p.sent))
		out.Send(p.to, p.buf, netsim.ECT0) // copied by the network
		p.sent++
		p.next = p.next.Add(p.gap)
	}
}

func (p *pacer) NextDeadline() time.Time {
	if p.sent == p.count {
		return time.Time{} // nothing more to do
	}
	return p.next
}

// acker answers every datagram with its 4-byte sequence number.
type acker struct {
	to   []netsim.Addr
	seqs []uint32
}

func (a *acker) HandleDatagram(now time.Time, d *netsim.Datagram) {
	a.to = append(a.to, d.Src)
	a.seqs = append(a.seqs, binary.BigEndian.Uint32(d.Payload))
}

func (a *acker) HandleTimeout(now time.Time) {}

func (a *acker) PollTransmit(now time.Time, out *netsim.Outbox) {
	var b [4]byte
	for i, to := range a.to {
		binary.BigEndian.PutUint32(b[:], a.seqs[i])
		out.Send(to, b[:], netsim.NotECT)
	}
	a.to, a.seqs = a.to[:0], a.seqs[:0]
}

func (a *acker) NextDeadline() time.Time { return time.Time{} }

// A sender paced at 12 Mbit/s over a 10 Mbit/s link with a 30-datagram
// queue: the queue fills, then drops.
func Example() {
	sim := netsim.NewSim()
	net := netsim.NewNetwork(sim, 1)
	cfg := netsim.LinkConfig{Bandwidth: 10e6, Delay: 20 * time.Millisecond, QueuePackets: 30}
	path := net.Connect(1, 2, cfg, cfg)

	snd := &pacer{to: netsim.Addr{Host: 2, Port: 443}, size: 1250, count: 1000, gap: 833 * time.Microsecond}
	net.Attach(netsim.Addr{Host: 1, Port: 1000}, snd)
	net.Attach(netsim.Addr{Host: 2, Port: 443}, &acker{})
	sim.RunFor(10 * time.Second)

	st := path.AB.Stats()
	fmt.Printf("sent %d, acked %d, last ack at %v\n", snd.sent, snd.acked, snd.lastAck.Sub(netsim.Epoch()))
	fmt.Printf("link: offered %d, dropped %d, max queueing delay %v\n", st.OfferedPackets, st.DroppedQueue, st.QueueDelayMax)
	fmt.Printf("utilization from 0.2 s to 0.8 s: %.3f\n", path.AB.Utilization(netsim.Epoch().Add(200*time.Millisecond), netsim.Epoch().Add(800*time.Millisecond)))
	// Output:
	// sent 1000, acked 862, last ack at 902.0032ms
	// link: offered 1000, dropped 138, max queueing delay 28.999ms
	// utilization from 0.2 s to 0.8 s: 1.000
}
