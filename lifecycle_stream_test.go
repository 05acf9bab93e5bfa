package quic

import (
	"context"
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// A Write blocked on a full send buffer returns, with an error that
// matches net.ErrClosed, when another goroutine closes the sending side:
// Stream.CloseWrite, Stream.Close or SendStream.Close. It never returned:
// closing the write side did not wake the writer.
func TestBlockedWriteWokenByClose(t *testing.T) {
	for _, how := range []string{"Stream.CloseWrite", "Stream.Close", "SendStream.Close"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const window = 16 << 10
				p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{
					InitialStreamReceiveWindow: window, MaxStreamReceiveWindow: window,
					InitialConnectionReceiveWindow: window, MaxConnectionReceiveWindow: window,
				}})
				var write func([]byte) (int, error)
				var closeIt func() error
				if how == "SendStream.Close" {
					s, err := p.client.OpenUniStreamSync(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					write, closeIt = s.Write, s.Close
				} else {
					s, err := p.client.OpenStreamSync(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					write, closeIt = s.Write, s.CloseWrite
					if how == "Stream.Close" {
						closeIt = s.Close
					}
				}
				// The server never reads: the window, then the send
				// buffer fill.
				data := make([]byte, 4<<20)
				type result struct {
					n   int
					err error
				}
				done := make(chan result, 1)
				go func() {
					n, err := write(data)
					done <- result{n, err}
				}()
				synctest.Wait() // Write blocks
				select {
				case r := <-done:
					t.Fatalf("Write returned before the close: %d, %v", r.n, r.err)
				default:
				}
				closeIt()
				synctest.Wait()
				select {
				case r := <-done:
					if !errors.Is(r.err, net.ErrClosed) {
						t.Fatalf("blocked Write after %s: %d, %v; want net.ErrClosed", how, r.n, r.err)
					}
					if r.n <= 0 || r.n >= len(data) {
						t.Fatalf("blocked Write wrote %d of %d bytes", r.n, len(data))
					}
				default:
					t.Fatalf("Write still blocked after %s", how)
				}
				if _, err := write([]byte{1}); !errors.Is(err, net.ErrClosed) {
					t.Fatalf("Write after %s: %v", how, err)
				}
			})
		})
	}
}

// Conn.Drain that returns because its context ended leaves no waiter
// behind: 100,000 cancelled calls kept 100,000 waiters (11.7 MB).
func TestDrainLeavesNoWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		cs, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// Acknowledged: Drain returns at once.
		if err := p.client.WaitAcked(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Data the peer cannot acknowledge: the link is cut.
		p.clientT.Conn.(*memConn).blackhole.Store(true)
		if _, err := cs.Write([]byte("more")); err != nil {
			t.Fatal(err)
		}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		for range 1000 {
			if err := p.client.WaitAcked(cancelled); !errors.Is(err, context.Canceled) {
				t.Fatalf("Drain with a cancelled context: %v", err)
			}
		}
		ctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		if err := p.client.WaitAcked(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Drain of unacknowledged data: %v", err)
		}
		p.client.drain.mu.Lock()
		n := len(p.client.drain.waiters)
		p.client.drain.mu.Unlock()
		if n != 0 {
			t.Fatalf("%d Drain waiters left after the calls returned", n)
		}
		p.clientT.Conn.(*memConn).blackhole.Store(false)
	})
}
