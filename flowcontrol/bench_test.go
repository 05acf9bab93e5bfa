package flowcontrol

import (
	"testing"
	"time"
)

// BenchmarkStreamReceive measures one 1200-byte STREAM frame received and
// read, with the stream and connection updates that fall due.
func BenchmarkStreamReceive(b *testing.B) {
	conn := NewReceiveWindow(DefaultConnReceiveConfig())
	s := NewStreamReceiver(DefaultStreamReceiveConfig(), conn)
	now := t0
	var off uint64
	b.ReportAllocs()
	for b.Loop() {
		if err := s.OnData(off, 1200, false); err != nil {
			b.Fatal(err)
		}
		off += 1200
		now = now.Add(10 * time.Microsecond)
		s.OnConsumed(now, 1200)
		if s.ShouldSendUpdate() {
			s.OnUpdateSent(s.NextLimit(now, 20*time.Millisecond))
		}
		if conn.ShouldSendUpdate() {
			conn.OnUpdateSent(conn.NextLimit(now, 20*time.Millisecond))
		}
	}
}

// BenchmarkSend measures sending one 1200-byte frame against stream and
// connection credit.
func BenchmarkSend(b *testing.B) {
	sw, cw := NewSendWindow(1<<62-1), NewSendWindow(1<<62-1)
	b.ReportAllocs()
	for b.Loop() {
		n := min(sw.Credit(), cw.Credit(), 1200)
		sw.OnSent(n)
		cw.OnSent(n)
		if _, ok := sw.Blocked(); ok {
			b.Fatal("blocked")
		}
	}
}
