package quic

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// A server that accepts streams and leaves their data unread while it
// waits in AcceptUniStream for the next one: the peer has used the
// connection window up on the unread streams, and a new stream's first
// byte needs connection credit too ("Connection flow control ... limiting
// the total bytes of stream data sent in STREAM frames on all streams",
// RFC 9000, Section 4.1), so without more credit the stream the
// application waits for never arrives. The window grew only while a Read
// waited; an Accept waits for the peer's data just as much. Buffered data
// stays bounded by MaxConnectionReceiveWindow.
func TestSynctestAcceptWaitsOnUsedConnWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Client: &Config{MaxIdleTimeout: time.Hour}, Server: &Config{MaxIdleTimeout: time.Hour}})
		// Two streams of 600 KB fill their 512 KiB stream windows, more
		// than the 768 KiB connection window between them.
		for range 2 {
			s, err := p.client.OpenUniStreamSync(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			go s.Write(make([]byte, 600_000))
		}
		var unread []*ReceiveStream
		for range 2 {
			s, err := p.server.AcceptUniStream(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			unread = append(unread, s) // accepted, not read
		}
		time.Sleep(time.Second) // the peer uses up the connection window
		go func() {
			s, err := p.client.OpenUniStreamSync(context.Background())
			if err != nil {
				return
			}
			s.Write([]byte("next"))
			s.Close()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := p.server.AcceptUniStream(ctx)
		if err != nil {
			t.Fatalf("the third stream: %v; connection window %d, %d received, %d consumed",
				err, p.server.state.connRecv.Window(), p.server.state.connRecv.Received(), p.server.state.connRecv.Consumed())
		}
		b, err := io.ReadAll(s)
		if err != nil || string(b) != "next" {
			t.Fatalf("read %q, %v", b, err)
		}
		for _, u := range unread {
			u.CancelRead(0)
		}
	})
}
