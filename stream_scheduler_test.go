package quic

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// The stream scheduler's rules (priority.go, stream_scheduler.go), each
// checked on the simulator by the order in which the server receives the
// client's STREAM frames: the link neither loses nor reorders unless a
// test says so, so the arrival order is the sending order.

// frameRec is one frame the server received, in arrival order.
type frameRec struct {
	t      wire.FrameType
	id     wire.StreamID
	off    uint64
	n      int
	fin    bool
	hasFin bool
}

func recordFrames(c *connState) *[]frameRec {
	var log []frameRec
	c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		switch {
		case f.Type.IsStream():
			log = append(log, frameRec{t: wire.FrameTypeStream, id: f.Stream.StreamID, off: f.Stream.Offset, n: len(f.Stream.Data), fin: f.Stream.Fin})
		case f.Type == wire.FrameTypeResetStream:
			log = append(log, frameRec{t: f.Type, id: f.ResetStream.StreamID})
		}
	}
	return &log
}

// streamFrames returns the indexes in log of the STREAM frames of id.
func streamFrames(log []frameRec, id wire.StreamID) []int {
	var idx []int
	for i, r := range log {
		if r.t == wire.FrameTypeStream && r.id == id {
			idx = append(idx, i)
		}
	}
	return idx
}

// sequential is RFC 9218's default priority for HTTP responses: urgency
// 3, not incremental.
var sequential = Priority{Urgency: 3}

// prioPair connects a pair whose server reads whatever arrives, with
// windows large enough that flow control holds nothing back.
func prioPair(t testing.TB, link netsim.LinkConfig, seed uint64) (*simPair, *[]frameRec) {
	t.Helper()
	cfg := &Config{
		InitialStreamReceiveWindow: 4 << 20, MaxStreamReceiveWindow: 4 << 20,
		InitialConnectionReceiveWindow: 64 << 20, MaxConnectionReceiveWindow: 64 << 20,
	}
	p := newSimPair(t, link, cfg, seed)
	p.connect(t)
	return p, recordFrames(p.server.c)
}

// openPrio opens a client uni stream with priority prio and writes size
// bytes of pattern k, then a FIN.
func openPrio(t testing.TB, p *simPair, prio Priority, k, size int) (*stream, *patternWriter) {
	t.Helper()
	s, _, err := p.client.c.streams.openStream(false)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v", err)
	}
	s.setPriority(prio)
	w := newPatternWriter(s, k, size)
	w.step()
	return s, w
}

// readAll runs the pair until the server read every stream to its end,
// checking the data, and the writers queued everything.
func readAll(t testing.TB, p *simPair, writers []*patternWriter, n int) {
	t.Helper()
	readers := map[wire.StreamID]*patternReader{}
	p.run(t, time.Minute, func() bool {
		for _, w := range writers {
			w.step()
		}
		for _, s := range acceptAll(p.server.c, false) {
			for _, w := range writers {
				if w.s.id == s.id {
					readers[s.id] = newPatternReader(t, s, int(s.id.Num())-1)
				}
			}
		}
		done := len(readers) == n
		for _, r := range readers {
			done = r.step(0) && done
		}
		return done
	})
}

// "servers respect the urgency parameter ... sending higher-urgency
// responses before lower-urgency responses" (RFC 9218, Section 10): all
// of the urgent stream's data goes before any of the others', whatever
// the order of the writes.
func TestSimPriorityUrgencyOrder(t *testing.T) {
	p, log := prioPair(t, testLink, 501)
	const size = 200 << 10
	a, wa := openPrio(t, p, Priority{Urgency: 7}, 0, size)
	b, wb := openPrio(t, p, sequential, 1, size)
	c, wc := openPrio(t, p, Priority{Urgency: 0, Incremental: true}, 2, size)
	readAll(t, p, []*patternWriter{wa, wb, wc}, 3)
	fa, fb, fc := streamFrames(*log, a.id), streamFrames(*log, b.id), streamFrames(*log, c.id)
	if fc[len(fc)-1] > fb[0] || fb[len(fb)-1] > fa[0] {
		t.Errorf("frames of u=0 at %d..%d, u=3 at %d..%d, u=7 at %d..%d: want u=0, u=3, u=7 in turn",
			fc[0], fc[len(fc)-1], fb[0], fb[len(fb)-1], fa[0], fa[len(fa)-1])
	}
}

// "Non-incremental responses of the same urgency SHOULD be served by
// prioritizing bandwidth allocation in ascending order of the stream ID"
// (RFC 9218, Section 10): a stream with a lower ID that gets data takes
// over from one with a higher ID, and each is sent to its end in turn.
func TestSimPriorityNonIncrementalInIDOrder(t *testing.T) {
	p, log := prioPair(t, testLink, 502)
	const size = 100 << 10
	var streams []*stream
	for range 4 {
		s, _, _ := p.client.c.streams.openStream(false)
		s.setPriority(sequential)
		streams = append(streams, s)
	}
	// The last opened writes first, and sends for a while alone.
	w3 := newPatternWriter(streams[3], 3, 2*size)
	w3.step()
	p.cnode.Wake()
	p.sim.RunFor(15 * time.Millisecond)
	var writers = []*patternWriter{w3}
	for _, k := range []int{2, 0, 1} {
		w := newPatternWriter(streams[k], k, size)
		w.step()
		writers = append(writers, w)
	}
	start := len(*log)
	if start == 0 || len(streamFrames(*log, streams[3].id)) == 0 {
		t.Fatal("nothing of the first stream arrived before the others wrote")
	}
	readAll(t, p, writers, 4)
	// After the frames in flight when the others wrote (all of stream 3),
	// the streams come one by one in ID order: 0, 1, 2, then the rest of 3.
	rest := (*log)[start:]
	i := 0
	for i < len(rest) && rest[i].id == streams[3].id {
		i++
	}
	var order []wire.StreamID
	for _, r := range rest[i:] {
		if r.t != wire.FrameTypeStream {
			continue
		}
		if len(order) == 0 || order[len(order)-1] != r.id {
			order = append(order, r.id)
		}
	}
	want := []wire.StreamID{streams[0].id, streams[1].id, streams[2].id, streams[3].id}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("runs of frames by stream %v, want %v", order, want)
	}
}

// "Incremental responses of the same urgency SHOULD be served by sharing
// bandwidth among them" (RFC 9218, Section 10): the streams take turns of
// incrementalQuantum bytes.
func TestSimPriorityIncrementalRoundRobin(t *testing.T) {
	p, log := prioPair(t, testLink, 503)
	const size = 100 << 10
	var writers []*patternWriter
	var ids []wire.StreamID
	for k := range 4 {
		s, w := openPrio(t, p, Priority{Urgency: 4, Incremental: true}, k, size)
		s.setPriority(Priority{Urgency: 4, Incremental: true})
		writers = append(writers, w)
		ids = append(ids, s.id)
	}
	for k, w := range writers {
		if int(w.s.id.Num())-1 != k {
			t.Fatalf("stream %d has pattern %d", w.s.id, k)
		}
	}
	readAll(t, p, writers, 4)
	// Runs of consecutive frames of one stream: each a turn of about
	// incrementalQuantum bytes (the last frame of a turn may go past it),
	// the streams in rotation.
	type run struct {
		id    wire.StreamID
		bytes int
	}
	var runs []run
	for _, r := range *log {
		if r.t != wire.FrameTypeStream {
			continue
		}
		if len(runs) == 0 || runs[len(runs)-1].id != r.id {
			runs = append(runs, run{id: r.id})
		}
		runs[len(runs)-1].bytes += r.n
	}
	if len(runs) < 4*(size/incrementalQuantum) {
		t.Fatalf("%d runs of frames, want a turn per %d bytes: %v", len(runs), incrementalQuantum, runs)
	}
	last := map[wire.StreamID]int{}
	for i, r := range runs {
		last[r.id] = i
	}
	for i, r := range runs {
		if i != last[r.id] && (r.bytes < incrementalQuantum-1400 || r.bytes > incrementalQuantum+1400) {
			t.Errorf("turn %d of stream %d: %d bytes, want about %d", i, r.id, r.bytes, incrementalQuantum)
		}
		if i >= 4 && runs[i-4].id != r.id && i < len(runs)-4 {
			t.Errorf("turn %d went to stream %d, want %d (rotation)", i, r.id, runs[i-4].id)
		}
	}
}

// Non-incremental and incremental streams of one urgency take turns:
// "It is RECOMMENDED that servers avoid such starvation where possible"
// (RFC 9218, Section 10).
func TestSimPriorityMixedUrgencyShares(t *testing.T) {
	p, log := prioPair(t, testLink, 504)
	const size = 300 << 10
	a, wa := openPrio(t, p, sequential, 0, size)
	b, wb := openPrio(t, p, Priority{Urgency: 3, Incremental: true}, 1, size)
	readAll(t, p, []*patternWriter{wa, wb}, 2)
	fa, fb := streamFrames(*log, a.id), streamFrames(*log, b.id)
	if fb[0] > fa[len(fa)/4] || fa[0] > fb[len(fb)/4] {
		t.Errorf("frames of the non-incremental stream at %d..%d, of the incremental one at %d..%d: want both to progress",
			fa[0], fa[len(fa)-1], fb[0], fb[len(fb)-1])
	}
}

// SetPriority takes effect for data written before: a stream raised
// above the one sending takes over at once.
func TestSimPriorityChangeWhileSending(t *testing.T) {
	p, log := prioPair(t, testLink, 505)
	const size = 400 << 10
	a, wa := openPrio(t, p, sequential, 0, size)
	b, wb := openPrio(t, p, sequential, 1, size)
	p.cnode.Wake()
	p.sim.RunFor(40 * time.Millisecond)
	if len(streamFrames(*log, a.id)) == 0 || len(streamFrames(*log, b.id)) != 0 {
		t.Fatalf("before the change: %d frames of the lower stream ID, %d of the higher; want some and none",
			len(streamFrames(*log, a.id)), len(streamFrames(*log, b.id)))
	}
	(&Stream{s: b}).SetPriority(Priority{Urgency: 1})
	if got := (&Stream{s: b}).Priority(); got != (Priority{Urgency: 1}) {
		t.Errorf("Priority() = %+v", got)
	}
	readAll(t, p, []*patternWriter{wa, wb}, 2)
	fa, fb := streamFrames(*log, a.id), streamFrames(*log, b.id)
	// Frames of a in flight at the change arrive before b's first; none after.
	for _, i := range fa {
		if i > fb[0] && i < fb[len(fb)-1] {
			t.Fatalf("a frame of the stream lowered at %d, among the raised stream's frames (%d..%d)", i, fb[0], fb[len(fb)-1])
		}
	}
	if fa[len(fa)-1] < fb[len(fb)-1] {
		t.Errorf("the lowered stream finished first")
	}
}

// Control frames do not wait for the data of more urgent streams: the
// RESET_STREAM of a background stream goes out while an urgent one sends.
func TestSimPriorityControlFramesFirst(t *testing.T) {
	p, log := prioPair(t, testLink, 506)
	a, _ := openPrio(t, p, Priority{Urgency: 7}, 0, 100<<10)
	c, wc := openPrio(t, p, Priority{Urgency: 0}, 1, 2<<20)
	p.cnode.Wake()
	p.sim.RunFor(30 * time.Millisecond)
	a.cancelWrite(7)
	readAll(t, p, []*patternWriter{wc}, 1)
	reset := -1
	for i, r := range *log {
		if r.t == wire.FrameTypeResetStream && r.id == a.id {
			reset = i
		}
	}
	fc := streamFrames(*log, c.id)
	if reset < 0 || reset > fc[len(fc)/2] {
		t.Errorf("RESET_STREAM at %d, the urgent stream's frames at %d..%d: want it early", reset, fc[0], fc[len(fc)-1])
	}
}

// "Endpoints SHOULD prioritize retransmission of data over sending new
// data, unless priorities specified by the application indicate
// otherwise" (RFC 9000, Section 13.3): lost data of a background stream is
// sent again before the new data of an urgent one, whose data otherwise
// goes first.
func TestSimPriorityRetransmissionsFirst(t *testing.T) {
	p, log := prioPair(t, testLink, 507)
	a, wa := openPrio(t, p, Priority{Urgency: 7}, 0, 200<<10)
	// The client's third datagram from now, which carries a's data, is lost.
	k := 0
	p.client.dropOut = func(time.Time, []byte) bool { k++; return k == 3 }
	p.cnode.Wake()
	p.sim.RunFor(2 * time.Millisecond)
	if p.client.droppedOut != 1 {
		t.Fatalf("%d datagrams dropped", p.client.droppedOut)
	}
	sentA := uint64(0)
	a.mu.Lock()
	sentA = a.send.sentOffset()
	a.mu.Unlock()
	c, wc := openPrio(t, p, Priority{Urgency: 0}, 1, 4<<20)
	readAll(t, p, []*patternWriter{wa, wc}, 2)
	fc := streamFrames(*log, c.id)
	resent, newer := -1, -1
	for _, i := range streamFrames(*log, a.id) {
		r := (*log)[i]
		if i > fc[0] && r.off < sentA && resent < 0 {
			resent = i
		}
		if r.off >= sentA && newer < 0 {
			newer = i
		}
	}
	if resent < 0 || resent > fc[len(fc)/2] {
		t.Errorf("retransmission of the background stream at %d, the urgent stream's frames at %d..%d: want it early",
			resent, fc[0], fc[len(fc)-1])
	}
	if newer < fc[len(fc)-1] {
		t.Errorf("new data of the background stream at %d, before the urgent stream's end at %d", newer, fc[len(fc)-1])
	}
}

// BenchmarkSimPriorityStreams sends 64 MiB spread over n streams of mixed
// priorities over a 1 Gbit/s simulated link, with a queue long enough
// that nothing is lost: the cost per packet must not grow with n. (With
// losses, the ackhandler's loss detection walks the packets sent since
// the oldest lost one it keeps, for two PTOs, at every ACK, which
// dominates at high rates whatever the number of streams.)
//
//	go test -run X -bench BenchmarkSimPriorityStreams -benchtime 5x
func BenchmarkSimPriorityStreams(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			link := netsim.LinkConfig{Bandwidth: 1_000_000_000, Delay: 5 * time.Millisecond, QueuePackets: 100000}
			cfg := &Config{
				MaxIncomingUniStreams: 1 << 20, InitialStreamReceiveWindow: 16 << 20, MaxStreamReceiveWindow: 16 << 20,
				InitialConnectionReceiveWindow: 256 << 20, MaxConnectionReceiveWindow: 256 << 20,
			}
			p := newSimPair(b, link, cfg, 508)
			p.connect(b)
			per := (64 << 20) / n
			total := int64(0)
			buf := make([]byte, 64<<10)
			var readers []*stream
			round := func() {
				var writers []*patternWriter
				for k := range n {
					s, _, _ := p.client.c.streams.openStream(false)
					if s == nil {
						b.Fatal("stream limit")
					}
					s.setPriority(Priority{Urgency: uint8(k % 8), Incremental: k%3 == 0})
					writers = append(writers, newPatternWriter(s, k, per))
				}
				var got int64
				want := got + int64(n*per)
				p.run(b, time.Minute, func() bool {
					for _, w := range writers {
						w.step()
					}
					readers = append(readers, acceptAll(p.server.c, false)...)
					keep := readers[:0]
					for _, s := range readers {
						for {
							k, err := simRead(s, buf)
							got += int64(k)
							if err == io.EOF {
								break
							}
							if err != nil {
								b.Fatal(err)
							}
							if k == 0 {
								keep = append(keep, s)
								break
							}
						}
					}
					readers = keep
					p.snode.Wake()
					return got >= want
				})
				total += got
			}
			round() // warm-up
			b.SetBytes(int64(n * per))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				round()
			}
		})
	}
}

// urgentAmongBackground returns how long, in simulated time, the server
// takes to receive a 500 KB stream at priority urgent over the interop
// runner's link (10 Mbit/s, 30 ms RTT, a queue of 25 packets), while
// background streams of 1 MB at priority bg, started 500 ms before, are
// in flight (none with background 0).
func urgentAmongBackground(t *testing.T, background int, bg, urgent Priority) time.Duration {
	link := netsim.LinkConfig{Bandwidth: 10_000_000, Delay: 15 * time.Millisecond, QueuePackets: 25}
	p, _ := prioPair(t, link, 509)
	var writers []*patternWriter
	readers := map[wire.StreamID]*patternReader{}
	step := func() {
		for _, w := range writers {
			w.step()
		}
		for _, s := range acceptAll(p.server.c, false) {
			readers[s.id] = newPatternReader(t, s, int(s.id.Num())-1)
		}
		for _, r := range readers {
			r.step(0)
		}
	}
	for k := range background {
		_, w := openPrio(t, p, bg, k, 1<<20)
		writers = append(writers, w)
	}
	if background > 0 {
		end := p.sim.Now().Add(500 * time.Millisecond)
		p.run(t, time.Second, func() bool { step(); return !p.sim.Now().Before(end) })
		// Incremental streams all started; non-incremental ones one by one.
		if want := 1 + (background-1)*boolToInt(bg.Incremental); len(readers) != want {
			t.Fatalf("%d of %d background streams started, want %d", len(readers), background, want)
		}
	}
	s, w := openPrio(t, p, urgent, background, 500_000)
	writers = append(writers, w)
	start := p.sim.Now()
	p.run(t, time.Minute, func() bool {
		step()
		r := readers[s.id]
		return r != nil && r.eof
	})
	return p.sim.Now().Sub(start)
}

// The figure of issue 30: an urgent response among 20 incremental
// background responses of 1 MB completes within 1.3 times its time
// alone (on the simulator, for the QUIC layer; example/priority measures
// the same through HTTP/3 over the netem relay); with every stream at the
// default priority it waits for the others.
func TestSimPriorityUrgentAmongBackground(t *testing.T) {
	alone := urgentAmongBackground(t, 0, DefaultPriority, Priority{Urgency: 0})
	prio := urgentAmongBackground(t, 20, Priority{Urgency: 5, Incremental: true}, Priority{Urgency: 0})
	// Without priorities: all at HTTP's default (in stream-ID order), or
	// all at this package's (in turns).
	none := urgentAmongBackground(t, 20, sequential, sequential)
	shared := urgentAmongBackground(t, 20, DefaultPriority, DefaultPriority)
	t.Logf("500 KB alone %v; among 20 background streams of 1 MB: with priorities %v (%.2fx); without, all u=3: %v (%.2fx), all u=3, i: %v (%.2fx)",
		alone, prio, float64(prio)/float64(alone), none, float64(none)/float64(alone), shared, float64(shared)/float64(alone))
	if float64(prio) > 1.3*float64(alone) {
		t.Errorf("urgent stream took %v among background streams, %v alone: more than 1.3x", prio, alone)
	}
	if float64(none) < 2*float64(alone) || float64(shared) < 2*float64(alone) {
		t.Errorf("without priorities the stream took %v and %v, %v alone: the test shows no difference", none, shared, alone)
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Streams nobody prioritized take turns (DefaultPriority is incremental):
// a stream that always has data cannot hold back one opened after it.
func TestSimPriorityDefaultSharesBandwidth(t *testing.T) {
	p, log := prioPair(t, testLink, 510)
	bulk, _, _ := p.client.c.streams.openStream(false)
	wb := newPatternWriter(bulk, 0, 1<<20)
	wb.step()
	p.cnode.Wake()
	p.sim.RunFor(20 * time.Millisecond)
	small, _, _ := p.client.c.streams.openStream(false)
	ws := newPatternWriter(small, 1, 20_000)
	ws.step()
	if bulk.priority() != DefaultPriority || small.priority() != DefaultPriority {
		t.Fatalf("priorities %+v, %+v", bulk.priority(), small.priority())
	}
	readAll(t, p, []*patternWriter{wb, ws}, 2)
	fb, fs := streamFrames(*log, bulk.id), streamFrames(*log, small.id)
	if fs[len(fs)-1] > fb[len(fb)/2] {
		t.Errorf("the small stream's last frame at %d, the bulk stream's frames at %d..%d: it waited", fs[len(fs)-1], fb[0], fb[len(fb)-1])
	}
}
