package linkem

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// t0 is the start of every link test's clock.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// delivery is one packet as a link test saw it come out.
type delivery struct {
	id       uint64
	sent, at time.Time // when it was pushed, when it was due
	size     int
}

// linkRun pushes n packets of size bytes into l, one every gap from t0,
// each carrying its index, and pops everything as time advances. It
// returns the deliveries in the order Pop gave them.
func linkRun(t *testing.T, l *Link, n, size int, gap time.Duration) []delivery {
	t.Helper()
	var out []delivery
	sent := make([]time.Time, n)
	pop := func(now time.Time) {
		for {
			p, at := l.Pop(now)
			if p == nil {
				return
			}
			if at.After(now) {
				t.Fatalf("Pop at %v returned a packet due at %v", now, at)
			}
			id := binary.BigEndian.Uint64(p.Data)
			out = append(out, delivery{id: id, sent: sent[id], at: at, size: len(p.Data)})
			l.Free(p)
		}
	}
	for i := range n {
		now := t0.Add(time.Duration(i) * gap)
		pop(now)
		p := l.Alloc()
		p.Data = p.Data[:size]
		binary.BigEndian.PutUint64(p.Data, uint64(i))
		sent[i] = now
		l.Push(now, p)
	}
	for {
		d, ok := l.NextDeadline()
		if !ok {
			break
		}
		pop(d)
	}
	return out
}

// within fails the test unless got is within tol of want.
func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.5g; want %.5g ± %.3g", what, got, want, tol)
	}
}

// binomialTol is five standard deviations of the count of successes in n
// trials of probability p: fixed seeds make the tests deterministic, and
// this bound says the seed is not a lucky one.
func binomialTol(n int, p float64) float64 { return 5 * math.Sqrt(float64(n)*p*(1-p)) }

// A link with only a delay hands each packet back exactly Delay after it
// came, in order, and says when the next one is due.
func TestLinkDelay(t *testing.T) {
	l := NewLink(Params{Delay: 25 * time.Millisecond}, LinkOptions{Seed: 1})
	if _, ok := l.NextDeadline(); ok {
		t.Fatal("an empty link has a deadline")
	}
	out := linkRun(t, l, 1000, 100, 37*time.Microsecond)
	if len(out) != 1000 {
		t.Fatalf("%d packets delivered; want 1000", len(out))
	}
	for i, d := range out {
		if d.id != uint64(i) || d.at.Sub(d.sent) != 25*time.Millisecond {
			t.Fatalf("delivery %d: packet %d after %v; want packet %d after 25ms", i, d.id, d.at.Sub(d.sent), i)
		}
	}
	l2 := NewLink(Params{Delay: 10 * time.Millisecond}, LinkOptions{})
	l2.Push(t0, &Packet{Data: make([]byte, 8)})
	if d, ok := l2.NextDeadline(); !ok || !d.Equal(t0.Add(10*time.Millisecond)) {
		t.Fatalf("NextDeadline = %v, %v; want t0+10ms", d, ok)
	}
	if p, _ := l2.Pop(t0.Add(10*time.Millisecond - 1)); p != nil {
		t.Fatal("Pop returned a packet 1ns before it was due")
	}
}

// The serialiser spaces packets by their size at the rate, exactly: 1,500
// bytes take 120 µs at 100 Mbit/s, and 10,000 of them 1.2 s, so that the
// rate is met to the nanosecond, also when a packet's time is not a whole
// number of nanoseconds (the remainder is carried).
func TestLinkRate(t *testing.T) {
	for _, tc := range []struct {
		rate int64
		size int
	}{{100e6, 1500}, {3e6, 1234}, {700e3, 1357}, {1e9, 1500}} {
		l := NewLink(Params{Rate: tc.rate, Queue: 1 << 30}, LinkOptions{})
		const n = 10000
		out := linkRun(t, l, n, tc.size, 0) // all at once
		if len(out) != n {
			t.Fatalf("rate %d: %d delivered; want %d", tc.rate, len(out), n)
		}
		exact := float64(n) * float64(tc.size) * 8 / float64(tc.rate) * 1e9
		last := float64(out[n-1].at.Sub(t0))
		if math.Abs(last-exact) > 1 {
			t.Errorf("rate %d, %d-byte packets: the last of %d left after %v; want %v", tc.rate, tc.size, n, time.Duration(last), time.Duration(exact))
		}
		first := out[0].at.Sub(t0)
		want := time.Duration(tc.size * 8 * int(time.Second) / int(tc.rate))
		if first != want {
			t.Errorf("rate %d: the first packet left after %v; want %v", tc.rate, first, want)
		}
	}
}

// Packets arriving faster than the rate wait in a queue of Queue bytes
// (not counting the packet on the transmitter) and are dropped at its
// tail when it is full; the queue takes packets again as it drains.
func TestLinkQueueTailDrop(t *testing.T) {
	l := NewLink(Params{Rate: 8e6, Queue: 10000}, LinkOptions{}) // 1,000 bytes per ms
	push := func(now time.Time, n int) {
		for range n {
			p := l.Alloc()
			p.Data = p.Data[:1000]
			l.Push(now, p)
		}
	}
	push(t0, 20)
	// One on the transmitter and ten in the queue.
	if s := l.Stats(); s.DroppedQueue != 9 || s.Held != 11 {
		t.Fatalf("20 packets at once into a queue of 10 behind the transmitter: %d dropped, %d held; want 9, 11", s.DroppedQueue, s.Held)
	}
	// 2.5 ms later two packets have left and a third is on the
	// transmitter: 8 wait, so 2 more fit.
	push(t0.Add(2500*time.Microsecond), 5)
	if s := l.Stats(); s.DroppedQueue != 12 || s.Held != 13 {
		t.Fatalf("after 2.5 ms: %d dropped, %d held; want 12, 13", s.DroppedQueue, s.Held)
	}
	// The last admitted packet leaves at 13 ms: the queue's content in
	// time at the rate.
	var last time.Time
	for {
		p, at := l.Pop(t0.Add(time.Second))
		if p == nil {
			break
		}
		last = at
	}
	if want := t0.Add(13 * time.Millisecond); !last.Equal(want) {
		t.Fatalf("last packet left at %v; want %v", last.Sub(t0), want.Sub(t0))
	}
}

// The default queue is 100 ms at the rate, at least 15,000 bytes.
func TestParamsQueueBytes(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		want int
	}{
		{Params{}, 0},
		{Params{Queue: 5000}, 0},
		{Params{Rate: 100e6}, 1250000},
		{Params{Rate: 1e6}, 15000},
		{Params{Rate: 1e6, Queue: 3000}, 3000},
	} {
		if got := tc.p.QueueBytes(); got != tc.want {
			t.Errorf("%+v: QueueBytes %d; want %d", tc.p, got, tc.want)
		}
	}
}

// Random loss loses the given share of packets, independently.
func TestLinkRandomLoss(t *testing.T) {
	const n = 100000
	for _, loss := range []float64{0.01, 0.1, 0.5} {
		l := NewLink(Params{Loss: loss}, LinkOptions{Seed: 7})
		out := linkRun(t, l, n, 64, time.Microsecond)
		lost := n - len(out)
		within(t, "lost packets", float64(lost), loss*n, binomialTol(n, loss))
		if s := l.Stats(); s.DroppedLoss != uint64(lost) || s.Delivered != uint64(len(out)) {
			t.Errorf("stats %+v; want %d lost, %d delivered", s, lost, len(out))
		}
		// Independence: after a loss, the next packet is lost with the
		// same probability.
		got := map[uint64]bool{}
		for _, d := range out {
			got[d.id] = true
		}
		after, both := 0, 0
		for i := uint64(1); i < n; i++ {
			if !got[i-1] {
				after++
				if !got[i] {
					both++
				}
			}
		}
		within(t, "P(loss | loss before)", float64(both)/float64(after), loss, 5*math.Sqrt(loss*(1-loss)/float64(after)))
	}
}

// lossBursts returns the lengths of the runs of lost packets among ids
// 0..n-1, given the delivered ones.
func lossBursts(out []delivery, n int) []int {
	got := make([]bool, n)
	for _, d := range out {
		got[d.id] = true
	}
	var bursts []int
	run := 0
	for _, ok := range got {
		if !ok {
			run++
		} else if run > 0 {
			bursts = append(bursts, run)
			run = 0
		}
	}
	if run > 0 {
		bursts = append(bursts, run)
	}
	return bursts
}

// The Gilbert channel loses packets in bursts whose lengths are geometric
// with the asked mean, at the asked average rate; the general
// Gilbert-Elliott channel loses (P×LossBad + R×LossGood)/(P+R).
func TestLinkGilbertElliott(t *testing.T) {
	const n = 150000
	for _, tc := range []struct{ loss, burst float64 }{{0.01, 2}, {0.05, 4}, {0.2, 10}} {
		l := NewLink(Params{GE: Gilbert(tc.loss, tc.burst)}, LinkOptions{Seed: 11})
		out := linkRun(t, l, n, 64, time.Microsecond)
		lost := float64(n - len(out))
		// The count of Bad packets is a Markov chain's: its variance is
		// larger than a binomial's by (1+λ)/(1-λ), λ = 1-P-R.
		g := Gilbert(tc.loss, tc.burst)
		lambda := 1 - g.P - g.R
		tol := binomialTol(n, tc.loss) * math.Sqrt((1+lambda)/(1-lambda))
		within(t, "lost packets", lost, tc.loss*n, tol)
		if s := l.Stats(); s.DroppedBurst != uint64(lost) {
			t.Errorf("DroppedBurst %d; want %v", s.DroppedBurst, lost)
		}
		bursts := lossBursts(out, n)
		sum := 0
		for _, b := range bursts {
			sum += b
		}
		mean := float64(sum) / float64(len(bursts))
		// A geometric length of mean m has a standard deviation of
		// sqrt(m(m-1)).
		within(t, "mean burst length", mean, tc.burst, 5*math.Sqrt(tc.burst*(tc.burst-1)/float64(len(bursts))))
	}
	ge := GilbertElliott{P: 0.02, R: 0.3, LossBad: 0.6, LossGood: 0.005}
	l := NewLink(Params{GE: ge}, LinkOptions{Seed: 3})
	out := linkRun(t, l, n, 64, time.Microsecond)
	want := ge.MeanLoss()
	within(t, "Gilbert-Elliott loss rate", float64(n-len(out))/n, want, 0.1*want)
	within(t, "MeanLoss", want, (0.02*0.6+0.3*0.005)/0.32, 1e-12)
}

// Order-keeping jitter spreads the delay over Delay ± Jitter around a mean
// of Delay and never lets a packet overtake an earlier one, at 100 Mbit/s
// as at one packet per 30 ms.
func TestLinkJitterKeepsOrder(t *testing.T) {
	const delay, jitter = 50 * time.Millisecond, 10 * time.Millisecond
	for _, gap := range []time.Duration{120 * time.Microsecond, 30 * time.Millisecond} {
		l := NewLink(Params{Delay: delay, Jitter: jitter}, LinkOptions{Seed: 5})
		n := 20000
		out := linkRun(t, l, n, 1500, gap)
		if len(out) != n {
			t.Fatalf("%d delivered; want %d", len(out), n)
		}
		var sum, lo, hi float64 = 0, math.Inf(1), math.Inf(-1)
		for i, d := range out {
			if d.id != uint64(i) {
				t.Fatalf("gap %v: delivery %d is packet %d: jitter reordered", gap, i, d.id)
			}
			v := float64(d.at.Sub(d.sent) - delay)
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo < -float64(jitter) || hi > float64(jitter) {
			t.Errorf("gap %v: variation in [%v, %v]; want within ±%v", gap, time.Duration(lo), time.Duration(hi), jitter)
		}
		if hi-lo < 1.6*float64(jitter) {
			t.Errorf("gap %v: variation spans only [%v, %v] of ±%v", gap, time.Duration(lo), time.Duration(hi), jitter)
		}
		// The process draws a new target every 4×Jitter: the run covers
		// n×gap/40ms targets, whose mean has a standard deviation of
		// about Jitter/sqrt(3×targets).
		targets := float64(n) * float64(gap) / float64(4*jitter)
		within(t, "mean variation (ms)", sum/float64(n)/1e6, 0, 5*float64(jitter)/1e6/math.Sqrt(3*targets))
	}
}

// Independent jitter draws each packet's variation uniformly and reorders
// packets closer together than the jitter.
func TestLinkJitterReorder(t *testing.T) {
	const delay, jitter, n = 50 * time.Millisecond, 10 * time.Millisecond, 50000
	l := NewLink(Params{Delay: delay, Jitter: jitter, JitterReorder: true}, LinkOptions{Seed: 5})
	out := linkRun(t, l, n, 200, 100*time.Microsecond)
	var sum, sq float64
	overtaken, latest := 0, uint64(0)
	for _, d := range out {
		v := float64(d.at.Sub(d.sent)-delay) / float64(jitter)
		sum += v
		sq += v * v
		if d.id < latest {
			overtaken++
		}
		latest = max(latest, d.id)
	}
	// Uniform on [-1, 1]: mean 0, variance 1/3.
	within(t, "mean variation / jitter", sum/n, 0, 5*math.Sqrt(1.0/3/n))
	within(t, "variance / jitter²", sq/n, 1.0/3, 0.01)
	if overtaken < n/2 {
		t.Errorf("%d of %d packets overtaken; want most, with packets 0.1 ms apart and ±10 ms of jitter", overtaken, n)
	}
}

// Reordering holds the chosen share of packets back by ReorderDelay; the
// packets behind them overtake them.
func TestLinkReorder(t *testing.T) {
	const n, share = 100000, 0.02
	l := NewLink(Params{Delay: 5 * time.Millisecond, Reorder: share, ReorderDelay: 3 * time.Millisecond}, LinkOptions{Seed: 9})
	out := linkRun(t, l, n, 100, 100*time.Microsecond)
	held := 0
	for _, d := range out {
		switch d.at.Sub(d.sent) {
		case 5 * time.Millisecond:
		case 8 * time.Millisecond:
			held++
		default:
			t.Fatalf("packet %d delayed %v; want 5ms or 8ms", d.id, d.at.Sub(d.sent))
		}
	}
	within(t, "reordered packets", float64(held), share*n, binomialTol(n, share))
	if s := l.Stats(); s.Reordered != uint64(held) {
		t.Errorf("Reordered %d; want %d", s.Reordered, held)
	}
	// A held packet comes after the 29 sent in the 3 ms behind it, and
	// before the next one, due at the same time but sent later.
	pos, isHeld := map[uint64]int{}, map[uint64]bool{}
	for i, d := range out {
		pos[d.id] = i
		isHeld[d.id] = d.at.Sub(d.sent) == 8*time.Millisecond
	}
	for i, d := range out {
		if !isHeld[d.id] || d.id+30 >= n || isHeld[d.id+29] || isHeld[d.id+30] {
			continue
		}
		if pos[d.id+29] > i || pos[d.id+30] < i {
			t.Fatalf("held packet %d delivered at %d, packets %d and %d at %d and %d", d.id, i, d.id+29, d.id+30, pos[d.id+29], pos[d.id+30])
		}
	}
	// Without ReorderDelay, 10 ms.
	if got := (Params{}).reorderDelay(); got != 10*time.Millisecond {
		t.Errorf("default reorder delay %v; want 10ms", got)
	}
}

// Duplication sends the chosen share of packets twice, byte for byte.
func TestLinkDuplicate(t *testing.T) {
	const n, share = 100000, 0.03
	l := NewLink(Params{Delay: time.Millisecond, Duplicate: share}, LinkOptions{Seed: 2})
	out := linkRun(t, l, n, 100, 10*time.Microsecond)
	seen := map[uint64]int{}
	for _, d := range out {
		seen[d.id]++
	}
	dups := len(out) - n
	within(t, "duplicated packets", float64(dups), share*n, binomialTol(n, share))
	for id, c := range seen {
		if c > 2 {
			t.Fatalf("packet %d delivered %d times", id, c)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct packets delivered; want %d", len(seen), n)
	}
	if s := l.Stats(); s.Duplicated != uint64(dups) {
		t.Errorf("Duplicated %d; want %d", s.Duplicated, dups)
	}
}

// The same seed makes the same decisions, and enabling one impairment
// leaves another's decisions as they were: each has its own random stream.
func TestLinkSeeds(t *testing.T) {
	ids := func(p Params, seed uint64) []uint64 {
		l := NewLink(p, LinkOptions{Seed: seed})
		var r []uint64
		for _, d := range linkRun(t, l, 20000, 64, 50*time.Microsecond) {
			r = append(r, d.id)
		}
		return r
	}
	lossy := Params{Loss: 0.1, Delay: 10 * time.Millisecond}
	a, b := ids(lossy, 42), ids(lossy, 42)
	if !equalIDs(a, b) {
		t.Fatal("two runs with the same seed lost different packets")
	}
	if c := ids(lossy, 43); equalIDs(a, c) {
		t.Fatal("two seeds lost the same packets")
	}
	withJitter := lossy
	withJitter.Jitter, withJitter.Reorder = 2*time.Millisecond, 0.05
	d := ids(withJitter, 42)
	sortIDs(d)
	if !equalIDs(a, d) {
		t.Fatal("adding jitter and reordering changed which packets were lost")
	}
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortIDs(a []uint64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// New parameters apply to packets that arrive from then on; the packets
// held keep their schedule, and the link stays in order when the delay
// drops.
func TestLinkSetParams(t *testing.T) {
	l := NewLink(Params{Delay: 50 * time.Millisecond}, LinkOptions{})
	push := func(at time.Duration, id byte) {
		l.Push(t0.Add(at), &Packet{Data: []byte{id}})
	}
	push(0, 1)
	l.SetParams(t0.Add(time.Millisecond), Params{Delay: 10 * time.Millisecond})
	push(time.Millisecond, 2)    // due at 11 ms, waits for packet 1 at 50 ms
	push(60*time.Millisecond, 3) // due at 70 ms
	l.SetParams(t0.Add(61*time.Millisecond), Params{Delay: 10 * time.Millisecond, Loss: 1})
	push(61*time.Millisecond, 4) // lost
	want := []struct {
		id byte
		at time.Duration
	}{{1, 50 * time.Millisecond}, {2, 50 * time.Millisecond}, {3, 70 * time.Millisecond}}
	for _, w := range want {
		p, at := l.Pop(t0.Add(time.Second))
		if p == nil || p.Data[0] != w.id || at.Sub(t0) != w.at {
			t.Fatalf("got packet %v at %v; want %d at %v", p, at.Sub(t0), w.id, w.at)
		}
	}
	if p, _ := l.Pop(t0.Add(time.Hour)); p != nil {
		t.Fatalf("packet %d delivered through a link losing everything", p.Data[0])
	}
	// A rate change applies behind the packets already queued.
	l = NewLink(Params{Rate: 8e6, Queue: 1e6}, LinkOptions{}) // 1,000 bytes per ms
	for i := range 3 {
		l.Push(t0, &Packet{Data: make([]byte, 1000)})
		_ = i
	}
	l.SetParams(t0, Params{Rate: 80e6, Queue: 1e6})
	l.Push(t0, &Packet{Data: make([]byte, 1000)})
	var last time.Time
	for p, at := l.Pop(t0.Add(time.Hour)); p != nil; p, at = l.Pop(t0.Add(time.Hour)) {
		last = at
	}
	if want := 3*time.Millisecond + 100*time.Microsecond; last.Sub(t0) != want {
		t.Fatalf("after a rate change, the new packet left at %v; want %v", last.Sub(t0), want)
	}
}

// A link holds at most MaxPackets packets; the rest are dropped.
func TestLinkMaxPackets(t *testing.T) {
	l := NewLink(Params{Delay: time.Second}, LinkOptions{MaxPackets: 100})
	for range 150 {
		l.Push(t0, l.Alloc())
	}
	if s := l.Stats(); s.Held != 100 || s.DroppedLimit != 50 {
		t.Fatalf("held %d, dropped %d; want 100, 50", s.Held, s.DroppedLimit)
	}
	l = NewLink(Params{Rate: 1e3, Queue: 1 << 20}, LinkOptions{MaxPackets: 10})
	for range 20 {
		p := l.Alloc()
		p.Data = p.Data[:10]
		l.Push(t0, p)
	}
	if s := l.Stats(); s.Held != 10 || s.DroppedLimit != 10 || s.DroppedQueue != 0 {
		t.Fatalf("rate-limited: held %d, dropped %d+%d; want 10, 10+0", s.Held, s.DroppedLimit, s.DroppedQueue)
	}
}

// Pushing and popping through every impairment allocates nothing once the
// pool and the delay line have grown.
func TestLinkAllocs(t *testing.T) {
	p := Params{
		Delay: 20 * time.Millisecond, Jitter: 3 * time.Millisecond, Loss: 0.01, GE: Gilbert(0.01, 3),
		Rate: 100e6, Reorder: 0.01, Duplicate: 0.01,
	}
	l := NewLink(p, LinkOptions{Seed: 1, PacketSize: 1500})
	now := t0
	step := func() {
		now = now.Add(100 * time.Microsecond)
		for {
			q, _ := l.Pop(now)
			if q == nil {
				break
			}
			l.Free(q)
		}
		q := l.Alloc()
		q.Data = q.Data[:1500]
		l.Push(now, q)
	}
	for range 5000 {
		step()
	}
	if a := testing.AllocsPerRun(2000, step); a != 0 {
		t.Fatalf("%v allocations per packet; want 0", a)
	}
}

// BenchmarkLink measures the state machine's cost per packet through every
// impairment at 100 Mbit/s of 1,500-byte packets.
func BenchmarkLink(b *testing.B) {
	p := Params{
		Delay: 20 * time.Millisecond, Jitter: 3 * time.Millisecond, Loss: 0.01, GE: Gilbert(0.01, 3),
		Rate: 100e6, Reorder: 0.01, Duplicate: 0.01,
	}
	l := NewLink(p, LinkOptions{Seed: 1})
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(120 * time.Microsecond)
		for {
			q, _ := l.Pop(now)
			if q == nil {
				break
			}
			l.Free(q)
		}
		q := l.Alloc()
		q.Data = q.Data[:1500]
		l.Push(now, q)
	}
}

// Gilbert's corner cases: no loss, total loss, and a mean loss and burst
// length that come out as asked.
func TestGilbert(t *testing.T) {
	if g := Gilbert(0, 3); g.Enabled() {
		t.Errorf("Gilbert(0, 3) = %+v loses", g)
	}
	if g := Gilbert(0.1, 0.5); g.Enabled() {
		t.Errorf("Gilbert(0.1, 0.5) = %+v loses", g)
	}
	if g := Gilbert(1, 3); g.MeanLoss() != 1 || (Params{GE: g}).Validate() != nil {
		t.Errorf("Gilbert(1, 3) = %+v: mean loss %v", g, g.MeanLoss())
	}
	g := Gilbert(0.05, 4)
	within(t, "mean loss", g.MeanLoss(), 0.05, 1e-12)
	within(t, "mean burst", 1/g.R, 4, 1e-12)
	if err := (Params{GE: g}).Validate(); err != nil {
		t.Error(err)
	}
}
