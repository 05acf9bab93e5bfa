package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// parkedQuiet reports whether c released its idle memory and has no
// goroutine.
func parkedQuiet(c *Conn) bool { return c.parked.Load() && c.state.oneRTT.Released() }

// echoOnce has the server answer one stream with its data in upper case.
func echoOnce(t *testing.T, server *Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		s, err := server.AcceptStream(context.Background())
		if err != nil {
			done <- err
			return
		}
		req, err := io.ReadAll(s)
		if err == nil {
			_, err = s.Write(bytes.ToUpper(req))
		}
		if err == nil {
			err = s.CloseWrite()
		}
		done <- err
	}()
	return done
}

// roundTrip sends msg on a new client stream and checks the echo.
func roundTrip(t *testing.T, p *connPair, msg string) {
	t.Helper()
	done := echoOnce(t, p.server)
	s, err := p.client.OpenStreamSync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	s.CloseWrite()
	resp, err := io.ReadAll(s)
	if err != nil || string(resp) != string(bytes.ToUpper([]byte(msg))) {
		t.Fatalf("response %q, %v", resp, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// Quiet connections park: their goroutines exit and their keys go. A
// datagram from the peer, an application's stream and the
// connection's own timers bring them back, as many times as needed.
func TestSynctestParkAndWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		roundTrip(t, p, "before")
		time.Sleep(idleReleaseDelay / 2)
		synctest.Wait()
		if p.server.parked.Load() || p.client.parked.Load() {
			t.Fatal("parked before the connection was quiet for idleReleaseDelay")
		}
		time.Sleep(idleReleaseDelay)
		synctest.Wait()
		if !parkedQuiet(p.server) || !parkedQuiet(p.client) {
			t.Fatalf("not parked after a quiet period: server %v, client %v", p.server.parked.Load(), p.client.parked.Load())
		}
		for i := range 3 {
			// The client's application wakes the client; its datagrams
			// wake the server.
			roundTrip(t, p, "after "+string(rune('a'+i)))
			time.Sleep(2 * idleReleaseDelay)
			synctest.Wait()
			if !parkedQuiet(p.server) || !parkedQuiet(p.client) {
				t.Fatalf("round %d: not parked again", i)
			}
		}
		// The server's application wakes the server.
		ss, err := p.server.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		ss.Write([]byte("push"))
		ss.Close()
		cs, err := p.client.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(cs); err != nil || string(b) != "push" {
			t.Fatalf("server push: %q, %v", b, err)
		}
		// The idle timeout is a timer of a parked connection.
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		var idle *IdleTimeoutError
		if err := context.Cause(p.server.Context()); !errors.As(err, &idle) {
			t.Fatalf("server: %v; want an idle timeout", err)
		}
		if err := context.Cause(p.client.Context()); !errors.As(err, &idle) {
			t.Fatalf("client: %v; want an idle timeout", err)
		}
	})
}

// Keep-alives of a parked connection keep it open past the idle timeout.
func TestSynctestParkedKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Client: &Config{MaxIdleTimeout: 10 * time.Second, KeepAlivePeriod: 3 * time.Second}, Server: &Config{MaxIdleTimeout: 10 * time.Second}})
		for range 10 {
			time.Sleep(2500 * time.Millisecond)
			synctest.Wait()
			if isDone(p.client.Context()) || isDone(p.server.Context()) {
				t.Fatal("connection closed despite keep-alives")
			}
		}
		roundTrip(t, p, "still there")
	})
}

// A parked connection closes at once when the application or its
// Transport asks.
func TestSynctestParkedClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		time.Sleep(2 * idleReleaseDelay)
		synctest.Wait()
		if !parkedQuiet(p.server) || !parkedQuiet(p.client) {
			t.Fatal("not parked")
		}
		start := time.Now()
		p.client.CloseWithError(7, "bye")
		<-p.server.Context().Done()
		var ae *ApplicationError
		if err := context.Cause(p.server.Context()); !errors.As(err, &ae) || ae.Code != 7 {
			t.Fatalf("server: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("closing a parked connection took %v", d)
		}

		q := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		time.Sleep(2 * idleReleaseDelay)
		synctest.Wait()
		if !parkedQuiet(q.server) {
			t.Fatal("not parked")
		}
		start = time.Now()
		q.serverT.Close()
		if !isDone(q.server.Context()) {
			t.Fatal("Transport.Close returned with a connection open")
		}
		<-q.client.Context().Done()
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("closing a Transport with a parked connection took %v", d)
		}
	})
}

// Wakes racing with a goroutine that parks never leave two goroutines on
// one connection (the race detector would see them share the state) nor
// a connection that misses work: under a storm of wakes from many
// goroutines, with datagrams and stream data coming in meanwhile, round
// trips go on and the connection parks again after.
func TestSynctestParkWakeStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		for round := range 5 {
			time.Sleep(2 * idleReleaseDelay)
			synctest.Wait()
			if !parkedQuiet(p.server) || !parkedQuiet(p.client) {
				t.Fatalf("round %d: not parked", round)
			}
			stop := make(chan struct{})
			for range 8 {
				go func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						p.server.wake()
						p.client.wake()
						time.Sleep(time.Duration(round+1) * 100 * time.Millisecond)
					}
				}()
			}
			roundTrip(t, p, "storm")
			close(stop)
		}
		time.Sleep(2 * idleReleaseDelay)
		synctest.Wait()
		if !parkedQuiet(p.server) || !parkedQuiet(p.client) {
			t.Fatal("not parked after the storms")
		}
	})
}
