package netem

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"
)

// udpServer collects what reaches it and echoes each datagram back.
type udpServer struct {
	conn *net.UDPConn
	got  chan received
}

type received struct {
	data []byte
	from netip.AddrPort
}

func newUDPServer(t *testing.T, echo bool) *udpServer {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &udpServer{conn: c, got: make(chan received, 1000)}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2000)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			s.got <- received{append([]byte(nil), buf[:n]...), from}
			if echo {
				c.WriteToUDPAddrPort(buf[:n], from)
			}
		}
	}()
	return s
}

func (s *udpServer) next(t *testing.T) received {
	t.Helper()
	select {
	case r := <-s.got:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("nothing reached the server")
		return received{}
	}
}

func newProxy(t *testing.T, cfg Config) *Proxy {
	t.Helper()
	cfg.Logf = t.Logf
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dialProxy(t *testing.T, p *Proxy) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// payload i is a short-header-looking datagram numbered i.
func payload(i int) []byte { return []byte{0x40, byte(i), 1, 2, 3, 4, 5, 6, 7, 8} }

// Datagrams 2 and 3 towards the server are dropped; the rest arrive in
// order, and the log says so.
func TestProxyDropList(t *testing.T) {
	srv := newUDPServer(t, false)
	p := newProxy(t, Config{Server: srv.conn.LocalAddr().(*net.UDPAddr),
		Scenario: Scenario{DropList: [2][]int{ToServer: {2, 3}}}})
	c := dialProxy(t, p)
	for i := 1; i <= 5; i++ {
		c.Write(payload(i))
	}
	for _, want := range []int{1, 4, 5} {
		if r := srv.next(t); r.data[1] != byte(want) {
			t.Fatalf("got datagram %d, want %d", r.data[1], want)
		}
	}
	log := p.Log()
	if len(log) != 5 {
		t.Fatalf("log has %d records", len(log))
	}
	for i, r := range log {
		if r.Index != i+1 || r.Dir != ToServer || r.Dropped != (i == 1 || i == 2) || !bytes.Equal(r.Data, payload(i+1)) {
			t.Errorf("record %d: %v", i, r)
		}
	}
	if s := p.Stats(); s.Dropped[ToServer] != 2 || s.Received[ToServer] != 5 {
		t.Errorf("stats %+v", s)
	}
}

// Corrupted datagrams are delivered with exactly one byte changed among
// the first 51; duplicated ones arrive twice; replies come back.
func TestProxyCorruptDuplicateEcho(t *testing.T) {
	srv := newUDPServer(t, true)
	p := newProxy(t, Config{Server: srv.conn.LocalAddr().(*net.UDPAddr),
		Scenario: Scenario{
			Corrupt:   [2]Rate{ToServer: {Percent: 100}},
			Duplicate: [2]Rate{ToClient: {Percent: 100}},
		}})
	c := dialProxy(t, p)
	orig := bytes.Repeat([]byte{0x40, 0xaa}, 100)
	c.Write(orig)
	r := srv.next(t)
	diff := -1
	for i := range orig {
		if r.data[i] != orig[i] {
			if diff >= 0 {
				t.Fatalf("bytes %d and %d changed", diff, i)
			}
			diff = i
		}
	}
	if diff < 0 || diff > 50 {
		t.Fatalf("changed byte at %d", diff)
	}
	// The echo is duplicated towards the client.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 500)
	for i := range 2 {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("copy %d: %v", i+1, err)
		}
		if !bytes.Equal(buf[:n], r.data) {
			t.Fatalf("copy %d differs", i+1)
		}
	}
}

// A full queue drops at the tail: a burst far larger than the queue on
// a slow link loses its end.
func TestProxyQueueTailDrop(t *testing.T) {
	srv := newUDPServer(t, false)
	p := newProxy(t, Config{Server: srv.conn.LocalAddr().(*net.UDPAddr),
		Link: [2]LinkConfig{ToServer: {Bandwidth: 1_000_000, Queue: 5}}})
	c := dialProxy(t, p)
	for i := 1; i <= 50; i++ {
		c.Write(append(payload(i), make([]byte, 1000)...))
	}
	// The first datagrams fill the serialiser and the queue (about 8 ms
	// each at 1 Mbit/s); most of the rest are tail-dropped.
	first := srv.next(t)
	if first.data[1] != 1 {
		t.Fatalf("first datagram delivered is #%d", first.data[1])
	}
	for srv.conn != nil {
		if s := p.Stats(); s.Delivered[ToServer]+s.Dropped[ToServer] == 50 {
			if s.Dropped[ToServer] < 30 {
				t.Fatalf("only %d of a 50-datagram burst dropped by a 5-datagram queue", s.Dropped[ToServer])
			}
			for _, r := range p.Log() {
				if r.Dropped && r.Verdict != "drop:queue" {
					t.Fatalf("unexpected verdict %v", r)
				}
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A rebind gives the flow a new source port (and address); the server's
// replies reach the client through the new socket and no longer through
// the old one.
func TestProxyRebind(t *testing.T) {
	for _, addr := range []bool{false, true} {
		srv := newUDPServer(t, true)
		p := newProxy(t, Config{Server: srv.conn.LocalAddr().(*net.UDPAddr)})
		c := dialProxy(t, p)
		c.Write(payload(1))
		before := srv.next(t).from
		buf := make([]byte, 100)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		p.rebind(addr)
		c.Write(payload(2))
		after := srv.next(t).from
		if after == before {
			t.Fatalf("rebind(addr=%v): server still sees %v", addr, before)
		}
		if addr && after.Addr() == before.Addr() {
			t.Fatalf("rebind with a new address kept %v", before.Addr())
		}
		if !addr && after.Addr() != before.Addr() {
			t.Fatalf("port rebind changed the address to %v", after.Addr())
		}
		if _, err := c.Read(buf); err != nil || buf[1] != 2 {
			t.Fatalf("reply after rebind: %v", err)
		}
		// The old binding is gone: the server's datagram to it is lost.
		srv.conn.WriteToUDPAddrPort(payload(3), before)
		srv.conn.WriteToUDPAddrPort(payload(4), after)
		if _, err := c.Read(buf); err != nil || buf[1] != 4 {
			t.Fatalf("after rebind got #%d (%v), want #4 only", buf[1], err)
		}
		if got := p.Stats().Rebinds; got != 1 {
			t.Fatalf("Rebinds = %d", got)
		}
		if log := p.Log(); log[0].Upstream == log[len(log)-1].Upstream {
			t.Fatal("the log does not show the new upstream address")
		}
	}
}

// The rebind timer fires at First and then every Every.
func TestProxyRebindTimer(t *testing.T) {
	srv := newUDPServer(t, true)
	p := newProxy(t, Config{Server: srv.conn.LocalAddr().(*net.UDPAddr),
		Scenario: Scenario{Rebind: Rebind{First: 10 * time.Millisecond, Every: 10 * time.Millisecond}}})
	c := dialProxy(t, p)
	c.Write(payload(1))
	srv.next(t)
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().Rebinds < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d rebinds", p.Stats().Rebinds)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
