package quic

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// A reader that takes part of one stream's data and then waits for
// another stream gets that stream's data: the part it read frees
// connection credit the peer waits for.
func TestSynctestPartialReadFreesConnectionCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const streamWindow, connWindow = 512 << 10, 896 << 10
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{
			MaxIdleTimeout:             time.Minute,
			InitialStreamReceiveWindow: streamWindow, MaxStreamReceiveWindow: streamWindow,
			InitialConnectionReceiveWindow: connWindow, MaxConnectionReceiveWindow: connWindow,
		}})
		a, err := p.client.OpenUniStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.client.OpenUniStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// A fills its window; B the rest of the connection's (384 KB)
		// and has more to send.
		a.Write(make([]byte, streamWindow))
		time.Sleep(time.Second)
		go b.Write(make([]byte, 2*streamWindow))
		const bFirst = connWindow - streamWindow
		time.Sleep(time.Second)
		sa, err := p.server.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sb, err := p.server.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sa.StreamID() != a.StreamID() {
			sa, sb = sb, sa
		}
		// Read what B sent, then 100 KB of A: with what was read of B,
		// more than half the connection's window, which calls for a
		// MAX_DATA (the 384 KB of B alone do not). Then wait for more of
		// B.
		if _, err := io.ReadFull(sb, make([]byte, bFirst)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * idleReleaseDelay) // the packets this caused are acknowledged; both ends park
		if _, err := io.ReadFull(sa, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := io.ReadFull(sb, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("more of B came after %v", d)
		}
	})
}

// A reader that takes part of a stream's data and then waits for what
// the peer sends after that stream gets it: the part it read frees the
// stream credit the peer waits for.
func TestSynctestPartialReadFreesStreamCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 512 << 10
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{
			MaxIdleTimeout:             time.Minute,
			InitialStreamReceiveWindow: window, MaxStreamReceiveWindow: window,
		}})
		// The peer writes 700 KB on A and, once they are delivered, opens
		// B.
		go func() {
			a, err := p.client.OpenUniStreamSync(context.Background())
			if err != nil {
				return
			}
			a.Write(make([]byte, 700<<10))
			a.Close()
			if err := p.client.WaitAcked(context.Background()); err != nil {
				return
			}
			b, err := p.client.OpenUniStreamSync(context.Background())
			if err != nil {
				return
			}
			b.Write([]byte("b"))
			b.Close()
		}()
		sa, err := p.server.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second) // A's window is full; both ends park
		// 300 KB of A, in 8 KB reads, call for a MAX_STREAM_DATA (the
		// peer may then send all of A); then wait for B.
		buf := make([]byte, 8<<10)
		for n := 0; n < 300<<10; n += len(buf) {
			if _, err := io.ReadFull(sa, buf); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // a slow reader: the connection is quick
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := p.server.AcceptUniStream(ctx); err != nil {
			t.Fatalf("B: %v after %v", err, time.Since(start))
		}
	})
}

// Responses read one after another: the peer sends eight 100 KB
// responses at once, more than the connection's default window (768
// KiB), and the application reads them in order. The data of the later
// responses holds the window while the application waits for the end of
// the first, which the peer cannot send: with credit granted only as
// data is consumed (the half-window rule) this stalled for good. The
// connection grows its window while a reader waits on a starved window.
func TestSynctestSequentialReadsOfConcurrentResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, size = 8, 100 << 10
		p := newConnPair(t, connPairOpts{Mem: true, Client: &Config{MaxIdleTimeout: time.Hour}, Server: &Config{MaxIdleTimeout: time.Hour}})
		go func() {
			for range n {
				s, err := p.server.AcceptStream(context.Background())
				if err != nil {
					return
				}
				go func() {
					io.ReadAll(s)
					s.Write(make([]byte, size))
					s.CloseWrite()
				}()
			}
		}()
		var streams []*Stream
		for range n {
			s, err := p.client.OpenStreamSync(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			s.Write([]byte("GET"))
			s.CloseWrite()
			streams = append(streams, s)
		}
		time.Sleep(time.Second) // all responses sent as far as the window allows
		start := time.Now()
		for i, s := range streams {
			s.SetReadDeadline(time.Now().Add(time.Minute))
			b, err := io.ReadAll(s)
			if err != nil || len(b) != size {
				t.Fatalf("response %d: %d bytes, %v (after %v)", i, len(b), err, time.Since(start))
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("the responses took %v", d)
		}
		t.Logf("connection window now %d", p.client.state.connRecv.Window())
	})
}
