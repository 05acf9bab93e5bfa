package quic

import "testing"

// The inbound queue bounds the buffer memory it holds, counting a GRO
// run's large buffer whole, and counts what it drops by datagram.
func TestInboundQueueBound(t *testing.T) {
	c := &Conn{}
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
	if c.enqueue(inboundDatagram{data: []byte{1}}) {
		t.Fatal("a closed queue took a datagram")
	}
}
