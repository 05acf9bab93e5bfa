package flowcontrol

import (
	"testing"

	"github.com/quicstack/quic/wire"
)

func TestSendWindowCredit(t *testing.T) {
	// RFC 9000, Section 4.1: "Senders MUST NOT send data in excess of
	// either limit."
	w := NewSendWindow(1000)
	if w.Credit() != 1000 || w.Limit() != 1000 || w.Sent() != 0 {
		t.Fatalf("Credit, Limit, Sent = %d, %d, %d", w.Credit(), w.Limit(), w.Sent())
	}
	w.OnSent(600)
	w.OnSent(0)
	if w.Credit() != 400 {
		t.Fatalf("Credit = %d, want 400", w.Credit())
	}
	w.OnSent(400)
	if w.Credit() != 0 {
		t.Fatalf("Credit = %d, want 0", w.Credit())
	}
	var zero SendWindow
	if zero.Credit() != 0 {
		t.Fatal("the zero SendWindow has credit")
	}
	w.Init(5)
	if w.Credit() != 5 || w.Sent() != 0 {
		t.Fatal("Init does not reset")
	}
}

func TestSendWindowOnSentBeyondCreditPanics(t *testing.T) {
	w := NewSendWindow(10)
	defer func() {
		if recover() == nil {
			t.Fatal("OnSent beyond the limit did not panic")
		}
		if w.Sent() != 0 {
			t.Fatalf("Sent = %d after the panic, want 0", w.Sent())
		}
	}()
	w.OnSent(11)
}

func TestSendWindowMaxDataNotIncreasingIgnored(t *testing.T) {
	// RFC 9000, Section 4.1: "A sender MUST ignore any MAX_STREAM_DATA or
	// MAX_DATA frames that do not increase flow control limits."
	w := NewSendWindow(1000)
	w.OnSent(1000)
	if w.OnMaxData(999) || w.OnMaxData(1000) || w.Limit() != 1000 {
		t.Fatalf("a limit not above 1000 was taken: Limit = %d", w.Limit())
	}
	if !w.OnMaxData(3000) || w.Credit() != 2000 {
		t.Fatalf("MAX_DATA 3000: Credit = %d, want 2000", w.Credit())
	}
	// Reordered: the older, smaller frame arrives last.
	if w.OnMaxData(2000) || w.Limit() != 3000 {
		t.Fatalf("a reordered smaller limit lowered the limit to %d", w.Limit())
	}
}

func TestSendWindowBlockedOncePerLimit(t *testing.T) {
	// RFC 9000, Section 4.1: "A sender SHOULD send a STREAM_DATA_BLOCKED
	// or DATA_BLOCKED frame to indicate to the receiver that it has data
	// to write but is blocked by flow control limits."
	w := NewSendWindow(1000)
	if _, ok := w.Blocked(); ok {
		t.Fatal("blocked with credit")
	}
	w.OnSent(999)
	if _, ok := w.Blocked(); ok {
		t.Fatal("blocked with one byte of credit")
	}
	w.OnSent(1)
	// Promptly: the moment the credit is gone.
	l, ok := w.Blocked()
	if !ok || l != 1000 {
		t.Fatalf("Blocked = %d, %v; want 1000, true", l, ok)
	}
	if _, ok := w.Blocked(); !ok {
		t.Fatal("Blocked changed state before the frame was sent")
	}
	w.OnBlockedSent(l)
	if _, ok := w.Blocked(); ok {
		t.Fatal("a second BLOCKED for the same limit")
	}
	// A non-increasing MAX_DATA changes nothing.
	w.OnMaxData(1000)
	if _, ok := w.Blocked(); ok {
		t.Fatal("BLOCKED again after an ignored MAX_DATA")
	}
	w.OnMaxData(1500)
	if _, ok := w.Blocked(); ok {
		t.Fatal("blocked with new credit")
	}
	w.OnSent(500)
	// "Maximum Data: A variable-length integer indicating the
	// connection-level limit at which blocking occurred." (Section 19.12)
	if l, ok := w.Blocked(); !ok || l != 1500 {
		t.Fatalf("Blocked at the new limit = %d, %v; want 1500, true", l, ok)
	}
}

func TestSendWindowBlockedLost(t *testing.T) {
	w := NewSendWindow(1000)
	w.OnSent(1000)
	w.OnBlockedSent(1000)
	w.OnBlockedLost(1000)
	if l, ok := w.Blocked(); !ok || l != 1000 {
		t.Fatalf("lost BLOCKED at the current limit: Blocked = %d, %v; want 1000, true", l, ok)
	}
	w.OnBlockedSent(1000)

	// Stale: the limit rose and a BLOCKED for the new one was sent; losing
	// the old frame re-arms nothing.
	w.OnMaxData(2000)
	w.OnSent(1000)
	w.OnBlockedSent(2000)
	w.OnBlockedLost(1000)
	if _, ok := w.Blocked(); ok {
		t.Fatal("loss of a BLOCKED for an old limit re-armed the current one")
	}
	// Stale the other way: the limit rose after the frame was sent.
	w.OnMaxData(3000)
	w.OnSent(1000)
	w.OnBlockedLost(2000)
	l, ok := w.Blocked()
	if !ok || l != 3000 {
		t.Fatalf("Blocked = %d, %v; want 3000, true", l, ok)
	}
	w.OnBlockedSent(3000)
	w.OnBlockedLost(2000)
	if _, ok := w.Blocked(); ok {
		t.Fatal("loss of a BLOCKED for an old limit re-armed the current one")
	}
	// Losing a frame never re-arms a window that was never blocked.
	fresh := NewSendWindow(0)
	fresh.OnBlockedLost(0)
	fresh.OnBlockedSent(0)
	fresh.OnBlockedLost(0)
	if _, ok := fresh.Blocked(); !ok {
		t.Fatal("a zero-limit window is not blocked after its BLOCKED was lost")
	}
}

func TestSendWindowRearmBlocked(t *testing.T) {
	// RFC 9000, Section 4.1: "To keep the connection from closing, a
	// sender that is flow control limited SHOULD periodically send a
	// STREAM_DATA_BLOCKED or DATA_BLOCKED frame when it has no
	// ack-eliciting packets in flight."
	w := NewSendWindow(100)
	w.OnSent(100)
	w.OnBlockedSent(100)
	w.RearmBlocked()
	if l, ok := w.Blocked(); !ok || l != 100 {
		t.Fatalf("Blocked after RearmBlocked = %d, %v; want 100, true", l, ok)
	}
}

func TestSendWindowNearMaxVarint(t *testing.T) {
	w := NewSendWindow(0)
	if !w.OnMaxData(wire.MaxVarint) {
		t.Fatal("MAX_DATA 2^62-1 ignored")
	}
	w.OnSent(wire.MaxVarint - 1)
	if w.Credit() != 1 {
		t.Fatalf("Credit = %d, want 1", w.Credit())
	}
	w.OnSent(1)
	if l, ok := w.Blocked(); !ok || l != wire.MaxVarint || w.Credit() != 0 {
		t.Fatalf("Blocked = %d, %v, Credit %d", l, ok, w.Credit())
	}
}
