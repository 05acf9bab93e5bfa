package quic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// A datagram the application sends wakes a parked connection.
func TestSynctestParkedDatagram(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := &Config{MaxIdleTimeout: time.Minute, EnableDatagrams: true}
		p := newConnPair(t, connPairOpts{Mem: true, Client: conf, Server: conf})
		parkBoth(t, p)
		if err := p.client.SendDatagram([]byte("dgram")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		b, err := p.server.ReceiveDatagram(ctx)
		if err != nil || string(b) != "dgram" {
			t.Fatalf("ReceiveDatagram: %q, %v", b, err)
		}
	})
}

// CancelWrite and CancelRead wake a parked connection.
func TestSynctestParkedStreamResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		cs, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cs.Write([]byte("x"))
		ss, err := p.server.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		io.ReadFull(ss, make([]byte, 1))
		ss.Write([]byte("y"))
		io.ReadFull(cs, make([]byte, 1))
		parkBoth(t, p)
		cs.CancelWrite(5)
		time.Sleep(time.Second)
		_, err = ss.Read(make([]byte, 1))
		var se *StreamError
		if !errors.As(err, &se) || se.Code != 5 {
			t.Fatalf("server Read after the client's CancelWrite: %v", err)
		}
		parkBoth(t, p)
		cs.CancelRead(6)
		time.Sleep(time.Second)
		ss.SetWriteDeadline(time.Now().Add(time.Second))
		var werr error
		for werr == nil {
			_, werr = ss.Write([]byte("z"))
		}
		if !errors.As(werr, &se) || se.Code != 6 {
			t.Fatalf("server Write after the client's CancelRead: %v", werr)
		}
	})
}

// A flow-control-limited transfer whose receiver reads only once both
// ends parked.
func TestSynctestParkedReaderCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 64 << 10
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{
			MaxIdleTimeout:             time.Minute,
			InitialStreamReceiveWindow: window, MaxStreamReceiveWindow: window,
			InitialConnectionReceiveWindow: 2 * window, MaxConnectionReceiveWindow: 2 * window,
		}})
		cs, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
		go func() {
			cs.Write(data)
			cs.CloseWrite()
		}()
		ss, err := p.server.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		parkBoth(t, p)
		start := time.Now()
		got, err := io.ReadAll(ss)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("ReadAll: %d bytes, %v", len(got), err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("1 MiB through a 64 KiB window took %v", d)
		}
	})
}

// The client updates its keys often; the connection parks in between.
func TestSynctestParkedKeyUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Client: &Config{MaxIdleTimeout: time.Minute, KeyUpdateInterval: 3}, Server: &Config{MaxIdleTimeout: time.Minute, KeyUpdateInterval: 5}})
		for i := range 6 {
			roundTrip(t, p, string(bytes.Repeat([]byte{'a' + byte(i)}, 5000*i)))
			time.Sleep(time.Duration(i) * 200 * time.Millisecond)
			if i%2 == 0 {
				parkBoth(t, p)
			}
		}
		cu, su := p.client.Stats().KeyUpdates, p.server.Stats().KeyUpdates
		if cu < 2 || su < 2 {
			t.Fatalf("key updates: client %d, server %d", cu, su)
		}
		if isDone(p.client.Context()) || isDone(p.server.Context()) {
			t.Fatal("closed")
		}
	})
}

// Stats, ConnectionState and Drain work on a parked connection, which
// parks again after.
func TestSynctestParkedStatsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		roundTrip(t, p, "hello")
		parkBoth(t, p)
		st := p.client.Stats()
		if !st.HandshakeComplete || st.BytesSent == 0 || p.client.ConnectionState().Version == 0 {
			t.Fatalf("stats of a parked connection: %+v", st)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := p.server.WaitAcked(ctx); err != nil {
			t.Fatalf("Drain: %v", err)
		}
		synctest.Wait()
		if !parkedQuiet(p.server) {
			t.Fatal("not parked again after Drain")
		}
	})
}

// Real time, real parallelism: wakes from several goroutines while the
// idle connections park after every wake, for many cycles, with stream
// data, datagrams and Stats calls now and then.
func TestParkWakeStormRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("takes seconds")
	}
	conf := &Config{MaxIdleTimeout: time.Minute, EnableDatagrams: true}
	p := newConnPair(t, connPairOpts{Mem: true, RealTime: true, Config: conf})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for round := range 2 {
		// Both ends park once quiet for idleReleaseDelay, which on a busy
		// machine may take longer than that: wait for it (looking only
		// at the flags: the state belongs to whichever goroutine runs).
		pathPollUntil(t, fmt.Sprintf("round %d: both ends to park", round), func() bool {
			return p.server.parked.Load() && p.client.parked.Load()
		})
		stop := make(chan struct{})
		done := make(chan struct{})
		for g := range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					p.server.wake()
					p.client.wake()
					if i%64 == g {
						p.client.Stats()
						p.server.ConnectionState()
					}
				}
			}()
		}
		time.Sleep(200 * time.Millisecond)
		p.client.SendDatagram([]byte("d"))
		if b, err := p.server.ReceiveDatagram(ctx); err != nil || string(b) != "d" {
			t.Fatalf("datagram: %q %v", b, err)
		}
		roundTrip(t, p, "storm")
		close(stop)
		for range 4 {
			<-done
		}
	}
	p.client.CloseWithError(0, "")
	<-p.server.Context().Done()
}

// A client whose connection parked migrates to another socket: the
// request wakes it, and the server, parked too, validates the new path.
func TestUDPParkedMigrate(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the connections to park")
	}
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts := &Transport{Conn: pathListenUDP(t)}
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)
	ua, ub := pathListenUDP(t), pathListenUDP(t)
	ta, tb := &Transport{Conn: ua}, &Transport{Conn: ub}
	defer ta.Close()
	defer tb.Close()
	c, err := ta.Dial(ctx, ts.Conn.LocalAddr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	srv := <-conns
	pathEcho(t, c, []byte("before"))
	pathPollUntil(t, "both ends to park", func() bool { return c.parked.Load() && srv.parked.Load() })
	if err := c.Migrate(ctx, tb); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	pathEcho(t, c, []byte("after"))
	pathPollUntil(t, "the server to follow", func() bool { return srv.RemoteAddr().String() == ub.LocalAddr().String() })
	pathPollUntil(t, "both ends to park again", func() bool { return c.parked.Load() && srv.parked.Load() })
	pathEcho(t, c, []byte("still there"))
}
