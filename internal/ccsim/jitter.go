package ccsim

import (
	"math/rand/v2"
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// jitterRelay holds each datagram of one sender for a random time before
// it enters the bottleneck: the scheduling jitter of a real host and NIC.
// Datagrams keep their order. It sits on its own host, reached from the
// sender over an ideal link, and forwards with the sender's source
// address, so the receiver answers the sender directly.
type jitterRelay struct {
	from, to netsim.Addr
	max      time.Duration
	rng      *rand.Rand
	last     time.Time
	q        []jitterHeld // FIFO: q[head:]
	head     int
	free     [][]byte
}

type jitterHeld struct {
	at      time.Time
	payload []byte
	ecn     netsim.ECN
}

func newJitterRelay(from, to netsim.Addr, maxJitter time.Duration, seed uint64) *jitterRelay {
	return &jitterRelay{
		from: from,
		to:   to,
		max:  maxJitter,
		rng:  rand.New(rand.NewPCG(seed, 0x6a6974746572)),
	}
}

func (j *jitterRelay) HandleDatagram(now time.Time, d *netsim.Datagram) {
	at := now.Add(time.Duration(j.rng.Int64N(int64(j.max) + 1)))
	if at.Before(j.last) {
		at = j.last
	}
	j.last = at
	var b []byte
	if n := len(j.free); n > 0 {
		b = j.free[n-1][:0]
		j.free = j.free[:n-1]
	}
	b = append(b, d.Payload...)
	if j.head > 0 && j.head == len(j.q) {
		j.q, j.head = j.q[:0], 0
	}
	j.q = append(j.q, jitterHeld{at: at, payload: b, ecn: d.ECN})
}

func (j *jitterRelay) HandleTimeout(now time.Time) {}

func (j *jitterRelay) PollTransmit(now time.Time, out *netsim.Outbox) {
	for j.head < len(j.q) && !j.q[j.head].at.After(now) {
		h := &j.q[j.head]
		out.SendFrom(j.from, j.to, h.payload, h.ecn)
		j.free = append(j.free, h.payload)
		*h = jitterHeld{}
		j.head++
	}
	if j.head > 256 && j.head*2 > len(j.q) {
		n := copy(j.q, j.q[j.head:])
		clear(j.q[n:])
		j.q, j.head = j.q[:n], 0
	}
}

func (j *jitterRelay) NextDeadline() time.Time {
	if j.head < len(j.q) {
		return j.q[j.head].at
	}
	return time.Time{}
}
