package quic

import (
	"sync/atomic"
	"testing"
)

// TestCloseWriteWakesOnlyWithNothingQueued: CloseWrite wakes the
// connection goroutine only when the stream has nothing left to send;
// with data still queued (a Write the goroutine has not sent yet) the FIN
// goes with its last frame, the stream is queued for attention and the
// Write's wakeup serves both (issue 28: a request or response wrote and
// closed, and woke the goroutine twice).
func TestCloseWriteWakesOnlyWithNothingQueued(t *testing.T) {
	var wakes atomic.Int32
	newTestStream := func() *stream {
		m := &streamsMap{}
		m.wake = func() { wakes.Add(1) }
		return &stream{m: m, hasSend: true, send: newSendBuffer(defaultMaxStreamSendBuffered),
			readCh: make(chan struct{}, 1), writeCh: make(chan struct{}, 1)}
	}

	// Written, not sent: one wakeup for the Write, none for CloseWrite.
	s := newTestStream()
	if _, err := s.write([]byte("GET /")); err != nil {
		t.Fatal(err)
	}
	if w := wakes.Swap(0); w != 1 {
		t.Fatalf("Write woke the goroutine %d times, want 1", w)
	}
	s.closeWrite()
	if w := wakes.Swap(0); w != 0 {
		t.Fatalf("CloseWrite with data queued woke the goroutine %d times, want 0", w)
	}
	if !s.m.attentionPending.Load() || len(s.m.attention) != 1 {
		t.Fatal("CloseWrite did not queue the stream for attention")
	}
	if off, n, fin, ok := s.send.nextFrame(1000); !ok || off != 0 || n != 5 || !fin {
		t.Fatalf("next frame offset %d, %d bytes, fin %v, ok %v; want the data with the FIN", off, n, fin, ok)
	}

	// Everything sent: the FIN needs the goroutine.
	s = newTestStream()
	s.write([]byte("GET /"))
	if _, n, fin, ok := s.send.nextFrame(1000); !ok || n != 5 || fin {
		t.Fatalf("%d bytes, fin %v, ok %v", n, fin, ok)
	}
	wakes.Store(0)
	s.closeWrite()
	if w := wakes.Swap(0); w != 1 {
		t.Fatalf("CloseWrite with everything sent woke the goroutine %d times, want 1", w)
	}
	if off, n, fin, ok := s.send.nextFrame(1000); !ok || off != 5 || n != 0 || !fin {
		t.Fatalf("next frame offset %d, %d bytes, fin %v, ok %v; want an empty frame with the FIN", off, n, fin, ok)
	}
}
