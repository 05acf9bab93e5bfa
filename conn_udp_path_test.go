package quic

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// pathEchoServer accepts connections on l and echoes every stream; accepted
// connections are sent on conns.
func pathEchoServer(ctx context.Context, l *Listener, conns chan<- *Conn) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		conns <- c
		go func() {
			for {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				go func() {
					io.Copy(s, s)
					s.CloseWrite()
				}()
			}
		}()
	}
}

// pathEcho sends msg on a new stream of c and checks that it comes back.
func pathEcho(t *testing.T, c *Conn, msg []byte) {
	t.Helper()
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		s.Write(msg)
		s.CloseWrite()
	}()
	got, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo: %d bytes, %v", len(got), err)
	}
}

// pathPollUntil polls cond until it holds, failing after 10 s.
func pathPollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A bound generous enough for a busy machine: it only matters when
	// cond never holds.
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func pathListenUDP(t *testing.T) *net.UDPConn {
	t.Helper()
	return pathListenUDPAt(t, net.IPv4(127, 0, 0, 1))
}

func pathListenUDPAt(t *testing.T, ip net.IP) *net.UDPConn {
	t.Helper()
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}

// countingTokenStore counts the tokens stored.
type countingTokenStore struct {
	TokenStore
	puts atomic.Int32
}

func (s *countingTokenStore) Put(key string, token []byte) {
	s.puts.Add(1)
	s.TokenStore.Put(key, token)
}

// A client moves its connection to another socket with Conn.Migrate; the
// server follows, streams keep working, and the server sends a new address
// token for the new address: "After verifying a new client address, the
// server SHOULD send new address validation tokens (Section 8) to the
// client." (RFC 9000, Section 9.3)
func TestUDPClientMigrate(t *testing.T) {
	testUDPClientMigrate(t, net.IPv4(127, 0, 0, 1))
}

// The same over IPv6.
func TestUDPClientMigrateIPv6(t *testing.T) {
	u, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	u.Close()
	testUDPClientMigrate(t, net.IPv6loopback)
}

func testUDPClientMigrate(t *testing.T, ip net.IP) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts := &Transport{Conn: pathListenUDPAt(t, ip)}
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)

	ua, ub := pathListenUDPAt(t, ip), pathListenUDPAt(t, ip)
	ta, tb := &Transport{Conn: ua}, &Transport{Conn: ub}
	defer ta.Close()
	defer tb.Close()
	store := &countingTokenStore{TokenStore: NewLRUTokenStore(4, 4)}
	c, err := ta.Dial(ctx, ts.Conn.LocalAddr(), ctls, &Config{TokenStore: store})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	srv := <-conns
	pathEcho(t, c, bytes.Repeat([]byte("before "), 10000))
	pathPollUntil(t, "the first NEW_TOKEN", func() bool { return store.puts.Load() >= 1 })
	// A NEW_TOKEN frame declared lost spuriously arrives twice: count
	// from here.
	time.Sleep(50 * time.Millisecond)
	before := store.puts.Load()
	if err := c.Migrate(ctx, tb); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	pathPollUntil(t, "the client's local address", func() bool { return c.LocalAddr().String() == ub.LocalAddr().String() })
	pathEcho(t, c, bytes.Repeat([]byte("after "), 10000))
	pathPollUntil(t, "the server to follow", func() bool { return srv.RemoteAddr().String() == ub.LocalAddr().String() })
	pathEcho(t, c, []byte("still there"))
	pathPollUntil(t, "a NEW_TOKEN for the new address", func() bool { return store.puts.Load() > before })
}

// A server offers a preferred address (Listener.SetPreferredAddress); the
// client moves there after the handshake and keeps working.
func TestUDPPreferredAddress(t *testing.T) {
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
	if err := l.SetPreferredAddress(nil, tp); err == nil {
		t.Fatal("an IPv4 socket accepted as the IPv6 preferred address")
	}
	if err := l.SetPreferredAddress(tp, nil); err != nil {
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
	pathPollUntil(t, "the client to move to the preferred address", func() bool {
		return c.RemoteAddr().String() == tp.Conn.LocalAddr().String()
	})
	pathEcho(t, c, bytes.Repeat([]byte("preferred "), 10000))
	pathPollUntil(t, "the server to send from the preferred address", func() bool {
		return srv.LocalAddr().String() == tp.Conn.LocalAddr().String()
	})

	// A client that declines preferred addresses stays.
	c2, err := DialAddr(ctx, ts.Conn.LocalAddr().String(), ctls, &Config{DisablePreferredAddress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.CloseWithError(0, "")
	pathEcho(t, c2, []byte("hello"))
	if c2.RemoteAddr().String() != ts.Conn.LocalAddr().String() {
		t.Errorf("client moved to %v", c2.RemoteAddr())
	}
}
