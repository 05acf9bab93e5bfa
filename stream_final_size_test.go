package quic

import (
	"testing"
	"time"
)

// FinalSize reports how much the peer sent once its FIN or reset
// arrived, before the application read any of it (RFC 9000, Section
// 4.5), and nothing before.
func TestSimStreamFinalSize(t *testing.T) {
	st := newResetAtTest(t, testLink, 94, false)
	for _, reset := range []bool{false, true} {
		st.open()
		st.writeSome(st.cs, 700)
		ss := st.server()
		if size, ok := (&Stream{s: ss}).FinalSize(); ok {
			t.Fatalf("reset %v: final size %d known before the FIN or reset", reset, size)
		}
		if reset {
			st.cs.cancelWrite(0x36)
		} else {
			st.cs.closeWrite()
		}
		var size uint64
		var ok bool
		st.run(2*time.Second, func() bool {
			size, ok = (&ReceiveStream{s: ss}).FinalSize()
			return ok
		})
		if size != 700 {
			t.Fatalf("reset %v: final size %d, want 700", reset, size)
		}
		if reset {
			st.readUntilErr(ss)
		} else if n, err := st.readUntilErr(ss); n != 700 {
			t.Fatalf("read %d bytes, %v", n, err)
		}
		st.finishOther()
		st.retired()
	}
}

// SentFinalSize is the Final Size the reset carried: the receiver's
// FinalSize agrees, and data written but not sent before the reset is not
// part of it (RFC 9000, Section 4.5). Before the reset was sent it is not
// known.
func TestSimStreamSentFinalSize(t *testing.T) {
	st := newResetAtTest(t, testLink, 95, false)
	for _, reliable := range []uint64{0, 3} {
		st.open()
		st.writeSome(st.cs, 100_000)
		if size, ok := (&Stream{s: st.cs}).SentFinalSize(); ok {
			t.Fatalf("final size %d before any reset", size)
		}
		// One round of sending, so that part of the data left.
		st.run(time.Second, func() bool { st.cs.mu.Lock(); defer st.cs.mu.Unlock(); return st.cs.sentEnd > 0 })
		if reliable == 0 {
			st.cs.cancelWrite(0x37)
		} else {
			st.cs.cancelWriteAt(0x37, reliable)
		}
		ss := st.server()
		var sent, got uint64
		var okSent, okGot bool
		st.run(2*time.Second, func() bool {
			sent, okSent = (&SendStream{s: st.cs}).SentFinalSize()
			got, okGot = ss.finalSize()
			return okSent && okGot
		})
		if sent != got || sent == 0 || sent >= 100_000 {
			t.Fatalf("reliable %d: sender's final size %d, receiver's %d, of 100000 bytes written", reliable, sent, got)
		}
		st.readUntilErr(ss)
		st.finishOther()
		st.retired()
	}
}
