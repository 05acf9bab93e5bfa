package interop

// Paths against quic-go: NAT rebinding in both roles (a relay in front of
// the client changes the port it sends from in the middle of a transfer)
// and client migration in both roles.

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
)

// rebindRelay stands between a client and a server like a NAT: the client
// sends to front, the relay forwards from back, and after rebindAfter
// datagrams from the client it replaces back with a new socket (a new
// port): the server sees the client's address change, and packets to the
// old port are lost.
type rebindRelay struct {
	t           *testing.T
	front       *net.UDPConn
	server      net.Addr
	rebindAfter int64

	mu     sync.Mutex
	back   *net.UDPConn
	client net.Addr
	n      atomic.Int64
	ports  []int // ports the relay sent from, in order
}

func newRebindRelay(t *testing.T, server net.Addr, rebindAfter int64) *rebindRelay {
	r := &rebindRelay{t: t, front: loopbackUDP(t), server: server, rebindAfter: rebindAfter}
	r.newBack()
	go r.readFront()
	return r
}

func (r *rebindRelay) newBack() {
	b := loopbackUDP(r.t)
	r.mu.Lock()
	old := r.back
	r.back = b
	r.ports = append(r.ports, b.LocalAddr().(*net.UDPAddr).Port)
	r.mu.Unlock()
	if old != nil {
		old.Close()
	}
	go r.readBack(b)
}

func (r *rebindRelay) readFront() {
	buf := make([]byte, 2048)
	for {
		n, addr, err := r.front.ReadFrom(buf)
		if err != nil {
			return
		}
		if r.n.Add(1) == r.rebindAfter {
			r.newBack()
		}
		r.mu.Lock()
		r.client = addr
		b := r.back
		r.mu.Unlock()
		b.WriteTo(buf[:n], r.server)
	}
}

func (r *rebindRelay) readBack(b *net.UDPConn) {
	buf := make([]byte, 2048)
	for {
		n, _, err := b.ReadFrom(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		c := r.client
		r.mu.Unlock()
		if c != nil {
			r.front.WriteTo(buf[:n], c)
		}
	}
}

func (r *rebindRelay) backAddr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.back.LocalAddr().String()
}

// Our server follows a quic-go client whose NAT rebinds mid-transfer.
func TestRebindingQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, accepted := startOurEcho(t, ctx, stls, nil)
	relay := newRebindRelay(t, udpAddr(t, addr), 300)
	c, err := quicgo.DialAddr(ctx, relay.front.LocalAddr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if err := echoOnce(ctx, quicGoConn{c}, testData(5<<20)); err != nil {
		t.Fatalf("echo across the rebinding: %v", err)
	}
	if relay.n.Load() < relay.rebindAfter {
		t.Fatalf("only %d datagrams relayed: no rebinding happened", relay.n.Load())
	}
	srv := <-accepted
	if got, want := srv.RemoteAddr().String(), relay.backAddr(); got != want {
		t.Errorf("server sends to %v, want the new address %v", got, want)
	}
	if err := echoOnce(ctx, quicGoConn{c}, []byte("after")); err != nil {
		t.Fatal(err)
	}
	t.Logf("server stats: %d migrations", srv.Stats().Migrations)
}

// quic-go's server follows our client whose NAT rebinds mid-transfer.
func TestRebindingOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, accepted := startQuicGoEcho(t, ctx, stls, nil)
	relay := newRebindRelay(t, udpAddr(t, addr), 300)
	c, err := ours.DialAddr(ctx, relay.front.LocalAddr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if err := echoOnce(ctx, ourConn{c}, testData(5<<20)); err != nil {
		t.Fatalf("echo across the rebinding: %v", err)
	}
	if relay.n.Load() < relay.rebindAfter {
		t.Fatalf("only %d datagrams relayed: no rebinding happened", relay.n.Load())
	}
	srv := <-accepted
	if got, want := srv.RemoteAddr().String(), relay.backAddr(); got != want {
		t.Errorf("quic-go sends to %v, want the new address %v", got, want)
	}
}

// Our client moves to another socket (Conn.Migrate) with a quic-go server.
func TestMigrationOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := quicgo.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := make(chan *quicgo.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		accepted <- c
		serveEcho(ctx, quicGoConn{c})
	}()
	ta, tb := &ours.Transport{Conn: loopbackUDP(t)}, &ours.Transport{Conn: loopbackUDP(t)}
	defer ta.Close()
	defer tb.Close()
	c, err := ta.Dial(ctx, l.Addr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if err := echoOnce(ctx, ourConn{c}, testData(1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := c.Migrate(ctx, tb); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if err := echoOnce(ctx, ourConn{c}, testData(1<<20)); err != nil {
		t.Fatalf("echo after migrating: %v", err)
	}
	srv := <-accepted
	if got, want := srv.RemoteAddr().String(), tb.Conn.LocalAddr().String(); got != want {
		t.Errorf("quic-go sends to %v, want %v", got, want)
	}
}

// A quic-go client moves to another socket (AddPath, Probe, Switch); our
// server follows.
func TestMigrationQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := ours.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := make(chan *ours.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		accepted <- c
		serveEcho(ctx, ourConn{c})
	}()
	ta, tb := &quicgo.Transport{Conn: loopbackUDP(t)}, &quicgo.Transport{Conn: loopbackUDP(t)}
	defer ta.Close()
	defer tb.Close()
	c, err := ta.Dial(ctx, l.Addr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if err := echoOnce(ctx, quicGoConn{c}, testData(1<<20)); err != nil {
		t.Fatal(err)
	}
	path, err := c.AddPath(tb)
	if err != nil {
		t.Fatalf("AddPath: %v", err)
	}
	if err := path.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if err := path.Switch(); err != nil {
		t.Fatalf("Switch: %v", err)
	}
	if err := echoOnce(ctx, quicGoConn{c}, testData(1<<20)); err != nil {
		t.Fatalf("echo after migrating: %v", err)
	}
	srv := <-accepted
	want := tb.Conn.LocalAddr().String()
	for deadline := time.Now().Add(5 * time.Second); srv.RemoteAddr().String() != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("our server sends to %v, want %v", srv.RemoteAddr(), want)
		}
	}
}

// udpAddr resolves a loopback "host:port".
func udpAddr(t *testing.T, addr string) *net.UDPAddr {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
