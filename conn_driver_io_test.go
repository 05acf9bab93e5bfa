package quic

import "testing"

// The inbound queue bounds the buffer memory it holds, counting a GRO
// run's large buffer whole, and counts what it drops by datagram.
func TestInboundQueueBound(t *testing.T) {
	c := &Conn{t: &Transport{}}
	big := make([]byte, groBufferSize)
	n := 0
	for c.enqueue(inboundDatagram{data: big[:4400], buf: &big, segSize: 1100}) {
		n++
	}
	if n != maxInboundQueued/groBufferSize {
		t.Fatalf("%d GRO runs queued; want %d", n, maxInboundQueued/groBufferSize)
	}
	if c.dropped != 4 {
		t.Fatalf("dropped %d datagrams; want the 4 of the refused run", c.dropped)
	}
	c.inbound.mu.Lock()
	c.inbound.q = nil // not pooled buffers: do not return them
	c.inbound.mu.Unlock()
	c.inbound.close(nil)
	// A closed queue passes a datagram on (Conn.handOver): to what is
	// left of the connection, or here, with nothing left, to the drop
	// count of an unknown connection, not of a full queue.
	if !c.enqueue(inboundDatagram{data: []byte{1}}) {
		t.Fatal("a closed queue refused a datagram, counted as a full-queue drop")
	}
	if c.dropped != 4 {
		t.Fatalf("dropped %d datagrams after the close; want 4", c.dropped)
	}
	if n := c.t.Stats().PacketsDropped[DropUnknownConnection]; n != 1 {
		t.Fatalf("%d datagrams dropped for an unknown connection; want 1", n)
	}
}
