package http3

import (
	"testing"

	"github.com/quicstack/quic"
)

// TestStreamWriterInlineBound: once a stream has taken inlineWriteMax
// bytes, writeNow leaves queued bytes to the writer goroutine instead of
// writing them from the caller, whose Write could otherwise block on a
// peer that withholds flow-control credit (hostile review of issue 28).
// The stream here is a zero SendStream: a Write on it would panic, so the
// test fails if writeNow writes.
func TestStreamWriterInlineBound(t *testing.T) {
	w := newStreamWriter()
	w.s = new(quic.SendStream)
	w.written = inlineWriteMax - 1
	if _, err := w.add([]byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	w.writeNow()
	if len(w.pending) != 2 {
		t.Fatalf("pending = %d bytes, want the 2 queued left to run", len(w.pending))
	}
	select {
	case <-w.wake:
	default:
		t.Fatal("run was not signalled for the bytes writeNow left")
	}
}
