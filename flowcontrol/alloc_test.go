package flowcontrol

import (
	"testing"
	"time"
)

// TestZeroAllocs checks that the per-packet paths allocate nothing: a
// STREAM frame received and read, an update computed, and data sent
// against stream and connection credit.
func TestZeroAllocs(t *testing.T) {
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 1 << 40, MaxWindow: 1 << 41})
	s := NewStreamReceiver(ReceiveConfig{InitialWindow: 1 << 30, MaxWindow: 1 << 31}, conn)
	sw, cw := NewSendWindow(1<<62-1), NewSendWindow(1<<62-1)
	var off uint64
	now := time.Unix(0, 0)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := s.OnData(off, 1200, false); err != nil {
			t.Fatal(err)
		}
		off += 1200
		now = now.Add(time.Microsecond)
		s.OnConsumed(now, 1200)
		if s.ShouldSendUpdate() {
			s.OnUpdateSent(s.NextLimit(now, time.Millisecond))
		}
		if conn.ShouldSendUpdate() {
			conn.OnUpdateSent(conn.NextLimit(now, time.Millisecond))
		}
		n := min(sw.Credit(), cw.Credit(), 1200)
		sw.OnSent(n)
		cw.OnSent(n)
		if _, ok := sw.Blocked(); ok {
			t.Fatal("blocked")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per packet, want 0", allocs)
	}
}
