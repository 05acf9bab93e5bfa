package wire

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

// ackTestRanges returns n descending ranges below largest, alternating
// range lengths and gaps so that varints of several sizes appear.
func ackTestRanges(n int, largest PacketNumber) []AckRange {
	rs := make([]AckRange, 0, n)
	pn := largest
	for i := range n {
		length := PacketNumber(i % 5)
		if i%7 == 3 {
			length = 100
		}
		rs = append(rs, AckRange{Smallest: pn - length, Largest: pn})
		gap := PacketNumber(i%3 + 1)
		if i%11 == 5 {
			gap = 20000
		}
		pn = pn - length - gap - 1
	}
	return rs
}

func ackTestEqual(a, b *AckFrame) bool {
	return slices.Equal(a.Ranges, b.Ranges) && a.Delay == b.Delay && a.HasECN == b.HasECN && a.ECN == b.ECN
}

func TestAckFrameEncoding(t *testing.T) {
	for _, tc := range []struct {
		f   AckFrame
		hex string
	}{
		{
			// Largest 10, delay 100 (two-byte varint), one range count:
			// [8,10] (First ACK Range 2), then gap 8-5-2 = 1 and [2,5]
			// (ACK Range Length 3).
			AckFrame{Ranges: []AckRange{{8, 10}, {2, 5}}, Delay: 100},
			"02 0a 4064 01 02 01 03",
		},
		{
			AckFrame{Ranges: []AckRange{{8, 10}, {2, 5}}, Delay: 100, HasECN: true, ECN: ECNCounts{1, 2, 64}},
			"03 0a 4064 01 02 01 03 01 02 4040",
		},
		{
			AckFrame{Ranges: []AckRange{{0, 0}}},
			"02 00 00 00 00",
		},
		{
			AckFrame{Ranges: []AckRange{{0, MaxPacketNumber}}, Delay: MaxVarint},
			"02 ffffffffffffffff ffffffffffffffff 00 ffffffffffffffff",
		},
	} {
		want := ft1Hex(t, tc.hex)
		got := tc.f.Append(nil)
		if !bytes.Equal(got, want) {
			t.Errorf("Append(%+v) = %x; want %x", tc.f, got, want)
		}
		if tc.f.EncodedLen() != len(want) {
			t.Errorf("EncodedLen(%+v) = %d; want %d", tc.f, tc.f.EncodedLen(), len(want))
		}
		var g AckFrame
		n, err := ParseAckFrame(want, &g, 0)
		if err != nil || n != len(want) || !ackTestEqual(&g, &tc.f) {
			t.Errorf("ParseAckFrame(%x) = %+v, %d, %v; want %+v", want, g, n, err, tc.f)
		}
	}
}

func TestAckFrameRoundTrip(t *testing.T) {
	frames := []AckFrame{
		{Ranges: []AckRange{{0, 0}}},
		{Ranges: []AckRange{{MaxPacketNumber, MaxPacketNumber}}, Delay: MaxVarint},
		{Ranges: []AckRange{{0, MaxPacketNumber}}, HasECN: true, ECN: ECNCounts{MaxVarint, 0, MaxVarint}},
		// Smallest gap (one missing packet) and a last range reaching 0.
		{Ranges: []AckRange{{5, 7}, {3, 3}, {0, 1}}, Delay: 63},
		{Ranges: []AckRange{{MaxPacketNumber, MaxPacketNumber}, {0, MaxPacketNumber - 2}}, Delay: 64},
		{Ranges: ackTestRanges(32, 1<<40), Delay: 16383, HasECN: true, ECN: ECNCounts{16384, 1 << 30, 63}},
		{Ranges: ackTestRanges(DefaultMaxAckRanges, 1<<40), Delay: 1 << 30},
	}
	var g AckFrame
	for i, f := range frames {
		enc := f.Append([]byte{0xee})[1:]
		if len(enc) != f.EncodedLen() {
			t.Errorf("frame %d: EncodedLen %d, Append wrote %d", i, f.EncodedLen(), len(enc))
		}
		// Trailing bytes belong to the next frame.
		in := append(slices.Clip(enc), 0x01)
		n, err := ParseAckFrame(in, &g, 0)
		if err != nil || n != len(enc) || !ackTestEqual(&g, &f) {
			t.Errorf("frame %d: round trip gave %+v, %d, %v", i, g.Ranges[:min(len(g.Ranges), 3)], n, err)
		}
		if g.LargestAcked() != f.Ranges[0].Largest {
			t.Errorf("frame %d: LargestAcked = %d", i, g.LargestAcked())
		}
		// Every proper prefix is truncated.
		for j := range len(enc) {
			n, err := ParseAckFrame(enc[:j], &g, 0)
			if err == nil || n != 0 {
				t.Fatalf("frame %d: prefix of %d bytes parsed: %d, %v", i, j, n, err)
			}
			ft1WantCode(t, err, FrameEncodingError, "ACK prefix")
			if len(g.Ranges) != 0 {
				t.Fatalf("frame %d: ranges left after a failed parse", i)
			}
		}
	}
}

func TestAckFrameReuse(t *testing.T) {
	var f AckFrame
	big := AckFrame{Ranges: ackTestRanges(32, 100000), HasECN: true, ECN: ECNCounts{1, 2, 3}, Delay: 7}
	if _, err := ParseAckFrame(big.Append(nil), &f, 0); err != nil {
		t.Fatal(err)
	}
	small := AckFrame{Ranges: []AckRange{{3, 4}}}
	if _, err := ParseAckFrame(small.Append(nil), &f, 0); err != nil {
		t.Fatal(err)
	}
	if !ackTestEqual(&f, &small) {
		t.Errorf("reused frame = %+v; want %+v (ECN and Delay must be reset)", f, small)
	}
	if cap(f.Ranges) < 32 {
		t.Errorf("capacity of Ranges was not kept: %d", cap(f.Ranges))
	}
}

func TestAckFrameInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		hex  string
		code TransportErrorCode
	}{
		// RFC 9000, Section 19.3.1: "If any computed packet number is
		// negative, an endpoint MUST generate a connection error of type
		// FRAME_ENCODING_ERROR."
		{"first range below 0", "02 05 00 00 06", FrameEncodingError},
		{"gap below 0", "02 05 00 01 02 02 00", FrameEncodingError},   // smallest 3, largest 3-2-2 = -1
		{"range below 0", "02 05 00 01 02 01 01", FrameEncodingError}, // largest 3-1-2 = 0, smallest -1
		{"huge gap", "02 05 00 01 00 ffffffffffffffff 00", FrameEncodingError},
		{"huge count", "02 05 00 ffffffffffffffff 00", FrameEncodingError},
		{"missing ECN", "03 05 00 00 00", FrameEncodingError},
		{"wrong type", "06 00 00", FrameEncodingError},
		{"two-byte type", "4002 05 00 00 00", ProtocolViolation},
		{"empty", "", FrameEncodingError},
	} {
		var f AckFrame
		n, err := ParseAckFrame(ft1Hex(t, tc.hex), &f, 0)
		if err == nil || n != 0 {
			t.Errorf("%s: parsed: %d, %+v", tc.name, n, f)
			continue
		}
		ft1WantCode(t, err, tc.code, tc.name)
	}
	// The ranges reaching exactly 0 are fine.
	var f AckFrame
	if _, err := ParseAckFrame(ft1Hex(t, "02 05 00 01 02 00 01"), &f, 0); err != nil ||
		!slices.Equal(f.Ranges, []AckRange{{3, 5}, {0, 1}}) {
		t.Errorf("ranges down to 0: %+v, %v", f.Ranges, err)
	}
}

// RFC 9000 sets no limit on the ACK Range Count (Section 19.3): a frame
// with more ranges than the bound is parsed whole, its highest ranges are
// kept up to the bound, the others are validated and counted, and the
// storage never grows beyond the bound.
func TestAckFrameManyRanges(t *testing.T) {
	for _, bound := range []int{1, 2, 32, DefaultMaxAckRanges} {
		arg := bound
		if bound == DefaultMaxAckRanges {
			arg = 0 // the default
		}
		for _, n := range []int{bound, bound + 1, 3*bound + 7} {
			for _, ecn := range []bool{false, true} {
				src := AckFrame{Ranges: ackTestRanges(n, 1<<30), Delay: 77, HasECN: ecn}
				if ecn {
					src.ECN = ECNCounts{ECT0: 5, ECT1: 6, CE: 7}
				}
				in := src.Append(nil)
				f := AckFrame{Ranges: make([]AckRange, 0, bound)}
				backing := &f.Ranges[:1][0]
				m, err := ParseAckFrame(in, &f, arg)
				if err != nil || m != len(in) {
					t.Fatalf("max %d: frame with %d ranges: %d of %d bytes, %v", bound, n, m, len(in), err)
				}
				want := src
				want.Ranges = src.Ranges[:min(n, bound)]
				if !ackTestEqual(&f, &want) || f.IgnoredRanges != n-len(want.Ranges) {
					t.Errorf("max %d, %d ranges: got %d ranges (%d ignored), delay %d, ECN %v %+v",
						bound, n, len(f.Ranges), f.IgnoredRanges, f.Delay, f.HasECN, f.ECN)
				}
				// Never stored beyond the bound: the backing array was not
				// replaced by a larger one.
				if cap(f.Ranges) != bound || &f.Ranges[:1][0] != backing {
					t.Errorf("max %d: Ranges grew to cap %d", bound, cap(f.Ranges))
				}
			}
		}
	}
	var f AckFrame
	// An ignored range is validated all the same: one reaching below
	// packet number 0 is a FRAME_ENCODING_ERROR (RFC 9000, Section 19.3.1).
	// Largest 1000, 40 ranges after the first of one packet each, the
	// last 2,000 packets long.
	in := []byte{0x02, 0x43, 0xe8, 0x00, 40, 0x00}
	for range 39 {
		in = append(in, 0x00, 0x00)
	}
	in = append(in, 0x00, 0x47, 0xd0)
	_, err := ParseAckFrame(in, &f, 8)
	ft1WantCode(t, err, FrameEncodingError, "ignored range below 0")
	// A huge bound does not make a frame claiming many ranges expensive:
	// parsing stops at the end of the input.
	_, err = ParseAckFrame(ft1Hex(t, "02 05 00 bfffffff 00 0000"), &f, math.MaxInt)
	ft1WantCode(t, err, FrameEncodingError, "count beyond input")
	_, err = ParseAckFrame(ft1Hex(t, "02 05 00 bfffffff 00 0000"), &f, 0)
	ft1WantCode(t, err, FrameEncodingError, "count beyond input, default bound")
	// Many ranges with a large bound parse in linear time.
	many := AckFrame{Ranges: ackTestRanges(20000, 1<<50)}
	if _, err := ParseAckFrame(many.Append(nil), &f, 1<<20); err != nil || len(f.Ranges) != 20000 || f.IgnoredRanges != 0 {
		t.Errorf("20000 ranges: %d, %v", len(f.Ranges), err)
	}
	if _, err := ParseAckFrame(many.Append(nil), &f, 0); err != nil || len(f.Ranges) != DefaultMaxAckRanges || f.IgnoredRanges != 20000-DefaultMaxAckRanges {
		t.Errorf("20000 ranges, default bound: %d kept, %d ignored, %v", len(f.Ranges), f.IgnoredRanges, err)
	}
}

func TestAckFrameAppendPanics(t *testing.T) {
	for name, rs := range map[string][]AckRange{
		"no ranges":      nil,
		"negative":       {{-1, 3}},
		"inverted":       {{5, 3}},
		"adjacent":       {{5, 6}, {3, 4}},
		"overlapping":    {{5, 6}, {3, 5}},
		"ascending":      {{1, 2}, {5, 6}},
		"negative later": {{5, 6}, {-2, 1}},
		"inverted later": {{5, 6}, {3, 1}},
		"above max":      {{0, MaxPacketNumber + 1}},
		"adjacent later": {{10, 12}, {8, 8}, {0, 7}},
	} {
		for _, fn := range []func(*AckFrame){
			func(f *AckFrame) { f.Append(nil) },
			func(f *AckFrame) { f.EncodedLen() },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: no panic", name)
					}
				}()
				fn(&AckFrame{Ranges: rs})
			}()
		}
	}
}

func TestAckFrameAcksPacket(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 32, 33} {
		f := AckFrame{Ranges: ackTestRanges(n, 100000)}
		// Every packet number next to the edge of a range.
		pns := []PacketNumber{-1, 0, 100000, 100001, MaxPacketNumber}
		for _, r := range f.Ranges {
			for d := PacketNumber(-2); d <= 2; d++ {
				pns = append(pns, r.Smallest+d, r.Largest+d)
			}
		}
		for _, pn := range pns {
			want := false
			for _, r := range f.Ranges {
				if r.Smallest <= pn && pn <= r.Largest {
					want = true
				}
			}
			if got := f.AcksPacket(pn); got != want {
				t.Fatalf("%d ranges: AcksPacket(%d) = %v; want %v", n, pn, got, want)
			}
		}
	}
	var empty AckFrame
	if empty.LargestAcked() != InvalidPacketNumber || empty.AcksPacket(0) {
		t.Error("empty AckFrame acknowledges something")
	}
}

func TestAckDelay(t *testing.T) {
	for _, tc := range []struct {
		delay    uint64
		exponent uint8
		d        time.Duration
	}{
		{0, 3, 0},
		{125, 3, time.Millisecond},
		{1, 0, time.Microsecond},
		{1, 20, (1 << 20) * time.Microsecond},
		{MaxVarint, 0, time.Duration(math.MaxInt64)}, // saturates
		{1 << 40, 20, time.Duration(math.MaxInt64)},
		{1, 63, time.Duration(math.MaxInt64)},
		{1, 255, time.Duration(math.MaxInt64)},
		{0, 255, 0},
		{ackMaxMicros, 0, time.Duration(ackMaxMicros) * time.Microsecond},
		{ackMaxMicros + 1, 0, time.Duration(math.MaxInt64)},
	} {
		if got := AckDelayToDuration(tc.delay, tc.exponent); got != tc.d {
			t.Errorf("AckDelayToDuration(%d, %d) = %v; want %v", tc.delay, tc.exponent, got, tc.d)
		}
	}
	for _, tc := range []struct {
		d        time.Duration
		exponent uint8
		delay    uint64
	}{
		{0, 3, 0},
		{-time.Second, 3, 0},
		{time.Millisecond, 3, 125},
		{time.Millisecond + 7*time.Microsecond, 3, 125}, // rounds down
		{999 * time.Nanosecond, 0, 0},
		{time.Duration(math.MaxInt64), 0, uint64(math.MaxInt64 / 1000)},
		{time.Second, 64, 0},
	} {
		if got := AckDelayFromDuration(tc.d, tc.exponent); got != tc.delay {
			t.Errorf("AckDelayFromDuration(%v, %d) = %d; want %d", tc.d, tc.exponent, got, tc.delay)
		}
	}
	// The round trip loses at most the rounding.
	for _, d := range []time.Duration{0, time.Microsecond, 25 * time.Millisecond, time.Hour} {
		for _, e := range []uint8{0, 3, 20} {
			got := AckDelayToDuration(AckDelayFromDuration(d, e), e)
			if got > d || d-got >= (time.Duration(1)<<e)*time.Microsecond {
				t.Errorf("round trip of %v with exponent %d gave %v", d, e, got)
			}
		}
	}
}

func TestAckFrameAllocs(t *testing.T) {
	src := AckFrame{Ranges: ackTestRanges(32, 1<<40), Delay: 1000, HasECN: true, ECN: ECNCounts{1, 2, 3}}
	in := src.Append(nil)
	buf := make([]byte, 0, 512)
	var f AckFrame
	if _, err := ParseAckFrame(in, &f, 0); err != nil {
		t.Fatal(err)
	}
	ft1CheckAllocs(t, "ACK parse+append", func() {
		if _, err := ParseAckFrame(in, &f, 0); err != nil {
			t.Fatal(err)
		}
		_ = f.Append(buf[:0])
		_ = f.EncodedLen()
		_ = f.AcksPacket(1 << 39)
	})
}

func FuzzParseAckFrame(f *testing.F) {
	for _, fr := range []AckFrame{
		{Ranges: []AckRange{{0, 0}}},
		{Ranges: []AckRange{{8, 10}, {2, 5}}, Delay: 100, HasECN: true, ECN: ECNCounts{1, 2, 64}},
		{Ranges: ackTestRanges(5, 1000)},
		{Ranges: ackTestRanges(DefaultMaxAckRanges+40, 1<<40), HasECN: true},
		{Ranges: []AckRange{{0, MaxPacketNumber}}, Delay: MaxVarint},
	} {
		f.Add(fr.Append(nil))
	}
	f.Add([]byte{0x02, 0x05, 0x00, 0x01, 0x02, 0x02, 0x00})
	var a, b AckFrame
	f.Fuzz(func(t *testing.T, in []byte) {
		n, err := ParseAckFrame(in, &a, 0)
		if err != nil {
			var te *TransportError
			if !errors.As(err, &te) || n != 0 || len(a.Ranges) != 0 {
				t.Fatalf("bad failure: %d, %v", n, err)
			}
			return
		}
		if n <= 0 || n > len(in) || len(a.Ranges) == 0 || len(a.Ranges) > DefaultMaxAckRanges {
			t.Fatalf("n = %d, %d ranges", n, len(a.Ranges))
		}
		for i, r := range a.Ranges {
			if r.Smallest < 0 || r.Smallest > r.Largest || (i > 0 && r.Largest >= a.Ranges[i-1].Smallest-1) {
				t.Fatalf("invalid ranges %+v", a.Ranges)
			}
		}
		enc := a.Append(nil)
		if len(enc) != a.EncodedLen() || len(enc) > n {
			t.Fatalf("Append wrote %d bytes, EncodedLen %d, parsed %d", len(enc), a.EncodedLen(), n)
		}
		m, err := ParseAckFrame(enc, &b, 0)
		if err != nil || m != len(enc) || !ackTestEqual(&a, &b) || b.IgnoredRanges != 0 {
			t.Fatalf("round trip: %+v -> %x -> %+v, %d, %v", a, enc, b, m, err)
		}
		// A smaller bound keeps the highest ranges and counts the rest.
		total := len(a.Ranges) + a.IgnoredRanges
		m, err = ParseAckFrame(in, &b, 4)
		if err != nil || m != n || !slices.Equal(b.Ranges, a.Ranges[:min(4, len(a.Ranges))]) ||
			len(b.Ranges)+b.IgnoredRanges != total || b.Delay != a.Delay || b.ECN != a.ECN {
			t.Fatalf("bound 4 with %d ranges: %d ranges, %d ignored, %v", total, len(b.Ranges), b.IgnoredRanges, err)
		}
		// AcksPacket agrees with the ranges at their edges.
		for _, r := range a.Ranges[:min(len(a.Ranges), 8)] {
			if !a.AcksPacket(r.Smallest) || !a.AcksPacket(r.Largest) || a.AcksPacket(r.Largest+1) {
				t.Fatalf("AcksPacket wrong around %+v", r)
			}
		}
	})
}

func BenchmarkParseAckFrame32Ranges(b *testing.B) {
	src := AckFrame{Ranges: ackTestRanges(32, 1<<40), Delay: 1000}
	in := src.Append(nil)
	f := AckFrame{Ranges: make([]AckRange, 0, 32)}
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := ParseAckFrame(in, &f, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendAckFrame32Ranges(b *testing.B) {
	f := AckFrame{Ranges: ackTestRanges(32, 1<<40), Delay: 1000}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(f.EncodedLen()))
	for b.Loop() {
		buf = f.Append(buf[:0])
	}
}
