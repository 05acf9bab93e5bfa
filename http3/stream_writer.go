package http3

import (
	"context"
	"sync"

	"github.com/quicstack/quic"
)

// streamWriter writes the bytes queued for one of our unidirectional
// critical streams (control, QPACK encoder, QPACK decoder; RFC 9114,
// Section 6.2.1; RFC 9204, Section 4.2), in the order they were queued,
// from a goroutine of its own.
//
// Concurrency: callers queue under whatever lock orders their bytes (qmu
// for the QPACK instructions, whose order the QPACK state decides) and
// return at once; only run calls Write, which can block on flow control
// for as long as the peer likes, and it holds no lock while it does. So
// no lock is ever held across a stream write, and one stalled critical
// stream stalls only itself. mu guards the queue and the counters.
type streamWriter struct {
	mu      sync.Mutex
	pending []byte        // queued, not yet handed to Write
	queued  uint64        // bytes queued in total
	written uint64        // bytes Write accepted in total
	err     error         // the first Write error, or the connection's end
	changed chan struct{} // closed and replaced when written or err change
	wake    chan struct{} // one pending signal for run
}

func newStreamWriter() *streamWriter {
	return &streamWriter{changed: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// queue appends b for writing and returns the offset its end will have
// on the stream (for wait), and the error that stopped the writer if one
// did (b is dropped then).
func (w *streamWriter) queue(b []byte) (end uint64, err error) {
	if len(b) == 0 {
		return 0, nil
	}
	w.mu.Lock()
	if w.err != nil {
		err = w.err
	} else {
		w.pending = append(w.pending, b...)
		w.queued += uint64(len(b))
	}
	end = w.queued
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return end, err
}

// wait blocks until the stream took the bytes up to end, the writer
// stopped, or ctx is done.
func (w *streamWriter) wait(ctx context.Context, end uint64) error {
	for {
		w.mu.Lock()
		written, err, ch := w.written, w.err, w.changed
		w.mu.Unlock()
		if written >= end {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run writes what is queued to s until a write fails or ctx (the
// connection's) is done. It is started once, when s is open; what was
// queued before waits until then.
func (w *streamWriter) run(ctx context.Context, s *quic.SendStream) {
	var out []byte
	for {
		select {
		case <-w.wake:
		case <-ctx.Done():
			w.progress(0, context.Cause(ctx))
			return
		}
		w.mu.Lock()
		out, w.pending = w.pending, out[:0]
		w.mu.Unlock()
		if len(out) == 0 {
			continue
		}
		n, err := s.Write(out)
		w.progress(n, err)
		if err != nil {
			return
		}
	}
}

// progress records n more bytes written and err, if not nil, as the
// writer's end.
func (w *streamWriter) progress(n int, err error) {
	w.mu.Lock()
	w.written += uint64(n)
	if err != nil && w.err == nil {
		w.err = err
	}
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}
