package masque

import (
	"bytes"
	"testing"
)

// The payloads a Conn holds for ReadFrom are bounded in bytes as well as
// in number: a proxy sending 64 KiB DATAGRAM capsules faster than the
// application reads makes the Conn hold at most maxQueuedBytes; the rest
// are dropped, and reading frees the room again.
func TestClientQueueBoundedInBytes(t *testing.T) {
	c := &Conn{in: make(chan []byte, maxQueued), closed: make(chan struct{})}
	big := appendUDP(nil, bytes.Repeat([]byte("x"), 65000))
	for range 40 { // 2.6 MB
		c.push(big)
	}
	if q := c.queued.Load(); q > maxQueuedBytes || len(c.in) != maxQueuedBytes/65000 {
		t.Fatalf("%d bytes in %d payloads held", q, len(c.in))
	}
	buf := make([]byte, 65536)
	for len(c.in) > 0 {
		if n, _, err := c.ReadFrom(buf); err != nil || n != 65000 {
			t.Fatalf("ReadFrom: %d %v", n, err)
		}
	}
	if q := c.queued.Load(); q != 0 {
		t.Fatalf("%d bytes counted after all were read", q)
	}
	c.push(appendUDP(nil, []byte("small")))
	if n, _, err := c.ReadFrom(buf); err != nil || string(buf[:n]) != "small" {
		t.Fatalf("after draining: %q %v", buf[:n], err)
	}
}
