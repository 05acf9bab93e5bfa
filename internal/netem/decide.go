package netem

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// A verdict is what happens to one arriving datagram.
type verdict struct {
	drop       string // reason of a drop, "" to deliver
	corruptAt  int    // offset of the replaced byte, -1 if none
	corruptTo  byte   // the new value of that byte
	duplicate  bool
	extraDelay time.Duration // reordering and jitter
}

func (v verdict) String() string {
	if v.drop != "" {
		return "drop:" + v.drop
	}
	s := "deliver"
	if v.corruptAt >= 0 {
		s += fmt.Sprintf(" corrupt@%d", v.corruptAt)
	}
	if v.duplicate {
		s += " duplicate"
	}
	if v.extraDelay > 0 {
		s += fmt.Sprintf(" +%v", v.extraDelay)
	}
	return s
}

// rateState applies a Rate: the simulator's selection with a burst cap.
type rateState struct {
	run int // consecutive selections
}

func (s *rateState) pick(r Rate, rng *rand.Rand) bool {
	if r.Percent <= 0 {
		return false
	}
	if r.Burst > 0 && s.run >= r.Burst {
		// "after burst consecutive drops the next packet is forced
		// through and the run counter resets".
		s.run = 0
		return false
	}
	if rng.IntN(100) < r.Percent {
		s.run++
		return true
	}
	s.run = 0
	return false
}

// decider makes the scenario's decisions for one direction. Its random
// source is its own, so its decisions depend only on the datagrams of its
// direction.
type decider struct {
	dir                       Direction
	sc                        *Scenario
	jitter                    time.Duration
	rng                       *rand.Rand
	index                     int // 1-based index of the last datagram
	drop, corrupt, dup, reord rateState
}

func newDecider(dir Direction, sc *Scenario, jitter time.Duration, seed uint64) *decider {
	return &decider{dir: dir, sc: sc, jitter: jitter, rng: rand.New(rand.NewPCG(seed, uint64(dir)+1))}
}

// decide returns the verdict for datagram d arriving at elapsed time
// since the proxy started. It does not modify d.
func (k *decider) decide(elapsed time.Duration, d []byte) verdict {
	k.index++
	v := verdict{corruptAt: -1}
	sc := k.sc
	if slices.Contains(sc.DropList[k.dir], k.index) {
		v.drop = fmt.Sprintf("droplist#%d", k.index)
		return v
	}
	if k.blackholed(elapsed) {
		v.drop = "blackhole"
		return v
	}
	if k.drop.pick(sc.Drop[k.dir], k.rng) {
		v.drop = "rate"
		return v
	}
	if k.corrupt.pick(sc.Corrupt[k.dir], k.rng) && len(d) > 0 && !isVersionNegotiation(d) {
		if sc.CorruptDrops {
			v.drop = "corrupt"
			return v
		}
		v.corruptAt = k.rng.IntN(min(50, len(d)-1) + 1)
		v.corruptTo = d[v.corruptAt] + byte(1+k.rng.IntN(255))
	}
	v.duplicate = k.dup.pick(sc.Duplicate[k.dir], k.rng)
	if k.reord.pick(sc.Reorder[k.dir], k.rng) {
		v.extraDelay = sc.ReorderDelay
	}
	if k.jitter > 0 {
		v.extraDelay += time.Duration(k.rng.Int64N(int64(k.jitter)))
	}
	return v
}

// blackholed reports whether the blackhole scenario cuts this direction
// at elapsed.
func (k *decider) blackholed(elapsed time.Duration) bool {
	b := k.sc.Blackhole
	if b.On <= 0 || b.Off <= 0 {
		return false
	}
	if b.ToServer || b.ToClient {
		if (k.dir == ToServer && !b.ToServer) || (k.dir == ToClient && !b.ToClient) {
			return false
		}
	}
	repeat := max(b.Repeat, 1)
	period := b.On + b.Off
	n := int(elapsed / period)
	if n >= repeat {
		return false
	}
	return elapsed-time.Duration(n)*period >= b.On
}

// isVersionNegotiation reports whether d is a Version Negotiation packet:
// a long header with version 0 (the simulator checks bytes 1 to 4).
func isVersionNegotiation(d []byte) bool {
	return len(d) >= 5 && d[0]&0x80 != 0 && d[1] == 0 && d[2] == 0 && d[3] == 0 && d[4] == 0
}
