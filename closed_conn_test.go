package quic

import (
	"context"
	"errors"
	"net"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/internal/freelist"
	"github.com/quicstack/quic/wire"
)

// routeCounts returns how many connection IDs of t route to connections
// and to closed connections.
func routeCounts(t *Transport) (conns, closed int) {
	for i := range t.ep.routes.shards {
		s := &t.ep.routes.shards[i]
		s.mu.RLock()
		for _, r := range s.m {
			if r.c != nil {
				conns++
			}
			if r.closed != nil {
				closed++
			}
		}
		s.mu.RUnlock()
	}
	return conns, closed
}

// liveHeap returns the bytes of live heap objects after a collection,
// without the buffers the free lists keep for reuse (as two collections
// empty sync.Pools): two trims with no use between give them all back.
func liveHeap() uint64 {
	freelist.TrimNow()
	freelist.TrimNow()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestClosedConnsKeepLittle closes connections from the client and checks
// that, in the closing state (client) and the draining state (server),
// their IDs route to what is left of them, which keeps little memory,
// until three PTOs have passed; then nothing of them is left.
func TestClosedConnsKeepLittle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 100
		m := newConnPair(t, connPairOpts{Mem: true, NoDial: true})
		clientT, serverT := m.clientT, m.serverT
		defer m.closeAfter(0, 0)
		// A first connection makes the Transports' buffers and pools,
		// which are not what is measured.
		warm, _ := m.dial(t, nil)
		warm.CloseWithError(0, "")
		warm = nil
		time.Sleep(10 * time.Second)
		before := liveHeap()

		var clients, servers []*Conn
		for range n {
			c, s := m.dial(t, nil)
			clients, servers = append(clients, c), append(servers, s)
		}
		time.Sleep(time.Second) // handshakes confirmed, spare IDs issued
		synctest.Wait()
		for _, c := range clients {
			c.CloseWithError(0, "bye")
		}
		time.Sleep(2 * memOneWayLatency) // the servers received CONNECTION_CLOSE
		synctest.Wait()
		for _, s := range servers {
			if err := s.Context().Err(); err == nil {
				t.Fatal("a server connection is not closed")
			}
		}
		for _, tr := range []*Transport{clientT, serverT} {
			conns, closed := routeCounts(tr)
			if conns != 0 || closed < n {
				t.Errorf("IDs routing to connections %d, to closed connections %d; want 0 and at least %d", conns, closed, n)
			}
			if got := tr.Stats().ConnectionsOpen; got != n {
				t.Errorf("ConnectionsOpen = %d in the closing period, want %d", got, n)
			}
		}
		clientT.closed.mu.Lock()
		for _, cl := range clientT.closed.heap {
			if len(cl.datagram) == 0 {
				t.Error("a closing client connection has no CONNECTION_CLOSE datagram to repeat")
				break
			}
		}
		clientT.closed.mu.Unlock()
		serverT.closed.mu.Lock()
		for _, cl := range serverT.closed.heap {
			if cl.datagram != nil {
				t.Error("a draining server connection would send")
				break
			}
		}
		serverT.closed.mu.Unlock()

		clients, servers = nil, nil
		perPair := (int64(liveHeap()) - int64(before)) / n
		t.Logf("live heap per closed connection pair in the closing period: %d bytes", perPair)
		// Whole connections kept 18.8 KB per pair here. What is left of
		// them is about 0.8 KB (closedConn with its IDs and datagram,
		// routes); the rest is the runtime's (goroutine records for
		// the timers that delivered datagrams).
		if perPair > 4000 {
			t.Errorf("closed connections keep %d bytes per pair, want at most 4000", perPair)
		}

		time.Sleep(10 * time.Second) // more than 3 PTO
		synctest.Wait()
		for _, tr := range []*Transport{clientT, serverT} {
			if conns, closed := routeCounts(tr); conns != 0 || closed != 0 {
				t.Errorf("after the closing period, IDs routing to connections %d, to closed connections %d; want none", conns, closed)
			}
			if got := tr.Stats().ConnectionsOpen; got != 0 {
				t.Errorf("ConnectionsOpen = %d after the closing period, want 0", got)
			}
		}
	})
}

// TestClosedConnAnswersAtAGrowingInterval routes an ID to a closed
// connection and sends it datagrams: it answers the 1st, 2nd, 4th and 8th
// with its CONNECTION_CLOSE datagram (RFC 9000, Section 10.2.1), as long as
// it has sent at most 3 times the bytes it received (the same section),
// until its deadline, after which the ID routes nowhere.
func TestClosedConnAnswersAtAGrowingInterval(t *testing.T) {
	for _, tc := range []struct {
		name         string
		closeSize    int
		packetSize   int
		sent         int
		wantAnswered []int
	}{
		{"small close", 25, 39, 10, []int{1, 2, 4, 8}},
		// 1,200 bytes need 400 received: the 4th 100-byte datagram.
		{"padded Initial close", 1200, 100, 20, []int{4, 8, 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				testClosedConnAnswers(t, tc.closeSize, tc.packetSize, tc.sent, tc.wantAnswered)
			})
		})
	}
}

func testClosedConnAnswers(t *testing.T, closeSize, packetSize, sent int, want []int) {
	tc, peer := newMemConnPair()
	tr := &Transport{Conn: tc}
	if err := tr.init(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		tr.Close()
		tc.Close()
		peer.Close()
	}()
	cid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	c := newConn(tr, peer.LocalAddr(), nil)
	tr.conns.Add(1) // as Conn.start does
	if !tr.ep.routes.add(cid, c) {
		t.Fatal("add failed")
	}
	closeDatagram := make([]byte, closeSize)
	closeDatagram[0] = 0x4c
	ap, _ := addrPortOf(peer.LocalAddr())
	tr.addClosed(c, &closedConn{
		datagram: closeDatagram, t: tr, addr: peer.LocalAddr(), ap: ap,
		deadline:   time.Now().Add(time.Second),
		cids:       []wire.ConnectionID{cid},
		transports: []*Transport{tr},
	})
	if r := tr.ep.routes.get(cid); r.c != nil || r.closed == nil {
		t.Fatalf("the ID routes to %+v, want the closed connection", r)
	}
	pkt := append([]byte{0x40}, cid.Bytes()...)
	pkt = append(pkt, make([]byte, packetSize-len(pkt))...)
	var answered []int
	for i := 1; i <= sent; i++ {
		peer.WriteTo(pkt, tc.LocalAddr())
		synctest.Wait()
		peer.SetReadDeadline(time.Now().Add(time.Millisecond))
		buf := make([]byte, 1500)
		if n, _, err := peer.ReadFrom(buf); err == nil {
			if string(buf[:n]) != string(closeDatagram) {
				t.Fatalf("answer %x, want the CONNECTION_CLOSE datagram", buf[:n])
			}
			answered = append(answered, i)
		}
	}
	if !slices.Equal(answered, want) {
		t.Errorf("datagrams answered %v, want %v", answered, want)
	}
	time.Sleep(time.Second)
	synctest.Wait()
	if r := tr.ep.routes.get(cid); r.c != nil || r.closed != nil {
		t.Errorf("after the deadline the ID routes to %+v, want nothing", r)
	}
	if got := tr.Stats().ConnectionsOpen; got != 0 {
		t.Errorf("ConnectionsOpen = %d after the deadline, want 0", got)
	}
}

// TestClosedConnHeapOrder checks the deadline heap of closed connections.
func TestClosedConnHeapOrder(t *testing.T) {
	base := time.Unix(1000, 0)
	var h []*closedConn
	for _, d := range []int{5, 3, 9, 1, 7, 2, 8, 6, 4, 0} {
		h = append(h, &closedConn{deadline: base.Add(time.Duration(d) * time.Second)})
		closedUp(h, len(h)-1)
	}
	for want := 0; want < 10; want++ {
		got := closedPop(&h)
		if d := got.deadline.Sub(base); d != time.Duration(want)*time.Second {
			t.Fatalf("pop %d: deadline +%v, want +%ds", want, d, want)
		}
	}
	if len(h) != 0 {
		t.Fatalf("%d left", len(h))
	}
}

// TestClosedConnRepeatsLostClose loses a client's CONNECTION_CLOSE: the
// server, still open, sends on, and what is left of the client answers
// with the same datagram, so that the server learns the application's
// error code and reason.
func TestClosedConnRepeatsLostClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		cc := p.clientT.Conn.(*memConn)
		time.Sleep(time.Second) // handshake confirmed
		synctest.Wait()
		cc.blackhole.Store(true)
		p.client.CloseWithError(0x42, "bye")
		synctest.Wait()
		cc.blackhole.Store(false)
		if conns, closed := routeCounts(p.clientT); conns != 0 || closed == 0 {
			t.Fatalf("client IDs routing to connections %d, to closed connections %d; want 0 and some", conns, closed)
		}
		if err := p.server.Context().Err(); err != nil {
			t.Fatalf("the server learned of the close already (%v): the test lost nothing", err)
		}
		s, err := p.server.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("are you there?"))
		time.Sleep(4 * memOneWayLatency)
		synctest.Wait()
		var ae *ApplicationError
		if err := context.Cause(p.server.Context()); !errors.As(err, &ae) || ae.Code != 0x42 || ae.Reason != "bye" || !ae.Remote {
			t.Fatalf("server closed with %v, want the client's application error 0x42 \"bye\"", err)
		}
	})
}

// TestClosedConnsEndWithTransport closes connections, then their
// Transport during the closing period: when Close returns, none is
// counted and each Tracer's Done was called once.
func TestClosedConnsEndWithTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 5
		var done atomic.Int32
		conf := &Config{Tracer: func(context.Context, bool, ConnectionID) *Tracer {
			return &Tracer{Done: func() { done.Add(1) }}
		}}
		m := newConnPair(t, connPairOpts{Mem: true, NoDial: true})
		clientT := m.clientT
		for range n {
			c, _ := m.dial(t, conf)
			c.CloseWithError(0, "")
		}
		synctest.Wait()
		if _, closed := routeCounts(clientT); closed == 0 {
			t.Fatal("no closed connection routed: the test closes nothing in the closing period")
		}
		if got := done.Load(); got != 0 {
			t.Fatalf("Done called %d times in the closing period, want 0", got)
		}
		clientT.Close()
		if got := clientT.Stats().ConnectionsOpen; got != 0 {
			t.Errorf("ConnectionsOpen = %d after Close, want 0", got)
		}
		if got := done.Load(); got != n {
			t.Errorf("Done called %d times after Close, want %d", got, n)
		}
		m.closeAfter(0, 10*time.Second)
	})
}

// dropWrites is a client socket whose writes vanish while drop is set.
// It hides the *net.UDPConn, so the Transport uses plain WriteTo and
// ReadFrom, to the addresses it is given.
type dropWrites struct {
	net.PacketConn
	drop atomic.Bool
}

func (d *dropWrites) WriteTo(b []byte, addr net.Addr) (int, error) {
	if d.drop.Load() {
		return len(b), nil
	}
	return d.PacketConn.WriteTo(b, addr)
}

// TestClosedConnRepeatsLostCloseUDP is TestClosedConnRepeatsLostClose over
// loopback UDP sockets, where the repeat must reach the peer's address.
func TestClosedConnRepeatsLostCloseUDP(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dc := &dropWrites{PacketConn: udp}
	tr := &Transport{Conn: dc}
	defer func() {
		tr.Close()
		udp.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := tr.Dial(ctx, l.Addr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-c.HandshakeComplete()
	time.Sleep(50 * time.Millisecond) // HANDSHAKE_DONE and its acknowledgement
	dc.drop.Store(true)
	c.CloseWithError(0x42, "bye")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, closed := routeCounts(tr); closed > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the closed client connection was not handed to a closedConn")
		}
		time.Sleep(time.Millisecond)
	}
	dc.drop.Store(false)
	if err := s.Context().Err(); err != nil {
		t.Fatalf("the server learned of the close already (%v): the test lost nothing", err)
	}
	us, err := s.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	us.Write([]byte("are you there?"))
	select {
	case <-s.Context().Done():
	case <-ctx.Done():
		t.Fatal("the server never learned of the close")
	}
	var ae *ApplicationError
	if err := context.Cause(s.Context()); !errors.As(err, &ae) || ae.Code != 0x42 || ae.Reason != "bye" || !ae.Remote {
		t.Fatalf("server closed with %v, want the client's application error 0x42 \"bye\"", err)
	}
}
