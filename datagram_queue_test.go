package quic

import (
	"bytes"
	"testing"
)

// The datagram queues drop the oldest entry when full and count every
// drop, by direction and reason, for the statistics and (once) for the
// Tracer; a closed send queue counts what it held and refuses more;
// tryPushSend refuses when full and hands out a channel that popSend
// closes.
func TestDatagramQueueDrops(t *testing.T) {
	q := &datagramQueue{limit: 4}
	for i := range 10 {
		if !q.pushSend(bytes.Repeat([]byte{byte(i)}, 10+i)) {
			t.Fatal("pushSend refused on an open queue")
		}
	}
	if len(q.send) != 4 || q.send[0][0] != 6 {
		t.Fatalf("queue holds %d, oldest %d; want the last 4", len(q.send), q.send[0][0])
	}
	if ok, wait := q.tryPushSend([]byte("x")); ok || wait == nil {
		t.Fatal("tryPushSend queued into a full queue")
	}
	ok, wait := q.tryPushSend([]byte("x"))
	q.popSend(datagramDropNone) // sent
	select {
	case <-wait:
	default:
		t.Fatal("popSend did not wake a waiter for room")
	}
	if ok, _ = q.tryPushSend([]byte("x")); !ok {
		t.Fatal("tryPushSend refused with room")
	}
	q.popSend(datagramDropTooLarge)
	for range 6 {
		q.pushReceived([]byte("rcvd"))
	}
	var reports []DatagramDrop
	q.reportDrops(func(d DatagramDrop) { reports = append(reports, d) })
	want := []DatagramDrop{
		{Sent: true, Reason: DatagramDropQueueFull, Count: 6, Bytes: 10 + 11 + 12 + 13 + 14 + 15},
		{Sent: true, Reason: DatagramDropTooLarge, Count: 1, Bytes: 17},
		{Sent: false, Reason: DatagramDropQueueFull, Count: 2, Bytes: 8},
	}
	if !equalDrops(reports, want) {
		t.Errorf("reported %+v, want %+v", reports, want)
	}
	reports = nil
	q.reportDrops(func(d DatagramDrop) { reports = append(reports, d) })
	if len(reports) != 0 {
		t.Errorf("reported twice: %+v", reports)
	}
	// Closing drops what still waits (18, 19 and "x") and refuses more.
	q.closeSend()
	if q.pushSend([]byte("late")) {
		t.Error("pushSend queued after close")
	}
	if ok, wait := q.tryPushSend([]byte("late")); ok || wait != nil {
		t.Error("tryPushSend after close: queued, or a channel to wait on")
	}
	q.reportDrops(func(d DatagramDrop) { reports = append(reports, d) })
	want = []DatagramDrop{{Sent: true, Reason: DatagramDropConnectionClosed, Count: 3, Bytes: 18 + 19 + 1}}
	if !equalDrops(reports, want) {
		t.Errorf("reported %+v, want %+v", reports, want)
	}
	if send, recv := q.dropped(); send != 10 || recv != 2 {
		t.Errorf("dropped %d sent, %d received; want 10 and 2", send, recv)
	}
}

func equalDrops(a, b []DatagramDrop) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
