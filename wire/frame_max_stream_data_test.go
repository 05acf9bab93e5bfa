package wire

import "testing"

func TestMaxStreamDataFrame(t *testing.T) {
	var frames []MaxStreamDataFrame
	for _, v := range controlEdgeValues {
		frames = append(frames,
			MaxStreamDataFrame{StreamID: StreamID(v), MaximumStreamData: v},
			MaxStreamDataFrame{StreamID: StreamID(MaxVarint - v), MaximumStreamData: v},
		)
	}
	controlCheckFrames(t, ParseMaxStreamDataFrame, frames...)

	// Type 0x11, Stream ID 64 (2 bytes), maximum 16383 (2 bytes).
	controlCheckHex(t, ParseMaxStreamDataFrame,
		MaxStreamDataFrame{StreamID: 64, MaximumStreamData: 16383},
		"11 4040 7fff")

	controlCheckAllocs(t, ParseMaxStreamDataFrame, MaxStreamDataFrame{StreamID: 8, MaximumStreamData: 1 << 21})
}

func BenchmarkParseMaxStreamDataFrame(b *testing.B) {
	enc := MaxStreamDataFrame{StreamID: 1 << 10, MaximumStreamData: 1 << 30}.Append(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, _, err := ParseMaxStreamDataFrame(enc); err != nil {
			b.Fatal(err)
		}
	}
}
