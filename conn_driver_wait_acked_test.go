package quic

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// WaitAcked returns once the peer acknowledged everything written, so that a
// CONNECTION_CLOSE sent right after does not cut off a response: the
// client reads the whole 2 MB although the server closed the connection
// as soon as WaitAcked returned.
func TestUDPDrainBeforeClose(t *testing.T) {
	ctls, stls := testTLS(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	l, err := tr.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const size = 2 << 20
	drained := make(chan error, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			drained <- err
			return
		}
		s, err := c.AcceptStream(ctx)
		if err != nil {
			drained <- err
			return
		}
		io.ReadAll(s)
		s.Write(make([]byte, size))
		s.CloseWrite()
		err = c.WaitAcked(ctx)
		c.CloseWithError(0, "done")
		drained <- err
	}()
	c, err := DialAddr(ctx, l.Addr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("GET"))
	s.CloseWrite()
	n, err := io.Copy(io.Discard, s)
	if n != size || err != nil {
		t.Fatalf("read %d of %d bytes: %v", n, size, err)
	}
	if err := <-drained; err != nil {
		t.Fatalf("WaitAcked: %v", err)
	}
	// A WaitAcked on a connection that ended returns its cause.
	<-c.Context().Done()
	dctx, dcancel := context.WithTimeout(ctx, time.Second)
	defer dcancel()
	if err := c.WaitAcked(dctx); err == nil || err == context.DeadlineExceeded {
		t.Fatalf("WaitAcked on a closed connection: %v", err)
	}
}
