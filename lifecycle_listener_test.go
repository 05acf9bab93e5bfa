package quic

import (
	"context"
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/wire"
)

// Listener.Close empties the accept queue: Accept after Close fails with
// ErrListenerClosed (a net.ErrClosed), and the connections that completed
// their handshake but were never accepted are closed with
// CONNECTION_REFUSED, so that their clients learn at once that nothing
// was processed. Accept still returned a queued connection in
// 14 of 20 trials, and those connections stayed open.
func TestListenerCloseEmptiesAcceptQueue(t *testing.T) {
	for trial := range 10 {
		synctest.Test(t, func(t *testing.T) {
			m := newConnPair(t, connPairOpts{Mem: true, NoDial: true})
			defer m.closeAfter(time.Second, time.Second)
			var clients []*Conn
			for range 3 {
				c, err := m.clientT.Dial(context.Background(), m.serverT.Conn.LocalAddr(), m.ctls, &Config{KeepAlivePeriod: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				clients = append(clients, c)
			}
			synctest.Wait() // the server's handshakes completed: queued
			m.listener.Close()
			c, err := m.listener.Accept(context.Background())
			if err == nil {
				c.CloseWithError(0, "")
				t.Fatalf("trial %d: Accept after Close returned a queued connection", trial)
			}
			if !errors.Is(err, ErrListenerClosed) || !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Accept after Close: %v, want ErrListenerClosed and net.ErrClosed", err)
			}
			time.Sleep(time.Second)
			for i, c := range clients {
				var te *TransportError
				if err := context.Cause(c.Context()); !errors.As(err, &te) || !te.Remote || te.Code != wire.ConnectionRefused {
					t.Fatalf("trial %d: client %d of a queued connection: %v, want CONNECTION_REFUSED from the server", trial, i, err)
				}
			}
		})
	}
}

// A Listener made by ListenAddr releases its socket once closed, even
// when clients whose connections were never accepted keep them alive
// with PINGs: those are closed with the listener. The socket stayed bound
// for as long as the clients lived (40 s and more).
func TestListenAddrCloseReleasesSocket(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	ct := loopbackTransport(t)
	defer ct.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 {
		if _, err := ct.Dial(ctx, l.Addr(), ctls, &Config{KeepAlivePeriod: 50 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// The socket is released after the closed connections' closing
	// periods (three PTOs; on loopback about 100 ms), 5 s at most.
	deadline := time.Now().Add(10 * time.Second)
	for {
		pc, err := net.ListenPacket("udp", addr)
		if err == nil {
			pc.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ListenAddr's socket still bound 10 s after Listener.Close: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
