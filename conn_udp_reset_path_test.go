package quic

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// forgetConn makes t forget the routes of c's connection IDs, as a server
// that lost the connection's state does: packets for it then route
// nowhere, and t answers them with stateless resets (RFC 9000,
// Section 10.3).
func forgetConn(t *Transport, c *Conn) {
	for i := range t.ep.routes.shards {
		s := &t.ep.routes.shards[i]
		s.mu.Lock()
		for cid, r := range s.m {
			if r.c == c {
				delete(s.m, cid)
			}
		}
		s.mu.Unlock()
	}
}

// waitResetError waits until c ends and checks that it ended with a
// stateless reset, not a timeout.
func waitResetError(t *testing.T, who string, c *Conn) {
	t.Helper()
	select {
	case <-c.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still open 10 s after its peer lost the connection", who)
	}
	if err := context.Cause(c.Context()); !errors.As(err, new(*StatelessResetError)) {
		t.Fatalf("%s: closed with %v, want a stateless reset", who, err)
	}
}

// Stateless resets sent from a server's preferred-address socket carry the
// token of the listener's key: "A single static key can be used across all
// connections to the same endpoint" (RFC 9000, Section 10.3.2); the
// client, at the preferred address, recognises the reset when the server
// lost the connection.
func TestUDPStatelessResetFromPreferredAddress(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, tp := &Transport{Conn: pathListenUDP(t)}, &Transport{Conn: pathListenUDP(t)}
	defer ts.Close()
	defer tp.Close()
	l, err := ts.Listen(stls, &Config{MaxIdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetPreferredAddress(tp, nil); err != nil {
		t.Fatal(err)
	}
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)
	c, err := DialAddr(ctx, ts.Conn.LocalAddr().String(), ctls, &Config{MaxIdleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	srv := <-conns
	pathPollUntil(t, "the client to move to the preferred address", func() bool {
		return c.RemoteAddr().String() == tp.Conn.LocalAddr().String()
	})
	pathEcho(t, c, []byte("hello"))
	forgetConn(ts, srv)
	forgetConn(tp, srv)
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("anyone there?"))
	waitResetError(t, "client", c)
}

// A client that moved to another socket with Conn.Migrate and then lost
// the connection answers the server's packets there with stateless resets
// of its own key, which the server recognises; and the client itself
// recognises the server's resets arriving at that socket.
func TestUDPStatelessResetAfterMigrate(t *testing.T) {
	for _, lost := range []string{"client", "server"} {
		t.Run(lost+" lost the connection", func(t *testing.T) {
			ctls, stls := testTLS(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ts := &Transport{Conn: pathListenUDP(t)}
			defer ts.Close()
			l, err := ts.Listen(stls, &Config{MaxIdleTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			conns := make(chan *Conn, 1)
			go pathEchoServer(ctx, l, conns)
			ta, tb := &Transport{Conn: pathListenUDP(t)}, &Transport{Conn: pathListenUDP(t)}
			defer ta.Close()
			defer tb.Close()
			c, err := ta.Dial(ctx, ts.Conn.LocalAddr(), ctls, &Config{MaxIdleTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseWithError(0, "")
			srv := <-conns
			pathEcho(t, c, []byte("confirm")) // migration waits for the handshake's confirmation
			if err := c.Migrate(ctx, tb); err != nil {
				t.Fatal(err)
			}
			pathPollUntil(t, "the server to follow", func() bool { return srv.RemoteAddr().String() == tb.Conn.LocalAddr().String() })
			pathEcho(t, c, []byte("hello"))
			// The side that still has the connection sends, and must
			// learn of the loss from the stateless reset it gets.
			from, who := c, "client"
			if lost == "client" {
				forgetConn(ta, c)
				forgetConn(tb, c)
				from, who = srv, "server"
			} else {
				forgetConn(ts, srv)
			}
			s, err := from.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			s.Write(bytes.Repeat([]byte("x"), 100))
			waitResetError(t, who, from)
		})
	}
}

// A Transport sharing the listener's stateless reset key sends no reset
// for a connection ID the listener's Transport routes: its token would
// let whoever sent the packet end the connection (RFC 9000, Sections
// 10.3.2 and 21.11). A connection accepted before the preferred address
// was set has IDs its socket does not route. Unknown IDs get resets.
func TestUDPStatelessResetNotForLiveConnection(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, tp := &Transport{Conn: pathListenUDP(t)}, &Transport{Conn: pathListenUDP(t)}
	defer ts.Close()
	defer tp.Close()
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)
	c, err := DialAddr(ctx, ts.Conn.LocalAddr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	srv := <-conns
	pathEcho(t, c, []byte("hello"))
	if err := l.SetPreferredAddress(tp, nil); err != nil {
		t.Fatal(err)
	}
	var live wire.ConnectionID
	for i := range ts.ep.routes.shards {
		s := &ts.ep.routes.shards[i]
		s.mu.RLock()
		for cid, r := range s.m {
			if r.c == srv {
				live = cid
			}
		}
		s.mu.RUnlock()
	}
	attacker := pathListenUDP(t)
	send := func(cid wire.ConnectionID) {
		pkt := append([]byte{0x40}, cid.Bytes()...)
		pkt = append(pkt, bytes.Repeat([]byte{0xaa}, 60)...)
		if _, err := attacker.WriteTo(pkt, tp.Conn.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	send(live)
	send(wire.NewConnectionID([]byte{9, 9, 9, 9, 9, 9, 9, 9}))
	// The socket reads the two in order: once the second is answered,
	// the first was handled.
	pathPollUntil(t, "a reset for the unknown ID", func() bool { return tp.Stats().StatelessResetsSent >= 1 })
	if n := tp.Stats().StatelessResetsSent; n != 1 {
		t.Errorf("%d stateless resets sent for one unknown and one live connection ID, want 1", n)
	}
	pathEcho(t, c, []byte("still there"))
}

// Conn.Migrate and Listener.SetPreferredAddress refuse a Transport whose
// stateless reset key differs from the one of the connection's Transport:
// its resets would carry tokens the peer does not know. The same key
// configured on both is fine.
func TestResetKeyShared(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	mk := func(key []byte) *Transport {
		tr := &Transport{Conn: pathListenUDP(t), StatelessResetKey: key}
		if err := tr.init(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	home := mk(key)
	if err := mk(nil).shareResetKey(home); err != nil {
		t.Errorf("a fresh Transport: %v", err)
	}
	if err := mk(key).shareResetKey(home); err != nil {
		t.Errorf("the same key: %v", err)
	}
	if err := mk(bytes.Repeat([]byte{8}, 32)).shareResetKey(home); !errors.Is(err, errResetKeyMismatch) {
		t.Errorf("another key: %v", err)
	}
	used := mk(nil)
	used.statelessResetter()
	if err := used.shareResetKey(home); !errors.Is(err, errResetKeyMismatch) {
		t.Errorf("a Transport whose random key is in use: %v", err)
	}
	joined := mk(nil)
	joined.shareResetKey(home)
	cid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	if joined.statelessResetter().Token(cid) != home.statelessResetter().Token(cid) {
		t.Error("tokens differ after sharing the key")
	}
}
