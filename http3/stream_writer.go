package http3

import (
	"context"
	"sync"

	"github.com/quicstack/quic"
)

// streamWriter writes the bytes queued for one of our unidirectional
// critical streams (control, QPACK encoder, QPACK decoder; RFC 9114,
// Section 6.2.1; RFC 9204, Section 4.2), in the order they were queued,
// from a goroutine of its own, or from the goroutine that queued them
// (writeNow).
//
// Concurrency: callers queue under whatever lock orders their bytes (qmu
// for the QPACK instructions, whose order the QPACK state decides) and
// return at once; only run and writeNow call Write, one at a time (busy),
// and neither holds a lock while it does. So no lock is ever held across
// a stream write. mu guards the queue and the counters.
type streamWriter struct {
	mu      sync.Mutex
	pending []byte           // queued, not yet handed to Write
	spare   []byte           // the other buffer, while not being written
	queued  uint64           // bytes queued in total
	written uint64           // bytes Write accepted in total
	err     error            // the first Write error, or the connection's end
	changed chan struct{}    // made for a waiter; closed and cleared when written or err change
	wake    chan struct{}    // one pending signal for run
	s       *quic.SendStream // the stream, once run started
	busy    bool             // a Write is in progress
}

func newStreamWriter() *streamWriter {
	return &streamWriter{wake: make(chan struct{}, 1)}
}

// queue appends b for writing and returns the offset its end will have
// on the stream (for wait), and the error that stopped the writer if one
// did (b is dropped then). It wakes run to write it.
func (w *streamWriter) queue(b []byte) (end uint64, err error) {
	end, err = w.add(b)
	if len(b) > 0 {
		w.signal()
	}
	return end, err
}

// add is queue without waking run: the caller calls writeNow once it
// holds no lock.
func (w *streamWriter) add(b []byte) (end uint64, err error) {
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
	return end, err
}

func (w *streamWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// writeNow writes what add queued from the calling goroutine, which must
// hold no lock, if no Write is in progress and the stream is open;
// otherwise it leaves the bytes to run. It saves run's wakeup for the few
// bytes of a QPACK decoder instruction, one per response on a client
// (issue 28). The Write blocks only while the stream's send buffer (1 MiB
// unacknowledged) is full.
func (w *streamWriter) writeNow() {
	w.mu.Lock()
	if w.busy || w.s == nil || w.err != nil || len(w.pending) == 0 {
		more := len(w.pending) > 0
		w.mu.Unlock()
		if more {
			w.signal()
		}
		return
	}
	out, s := w.take(), w.s
	w.mu.Unlock()
	n, err := s.Write(out)
	if w.done(out, n, err) {
		w.signal() // queued meanwhile
	}
}

// take hands the queued bytes to the caller, which writes them. w.mu
// held.
func (w *streamWriter) take() []byte {
	out := w.pending
	w.pending, w.spare = w.spare[:0], nil
	w.busy = true
	return out
}

// done records the end of a Write of out, of which n bytes were taken,
// and reports whether more bytes were queued meanwhile.
func (w *streamWriter) done(out []byte, n int, err error) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy = false
	if w.spare == nil && cap(out) <= 64<<10 {
		w.spare = out[:0]
	}
	w.written += uint64(n)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.changedLocked()
	return len(w.pending) > 0 && w.err == nil
}

// changedLocked wakes the waiters. w.mu held.
func (w *streamWriter) changedLocked() {
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
}

// wait blocks until the stream took the bytes up to end, the writer
// stopped, or ctx is done.
func (w *streamWriter) wait(ctx context.Context, end uint64) error {
	for {
		w.mu.Lock()
		written, err := w.written, w.err
		if written >= end || err != nil {
			w.mu.Unlock()
			if written >= end {
				return nil
			}
			return err
		}
		if w.changed == nil {
			w.changed = make(chan struct{})
		}
		ch := w.changed
		w.mu.Unlock()
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
	w.mu.Lock()
	w.s = s
	w.mu.Unlock()
	for {
		select {
		case <-w.wake:
		case <-ctx.Done():
			w.progress(0, context.Cause(ctx))
			return
		}
		w.mu.Lock()
		if w.busy || len(w.pending) == 0 || w.err != nil {
			// An inline writer signals what it leaves behind.
			stop := w.err != nil
			w.mu.Unlock()
			if stop {
				return
			}
			continue
		}
		out := w.take()
		w.mu.Unlock()
		n, err := s.Write(out)
		if w.done(out, n, err) {
			w.signal()
		}
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
	w.changedLocked()
	w.mu.Unlock()
}
