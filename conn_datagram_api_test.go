package quic

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// ReceiveDatagram fails at once, with the error SendDatagram returns,
// when datagrams were not negotiated: when this side did not enable them,
// and when the peer did not (known once the handshake completed); it does
// not wait for its context.
func TestReceiveDatagramNotNegotiated(t *testing.T) {
	on := &Config{EnableDatagrams: true}
	for _, c := range []struct {
		name           string
		client, server *Config
	}{
		{"neither", nil, nil},
		{"server only", nil, on},
		{"client only", on, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newConnPair(t, connPairOpts{Mem: true, Client: c.client, Server: c.server})
				for _, conn := range []*Conn{p.client, p.server} {
					sendErr := conn.SendDatagram([]byte("x"))
					if !errors.Is(sendErr, ErrDatagramsNotNegotiated) {
						t.Fatalf("SendDatagram: %v, want ErrDatagramsNotNegotiated", sendErr)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					start := time.Now()
					_, err := conn.ReceiveDatagram(ctx)
					cancel()
					if err != sendErr || time.Since(start) != 0 {
						t.Errorf("ReceiveDatagram: %v after %v; want %v at once", err, time.Since(start), sendErr)
					}
				}
			})
		})
	}
}

// A ReceiveDatagram that waits on a connection whose handshake is in
// progress (ListenEarly) learns that the peer did not enable datagrams
// when the handshake completes, and fails then.
func TestReceiveDatagramWaitsForNegotiation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Early: true, NoDial: true, Server: &Config{EnableDatagrams: true}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		go p.clientT.Dial(ctx, p.serverT.Conn.LocalAddr(), p.ctls, nil)
		s, err := p.listener.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.ReceiveDatagram(ctx)
		if !errors.Is(err, ErrDatagramsNotNegotiated) || isDone(ctx) {
			t.Errorf("ReceiveDatagram: %v (context done: %v); want ErrDatagramsNotNegotiated when the handshake completes", err, isDone(ctx))
		}
		select {
		case <-s.HandshakeComplete():
		default:
			t.Error("ReceiveDatagram returned before the handshake completed")
		}
		p.server = s // closed at cleanup
	})
}

// Datagrams dropped from a full send queue are counted in the
// connection's statistics and reported to its Tracer, so that every
// datagram sent either arrives or is counted; the queue's length is
// Config.DatagramQueueLen; SendDatagramWait waits for room instead of
// dropping.
func TestDatagramSendQueueDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var traced []DatagramDrop
		const qlen, burst, size = 8, 100, 1000
		clientConf := &Config{EnableDatagrams: true, DatagramQueueLen: qlen, Tracer: func(context.Context, bool, ConnectionID) *Tracer {
			return &Tracer{DatagramsDropped: func(d DatagramDrop) {
				mu.Lock()
				traced = append(traced, d)
				mu.Unlock()
			}}
		}}
		p := newConnPair(t, connPairOpts{Mem: true, Client: clientConf, Server: &Config{EnableDatagrams: true, DatagramQueueLen: 4 * burst}})
		payload := func(prefix byte, i int) []byte {
			b := make([]byte, size)
			b[0], b[1] = prefix, byte(i)
			return b
		}
		// A burst: no fake time passes while it is sent, so no ACK
		// arrives and the congestion window (the initial one, about ten
		// packets, grown a little by the handshake) lets only the first
		// datagrams go; of the rest, the queue keeps the last qlen.
		for i := range burst {
			if err := p.client.SendDatagram(payload('d', i)); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var got int
		for {
			rctx, rcancel := context.WithTimeout(ctx, time.Second)
			_, err := p.server.ReceiveDatagram(rctx)
			rcancel()
			if err != nil {
				break
			}
			got++
		}
		s := p.client.Stats()
		if int(s.UnsentDatagramsDropped)+got != burst {
			t.Errorf("%d datagrams arrived and %d counted as dropped, of %d sent", got, s.UnsentDatagramsDropped, burst)
		}
		if s.UnsentDatagramsDropped < burst-qlen-30 {
			t.Errorf("%d dropped with a queue of %d: the queue is longer than configured", s.UnsentDatagramsDropped, qlen)
		}
		var n, bytes int
		mu.Lock()
		for _, d := range traced {
			if !d.Sent || d.Reason != DatagramDropQueueFull {
				t.Errorf("Tracer: %+v; want sent datagrams dropped, queue_full", d)
			}
			n += d.Count
			bytes += d.Bytes
		}
		mu.Unlock()
		if uint64(n) != s.UnsentDatagramsDropped || bytes != size*n {
			t.Errorf("Tracer: %d datagrams of %d bytes in all dropped; statistics: %d", n, bytes, s.UnsentDatagramsDropped)
		}
		if s := p.server.Stats(); s.UnreadDatagramsDropped != 0 {
			t.Errorf("%d received datagrams dropped", s.UnreadDatagramsDropped)
		}
		// SendDatagramWait never drops: every datagram arrives.
		before := p.client.Stats().UnsentDatagramsDropped
		done := make(chan error, 1)
		go func() {
			for i := range burst {
				if err := p.client.SendDatagramWait(ctx, payload('w', i)); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		for i := range burst {
			b, err := p.server.ReceiveDatagram(ctx)
			if err != nil {
				t.Fatalf("after %d of %d: %v", i, burst, err)
			}
			if b[0] != 'w' || b[1] != byte(i) {
				t.Fatalf("datagram %d: %q", i, b[:2])
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := p.client.Stats().UnsentDatagramsDropped; n != before {
			t.Errorf("SendDatagramWait: %d datagrams dropped", n-before)
		}
	})
}

// A SendDatagramWait waiting for room returns when the connection closes;
// the datagrams still queued then are counted as dropped, with the reason
// connection_closed, and SendDatagram fails afterwards.
func TestDatagramSendQueueClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var closedDrops atomic.Int64
		conf := &Config{EnableDatagrams: true, DatagramQueueLen: 2, Tracer: func(context.Context, bool, ConnectionID) *Tracer {
			return &Tracer{DatagramsDropped: func(d DatagramDrop) {
				if d.Sent && d.Reason == DatagramDropConnectionClosed {
					closedDrops.Add(int64(d.Count))
				}
			}}
		}}
		p := newConnPair(t, connPairOpts{Mem: true, Client: conf, Server: &Config{EnableDatagrams: true}})
		// The network goes away: no ACK comes back, and once the
		// congestion window is spent the queue fills up.
		p.clientT.Conn.(*memConn).blackhole.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			for {
				if err := p.client.SendDatagramWait(ctx, make([]byte, 1000)); err != nil {
					errc <- err
					return
				}
			}
		}()
		synctest.Wait()
		select {
		case err := <-errc:
			t.Fatalf("SendDatagramWait returned %v before the close", err)
		default:
		}
		p.client.CloseWithError(3, "bye")
		synctest.Wait()
		select {
		case err := <-errc:
			var ae *ApplicationError
			if !errors.As(err, &ae) || ae.Code != 3 || ae.Remote {
				t.Errorf("SendDatagramWait: %v, want the local close", err)
			}
		default:
			t.Fatal("SendDatagramWait still waits after the close")
		}
		if s := p.client.Stats(); closedDrops.Load() != 2 || s.UnsentDatagramsDropped != 2 {
			t.Errorf("%d datagrams reported dropped at the close, %d counted; want the 2 queued", closedDrops.Load(), s.UnsentDatagramsDropped)
		}
		if err := p.client.SendDatagram([]byte("late")); err == nil {
			t.Error("SendDatagram succeeded after the close")
		}
		p.clientT.Conn.(*memConn).blackhole.Store(false)
	})
}
