package quic

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// natRelay forwards datagrams between one client and a server, from an
// outbound socket it can replace mid-connection: what a NAT that rebinds
// does to a client's address (RFC 9000, Section 9.3).
type natRelay struct {
	front  *net.UDPConn // the client talks to this
	server *net.UDPAddr
	mu     sync.Mutex
	out    *net.UDPConn
	client net.Addr
	done   chan struct{}
	wg     sync.WaitGroup
}

func newNATRelay(t *testing.T, server *net.UDPAddr) *natRelay {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &natRelay{front: front, server: server, done: make(chan struct{})}
	r.rebind(t)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFrom(buf)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.client = from
			out := r.out
			r.mu.Unlock()
			out.WriteTo(buf[:n], server)
		}
	}()
	t.Cleanup(r.close)
	return r
}

// rebind moves the relay's server side to a new port.
func (r *natRelay) rebind(t *testing.T) {
	out, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.out = out
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, _, err := out.ReadFrom(buf)
			if err != nil {
				return
			}
			r.mu.Lock()
			client, cur := r.client, r.out
			r.mu.Unlock()
			if client != nil {
				r.front.WriteTo(buf[:n], client)
			}
			if cur != out {
				// The old binding still delivers what was in flight, as
				// a NAT's old mapping does until it expires.
				select {
				case <-r.done:
					return
				default:
				}
			}
		}
	}()
}

func (r *natRelay) close() {
	select {
	case <-r.done:
		return
	default:
	}
	close(r.done)
	r.front.Close()
	r.mu.Lock()
	r.out.Close()
	r.mu.Unlock()
}

// reusePortServer serves echo streams on a Transport of a group and
// counts its connections.
func reusePortServer(ctx context.Context, t *Transport, l *Listener, accepted *atomic.Int64) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		accepted.Add(1)
		go func() {
			for {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				go func() { io.Copy(s, s); s.CloseWrite() }()
			}
		}()
	}
}

// TestReusePortGroupShareAndRebind runs two Transports on one port, each
// reading its own generation of a ReusePortGroup as two processes would
// (they share no state but the fleet's keys). 40 clients connect through
// NAT relays; the connections spread over both Transports; halfway
// through each transfer every relay moves to a new port, and every
// transfer completes intact on the Transport it started on. Then the
// same with the steering program detached, which plain SO_REUSEPORT
// hashing replaces: rebound clients reach the wrong Transport and their
// connections fail, which is what the program prevents.
func TestReusePortGroupShareAndRebind(t *testing.T) {
	for _, steer := range []bool{true, false} {
		t.Run(fmt.Sprintf("steering=%v", steer), func(t *testing.T) {
			testReusePortShare(t, steer)
		})
	}
}

func testReusePortShare(t *testing.T, steer bool) {
	ctls, stls := testTLS(t)
	keys, _ := NewKeySchedule(bytes.Repeat([]byte{1}, 32), 0)
	g1, err := ListenReusePort("udp4", "127.0.0.1:0", ReusePortConfig{Sockets: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	files, err := g1.Files()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := InheritReusePort(files, g1.Generation(), ShareMode, ReusePortConfig{Sockets: 2})
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if !steer {
		rc, _ := g1.socks[0].SyscallConn()
		rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DETACH_REUSEPORT_BPF, 0) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Without steering, lost connections end at the idle timeout.
	idle := 20 * time.Second
	if !steer {
		idle = 3 * time.Second
	}
	var accepted [2]atomic.Int64
	for i, g := range []*ReusePortGroup{g1, g2} {
		tr := g.Transport()
		tr.Keys = keys
		l, err := tr.Listen(stls, &Config{MaxIdleTimeout: idle, HandshakeIdleTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		go reusePortServer(ctx, tr, l, &accepted[i])
	}
	server := g1.LocalAddr().(*net.UDPAddr)

	// Without steering, 16 clients are enough for some to fail (each
	// rebinding lands on the other Transport half the time).
	clients := int64(40)
	if !steer {
		clients = 16
	}
	var wg sync.WaitGroup
	var ok, failed atomic.Int64
	for i := range clients {
		wg.Go(func() {
			relay := newNATRelay(t, server)
			udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Error(err)
				return
			}
			ct := &Transport{Conn: udp}
			defer func() { ct.Close(); udp.Close() }()
			// 40 handshakes at once on a loaded 2-core machine under
			// -race can stay idle past the default 5 s (one timed out
			// at load 20); the test is about rebinding, not that.
			c, err := ct.Dial(ctx, relay.front.LocalAddr(), ctls, &Config{MaxIdleTimeout: idle, HandshakeIdleTimeout: 30 * time.Second})
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			defer c.CloseWithError(0, "")
			s, err := c.OpenStreamSync(ctx)
			if err != nil {
				failed.Add(1)
				return
			}
			msg := bytes.Repeat([]byte{byte(i)}, 64<<10)
			half := len(msg) / 2
			go func() {
				s.Write(msg)
				s.CloseWrite()
			}()
			// The NAT rebinds once the first half came back: after the
			// handshake, as RFC 9000, Section 9 requires of migration.
			got := make([]byte, len(msg))
			n, err := io.ReadFull(s, got[:half])
			if err == nil {
				relay.rebind(t)
				var m int
				m, err = io.ReadFull(s, got[half:])
				n += m
			}
			if err != nil || !bytes.Equal(got[:n], msg) {
				failed.Add(1)
				if steer {
					t.Errorf("client %d: echo of %d bytes, %v", i, n, err)
				}
				return
			}
			ok.Add(1)
		})
	}
	wg.Wait()
	a, b := accepted[0].Load(), accepted[1].Load()
	t.Logf("connections: %d and %d; transfers intact %d, failed %d", a, b, ok.Load(), failed.Load())
	if steer {
		if ok.Load() != clients || a < clients/5 || b < clients/5 {
			t.Errorf("with steering: %d of %d intact, spread %d/%d", ok.Load(), clients, a, b)
		}
	} else if failed.Load() == 0 {
		t.Error("without steering every rebound client kept its connection: the test cannot tell")
	}
}

// TestReusePortKernelSteering sends raw datagrams to a group and reads
// which socket the kernel's run of the steering program gave each:
// Handshake packets go to the socket their ID names, whatever its
// generation; a client's Initial and 0-RTT packets whose random ID has
// our length and a last byte naming a socket of the unread generation
// go to a socket this process reads, not into one nobody reads.
func TestReusePortKernelSteering(t *testing.T) {
	g, err := ListenReusePort("udp4", "127.0.0.1:0", ReusePortConfig{Sockets: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	src, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := g.LocalAddr()
	// arrivedAt sends p and returns the index of the socket it reached.
	arrivedAt := func(p []byte) int {
		t.Helper()
		if _, err := src.WriteTo(p, dst); err != nil {
			t.Fatal(err)
		}
		// Every socket reads until one has p; that one stops the others.
		got := make(chan int, len(g.socks))
		var wg sync.WaitGroup
		for _, c := range g.socks {
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
		}
		for i, c := range g.socks {
			wg.Go(func() {
				buf := make([]byte, 2048)
				for {
					n, _, err := c.ReadFrom(buf)
					if err != nil {
						return
					}
					if bytes.Equal(buf[:n], p) {
						got <- i
						for _, o := range g.socks {
							o.SetReadDeadline(time.Unix(1, 0))
						}
						return
					}
				}
			})
		}
		wg.Wait()
		close(got)
		i, ok := <-got
		if !ok {
			t.Fatalf("%x... reached no socket", p[:12])
		}
		return i
	}
	long := func(typ byte, dcid []byte) []byte {
		p := []byte{0xc0 | typ<<4, 0, 0, 0, 1, byte(len(dcid))}
		p = append(p, dcid...)
		p = append(p, 0)
		return append(p, make([]byte, 1200-len(p))...)
	}
	id := func(last byte) []byte { return append(bytes.Repeat([]byte{0x5a}, g.cidLen-1), last) }
	for w := range len(g.socks) {
		if got := arrivedAt(long(2, id(byte(w)))); got != w {
			t.Errorf("Handshake packet for socket %d reached socket %d", w, got)
		}
		for _, typ := range []byte{0, 1} { // Initial, 0-RTT
			if got := arrivedAt(long(typ, id(byte(w)))); got >= g.n || (w < g.n && got != w) {
				t.Errorf("long header type %d with an ID naming socket %d reached socket %d; this process reads 0-%d", typ, w, got, g.n-1)
			}
		}
	}
}
