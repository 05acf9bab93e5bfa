package qpack

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fieldGen produces realistic, repetitive header lists with some noise.
type fieldGen struct {
	rng *rand.Rand
}

func (g *fieldGen) pick(vals ...string) string { return vals[g.rng.IntN(len(vals))] }

func (g *fieldGen) randString(n int, binary bool) string {
	b := make([]byte, n)
	for i := range b {
		if binary {
			b[i] = byte(g.rng.IntN(256))
		} else {
			b[i] = byte('a' + g.rng.IntN(26))
		}
	}
	return string(b)
}

func (g *fieldGen) request() []HeaderField {
	r := g.rng
	f := []HeaderField{
		{Name: ":method", Value: g.pick("GET", "GET", "GET", "POST", "PATCH")},
		{Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: g.pick("www.example.com", "api.example.com", "static.example.net")},
		{Name: ":path", Value: g.pick("/", "/index.html", "/api/v1/items", "/api/v1/users/17", "/static/app.js") +
			g.pick("", "", fmt.Sprintf("?q=%d", r.IntN(50)))},
		{Name: "user-agent", Value: g.pick("Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0", "curl/8.5.0")},
		{Name: "accept", Value: g.pick("*/*", "text/html,application/xhtml+xml", "application/json")},
		{Name: "accept-encoding", Value: "gzip, deflate, br"},
	}
	if r.IntN(2) == 0 {
		f = append(f, HeaderField{Name: "cookie", Value: g.pick("session=abc123", "id="+strings.Repeat("z", 80), "a=b; c=d")})
	}
	if r.IntN(4) == 0 {
		f = append(f, HeaderField{Name: "authorization", Value: "Bearer " + g.randString(20, false), NeverIndex: true})
	}
	for i := r.IntN(4); i > 0; i-- {
		f = append(f, HeaderField{Name: fmt.Sprintf("x-custom-%d", r.IntN(6)), Value: g.pick("1", "yes", "", g.randString(r.IntN(30), r.IntN(3) == 0))})
	}
	if r.IntN(40) == 0 {
		f = append(f, HeaderField{Name: "x-big", Value: g.randString(300+r.IntN(3000), false)})
	}
	if r.IntN(20) == 0 {
		f = append(f, HeaderField{Name: g.randString(1+r.IntN(8), true), Value: g.randString(r.IntN(10), true)})
	}
	r.Shuffle(len(f)-4, func(i, j int) { f[4+i], f[4+j] = f[4+j], f[4+i] })
	return f
}

func (g *fieldGen) response() []HeaderField {
	f := []HeaderField{
		{Name: ":status", Value: g.pick("200", "200", "304", "404", "201")},
		{Name: "server", Value: "quicstack"},
		{Name: "content-type", Value: g.pick("text/html; charset=utf-8", "application/json", "image/webp")},
		{Name: "date", Value: fmt.Sprintf("Mon, 21 Oct 2013 20:13:%02d GMT", g.rng.IntN(60))},
	}
	if g.rng.IntN(3) == 0 {
		f = append(f, HeaderField{Name: "set-cookie", Value: "t=" + g.randString(10, false)})
	}
	return f
}

type simSection struct {
	enc    []byte
	fields []HeaderField
}

type simStream struct {
	id        uint64
	pending   []simSection // encoded, not yet decoded, in stream order
	blocked   bool         // the decoder holds pending[0] as blocked
	cancelled bool
}

// TestRandomisedExchange encodes thousands of header lists on many streams
// and delivers everything with random timing: encoder stream data in random
// chunks and late, field sections out of order across streams (in order
// within one), decoder stream data (acknowledgments) late and in random
// chunks, and some streams cancelled before their sections are processed.
// The decoder must return every list exactly, and the encoder must never
// allow more potentially blocked streams than the peer's
// SETTINGS_QPACK_BLOCKED_STREAMS.
func TestRandomisedExchange(t *testing.T) {
	configs := []struct{ capacity, blocked uint64 }{
		{0, 0}, {64, 1}, {220, 0}, {220, 1}, {220, 3}, {512, 2}, {1024, 0}, {1024, 5},
		{4096, 0}, {4096, 1}, {4096, 16}, {4096, 100}, {16384, 4},
	}
	var total exchangeStats
	for ci, cfg := range configs {
		for seed := uint64(0); seed < 2; seed++ {
			name := fmt.Sprintf("cap%d-blocked%d-seed%d", cfg.capacity, cfg.blocked, seed)
			st := runExchange(t, name, cfg.capacity, cfg.blocked, uint64(ci)*100+seed, 220)
			total.decoded += st.decoded
			total.dynamic += st.dynamic
			total.blocked += st.blocked
		}
	}
	t.Logf("%d header lists decoded, %d with dynamic references, %d blocked decodes", total.decoded, total.dynamic, total.blocked)
	// The exchange must exercise what it claims to.
	if total.decoded < 5000 || total.dynamic < total.decoded/2 || total.blocked < 10 {
		t.Errorf("exchange too tame: %+v", total)
	}
}

type exchangeStats struct {
	decoded int // field sections decoded and checked
	dynamic int // field sections with a non-zero Required Insert Count
	blocked int // decodes that returned ErrBlocked
	bytes   int // encoded field section bytes
}

func runExchange(t *testing.T, name string, capacity, blocked, seed uint64, lists int) exchangeStats {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x9204))
	gen := &fieldGen{rng: rng}
	enc := NewEncoder(EncoderConfig{MaxTableCapacity: capacity})
	dec := NewDecoder(DecoderConfig{MaxTableCapacity: capacity, MaxBlockedStreams: blocked})
	dec.strictRIC = true
	settingsSent := false

	var encPipe, decPipe []byte // bytes in flight on the encoder and decoder streams
	var streams []*simStream
	nextID := uint64(0)
	var st exchangeStats
	var dst []HeaderField

	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: "+format, append([]any{name}, args...)...)
	}
	checkInvariants := func() {
		t.Helper()
		if got := uint64(enc.BlockedStreams()); got > blocked {
			fail("encoder allows %d blocked streams, limit %d", got, blocked)
		}
		if uint64(dec.BlockedStreams()) > blocked {
			fail("decoder has %d blocked streams", dec.BlockedStreams())
		}
		if enc.table.size > enc.table.capacity || dec.table.size > dec.table.capacity {
			fail("table size over capacity")
		}
		checkEncoderRefs(t, enc)
	}
	decodeFront := func(s *simStream) {
		t.Helper()
		sec := s.pending[0]
		var err error
		dst, err = dec.DecodeFieldSection(s.id, sec.enc, dst[:0])
		if err == ErrBlocked {
			st.blocked++
			s.blocked = true
			return
		}
		if err != nil {
			fail("stream %d: %v", s.id, err)
		}
		if !reflect.DeepEqual(normalise(dst), normalise(sec.fields)) {
			fail("stream %d: decoded\n%v\nwant\n%v", s.id, dst, sec.fields)
		}
		s.blocked = false
		s.pending = s.pending[1:]
		st.decoded++
	}
	deliverEncoderStream := func(all bool) {
		t.Helper()
		n := len(encPipe)
		if !all && n > 0 {
			n = rng.IntN(n + 1)
		}
		if err := dec.HandleEncoderStream(encPipe[:n]); err != nil {
			fail("encoder stream: %v", err)
		}
		encPipe = encPipe[n:]
		for _, id := range dec.AppendUnblocked(nil) {
			for _, s := range streams {
				if s.id == id {
					if !s.blocked {
						fail("stream %d reported unblocked but was not blocked", id)
					}
					decodeFront(s)
				}
			}
		}
	}
	deliverDecoderStream := func(all bool) {
		t.Helper()
		decPipe = dec.AppendDecoderStream(decPipe)
		n := len(decPipe)
		if !all && n > 0 {
			n = rng.IntN(n + 1)
		}
		if err := enc.HandleDecoderStream(decPipe[:n]); err != nil {
			fail("decoder stream: %v", err)
		}
		decPipe = decPipe[n:]
	}

	encoded := 0
	for encoded < lists || len(streams) > 0 {
		switch op := rng.IntN(20); {
		case op < 5 && encoded < lists:
			if !settingsSent && rng.IntN(3) == 0 {
				// SETTINGS may arrive after the first requests were sent.
				enc.SetPeerSettings(capacity, blocked)
				settingsSent = true
			}
			var s *simStream
			if len(streams) > 0 && rng.IntN(4) == 0 {
				s = streams[rng.IntN(len(streams))] // another section on a stream (trailers, final response)
				if s.cancelled {
					continue
				}
			} else {
				s = &simStream{id: nextID}
				nextID += 4
				streams = append(streams, s)
			}
			fields := gen.request()
			if rng.IntN(3) == 0 {
				fields = gen.response()
			}
			b := enc.EncodeFieldSection(nil, s.id, fields)
			st.bytes += len(b)
			if b[0] != 0 {
				st.dynamic++
			}
			s.pending = append(s.pending, simSection{enc: b, fields: fields})
			encPipe = enc.AppendEncoderStream(encPipe)
			encoded++
		case op < 9:
			deliverEncoderStream(false)
		case op < 14:
			// A field section arrives on a random stream.
			var ready []*simStream
			for _, s := range streams {
				if len(s.pending) > 0 && !s.blocked && !s.cancelled {
					ready = append(ready, s)
				}
			}
			if len(ready) > 0 {
				decodeFront(ready[rng.IntN(len(ready))])
			}
		case op < 16:
			deliverDecoderStream(false)
		case op < 17:
			// The stream is reset before its sections are processed.
			if len(streams) > 0 && rng.IntN(4) == 0 {
				s := streams[rng.IntN(len(streams))]
				if len(s.pending) > 0 && !s.cancelled {
					dec.CancelStream(s.id)
					s.cancelled = true
					s.pending = nil
					s.blocked = false
				}
			}
		default:
			// Retire finished streams.
			j := 0
			for _, s := range streams {
				if len(s.pending) > 0 {
					streams[j] = s
					j++
				}
			}
			streams = streams[:j]
			if encoded >= lists {
				// Wind down: deliver everything.
				deliverEncoderStream(true)
				for _, s := range streams {
					for len(s.pending) > 0 && !s.blocked && !s.cancelled {
						decodeFront(s)
					}
				}
				deliverDecoderStream(true)
			}
		}
		checkInvariants()
	}
	deliverEncoderStream(true)
	deliverDecoderStream(true)
	deliverDecoderStream(true)
	if enc.table.numSections != 0 {
		fail("%d sections never acknowledged", enc.table.numSections)
	}
	if enc.table.knownReceived != enc.table.insertCount() || dec.table.insertCount() != enc.table.insertCount() {
		fail("insert counts: encoder %d (known received %d), decoder %d",
			enc.table.insertCount(), enc.table.knownReceived, dec.table.insertCount())
	}
	if dec.BlockedStreams() != 0 {
		fail("decoder still has blocked streams")
	}
	if !reflect.DeepEqual(tableContents(&enc.table.dynamicTable), tableContents(&dec.table)) {
		fail("encoder and decoder tables differ")
	}
	return st
}

// normalise maps nil and empty slices alike for comparison.
func normalise(f []HeaderField) []HeaderField {
	if len(f) == 0 {
		return nil
	}
	return f
}

func tableContents(t *dynamicTable) []HeaderField {
	var out []HeaderField
	for abs := t.dropped; abs < t.insertCount(); abs++ {
		e := t.entry(abs)
		out = append(out, HeaderField{Name: e.name, Value: e.value})
	}
	return out
}

// checkEncoderRefs checks the encoder's reference bookkeeping: every entry's
// count equals the number of outstanding sections whose smallest reference
// it is, and no outstanding section references an evicted entry.
func checkEncoderRefs(t testing.TB, e *Encoder) {
	t.Helper()
	tbl := &e.table
	counts := map[uint64]int32{}
	sections, blockingStreams, inHeap := 0, 0, 0
	for stream, ss := range tbl.streams {
		if len(ss.sections) == 0 {
			t.Fatalf("stream %d kept without sections", stream)
		}
		blocking := 0
		for _, s := range ss.sections {
			if s.stream != stream {
				t.Fatalf("section of stream %d filed under %d", s.stream, stream)
			}
			if s.minRef < tbl.dropped || s.ric > tbl.insertCount() || s.minRef >= s.ric {
				t.Fatalf("section %+v references outside the table [%d, %d)", s, tbl.dropped, tbl.insertCount())
			}
			counts[s.minRef]++
			sections++
			// The incremental counts agree with a recount (Section 2.1.2).
			if (s.ric > tbl.knownReceived) != (s.heapIdx >= 0) {
				t.Fatalf("section %+v: in the blocking heap %v, Known Received Count %d", s, s.heapIdx >= 0, tbl.knownReceived)
			}
			if s.heapIdx >= 0 {
				if tbl.blocking[s.heapIdx] != s {
					t.Fatalf("section %+v not at its heap index", s)
				}
				blocking++
				inHeap++
			}
		}
		if blocking != ss.blocking {
			t.Fatalf("stream %d: %d blocking sections, counted %d", stream, blocking, ss.blocking)
		}
		if blocking > 0 {
			blockingStreams++
		}
	}
	if sections != tbl.numSections || blockingStreams != tbl.numBlocking || inHeap != len(tbl.blocking) {
		t.Fatalf("%d sections, %d blocking streams, %d in the heap; counted %d, %d, %d",
			sections, blockingStreams, inHeap, tbl.numSections, tbl.numBlocking, len(tbl.blocking))
	}
	for i := 1; i < len(tbl.blocking); i++ {
		if tbl.blocking[(i-1)/2].ric > tbl.blocking[i].ric {
			t.Fatalf("blocking heap out of order at %d", i)
		}
	}
	for abs := tbl.dropped; abs < tbl.insertCount(); abs++ {
		if got := tbl.entry(abs).refs; got != counts[abs] {
			t.Fatalf("entry %d refs %d, want %d", abs, got, counts[abs])
		}
	}
	if tbl.knownReceived > tbl.insertCount() {
		t.Fatalf("Known Received Count %d above insert count %d", tbl.knownReceived, tbl.insertCount())
	}
	var size uint64
	for i := tbl.head; i < len(tbl.ents); i++ {
		size += entrySize(tbl.ents[i].name, tbl.ents[i].value)
	}
	if size != tbl.size || size > tbl.capacity {
		t.Fatalf("table size %d, recorded %d, capacity %d", size, tbl.size, tbl.capacity)
	}
}
