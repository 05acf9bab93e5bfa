//go:build linux

package quic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicstack/quic/ackhandler"
)

func listenUDP(t *testing.T, addr string) *net.UDPConn {
	t.Helper()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	u, err := net.ListenUDP("udp", ua)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}

func optimizedConn(t *testing.T, u *net.UDPConn, o socketOptions) *linuxConn {
	t.Helper()
	if o.bufferSize == 0 {
		o.bufferSize = socketBufferSize
	}
	sc, err := newOptimizedConn(u, o)
	if err != nil {
		t.Fatal(err)
	}
	return sc.(*linuxConn)
}

// readAll reads from c until want datagrams arrived (splitting GRO runs)
// and returns them with the messages they came in.
func readDatagrams(t *testing.T, u *net.UDPConn, c *linuxConn, want int) (dgrams [][]byte, msgs []rxMessage) {
	t.Helper()
	u.SetReadDeadline(time.Now().Add(5 * time.Second))
	ms := make([]rxMessage, c.readBatchLen())
	for len(dgrams) < want {
		for i := range ms {
			b := make([]byte, c.rxBufferSize())
			ms[i].buf = &b
		}
		n, err := c.readBatch(ms)
		if err != nil {
			t.Fatalf("read after %d of %d datagrams: %v", len(dgrams), want, err)
		}
		for _, m := range ms[:n] {
			msgs = append(msgs, m)
			d := (*m.buf)[:m.n]
			seg := m.segSize
			if seg == 0 {
				seg = len(d)
			}
			for len(d) > 0 {
				k := min(seg, len(d))
				dgrams = append(dgrams, d[:k])
				d = d[k:]
			}
		}
	}
	return dgrams, msgs
}

// fillBatch makes a batch of n datagrams of size bytes (the last one
// short if short is set), each starting with its index.
func fillBatch(n, size int, short bool, ecn ackhandler.ECNMark) *txBatch {
	b := getTxBatch(true, 0)
	for i := 0; i < n; i++ {
		sz := size
		if short && i == n-1 {
			sz = size / 2
		}
		d := b.next()[:sz]
		for j := range d {
			d[j] = byte(i)
		}
		b.commit(d, ecn, false)
	}
	return b
}

func TestSocketFeaturesOnLoopback(t *testing.T) {
	tr := &Transport{Conn: listenUDP(t, "127.0.0.1:0")}
	defer tr.Close()
	si := tr.SocketInfo()
	if !si.BatchIO || !si.GSO || !si.GRO || !si.ECN || !si.PacketInfo || !si.DontFragment {
		t.Fatalf("Linux loopback socket without a feature: %+v", si)
	}
	if si.ReceiveBuffer < 1<<20 || si.SendBuffer < 1<<20 {
		t.Fatalf("socket buffers %d / %d; want at least 1 MiB (asked for %d)", si.ReceiveBuffer, si.SendBuffer, socketBufferSize)
	}
	off := &Transport{Conn: listenUDP(t, "127.0.0.1:0"), DisableGSO: true, DisableGRO: true, DisableECN: true, DisableBatchIO: true}
	defer off.Close()
	if si := off.SocketInfo(); si.BatchIO || si.GSO || si.GRO || si.ECN {
		t.Fatalf("features on although disabled: %+v", si)
	}
}

// A GSO send of equal-size datagrams with a short last one arrives as
// the same datagrams, coalesced by GRO into one read, with their ECN mark.
func TestSocketGSOAndGRO(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "::1"} {
		t.Run(addr, func(t *testing.T) { testGSOAndGRO(t, addr) })
	}
}

func testGSOAndGRO(t *testing.T, addr string) {
	ur, us := listenUDP(t, net.JoinHostPort(addr, "0")), listenUDP(t, net.JoinHostPort(addr, "0"))
	r, s := optimizedConn(t, ur, socketOptions{}), optimizedConn(t, us, socketOptions{})
	b := fillBatch(20, 1200, true, ackhandler.ECT0)
	defer putTxBatch(b)
	if err := s.writeBatch(b, ur.LocalAddr(), netip.AddrPort{}, netip.Addr{}); err != nil {
		t.Fatal(err)
	}
	if s.scratch(b).nmsg != 1 {
		t.Fatalf("20 datagrams went in %d messages; want 1 GSO send", s.scratch(b).nmsg)
	}
	dgrams, msgs := readDatagrams(t, ur, r, 20)
	for i, d := range dgrams {
		want := 1200
		if i == 19 {
			want = 600
		}
		if len(d) != want || d[0] != byte(i) || d[len(d)-1] != byte(i) {
			t.Fatalf("datagram %d: %d bytes starting with %d; want %d bytes of %d", i, len(d), d[0], want, i)
		}
	}
	if len(msgs) >= 20 || msgs[0].segSize != 1200 {
		t.Fatalf("GRO did not coalesce: %d reads, first segment size %d", len(msgs), msgs[0].segSize)
	}
	for _, m := range msgs {
		if m.ecn != ackhandler.ECT0 {
			t.Fatalf("received ECN %v; want ECT(0)", m.ecn)
		}
		if m.dst != netip.MustParseAddr(addr) || m.addr != us.LocalAddr().(*net.UDPAddr).AddrPort() {
			t.Fatalf("received from %v to %v", m.addr, m.dst)
		}
	}
}

// scratch exposes a batch's write state to tests.
func (c *linuxConn) scratch(b *txBatch) *txScratch { return &b.scratch }

// Without GSO, GRO and batching the same datagrams arrive one by one.
func TestSocketFeaturesOff(t *testing.T) {
	ur, us := listenUDP(t, "127.0.0.1:0"), listenUDP(t, "127.0.0.1:0")
	off := socketOptions{disableGSO: true, disableGRO: true, disableECN: true, disableBatch: true}
	r, s := optimizedConn(t, ur, off), optimizedConn(t, us, off)
	b := fillBatch(5, 1000, false, ackhandler.ECT0)
	defer putTxBatch(b)
	if err := s.writeBatch(b, ur.LocalAddr(), netip.AddrPort{}, netip.Addr{}); err != nil {
		t.Fatal(err)
	}
	dgrams, msgs := readDatagrams(t, ur, r, 5)
	if len(msgs) != 5 {
		t.Fatalf("%d reads for 5 datagrams without GRO and batching", len(msgs))
	}
	for i, d := range dgrams {
		if len(d) != 1000 || d[0] != byte(i) {
			t.Fatalf("datagram %d: %d bytes starting with %d", i, len(d), d[0])
		}
		if msgs[i].ecn != ackhandler.NotECT {
			t.Fatalf("datagram %d marked %v with ECN disabled", i, msgs[i].ecn)
		}
	}
}

// A kernel that refuses a GSO send (here: UDP checksums turned off with
// SO_NO_CHECK, with which Linux answers EINVAL) turns GSO off for the
// socket; the datagrams still go, one per message.
func TestSocketGSOFallback(t *testing.T) {
	ur, us := listenUDP(t, "127.0.0.1:0"), listenUDP(t, "127.0.0.1:0")
	r, s := optimizedConn(t, ur, socketOptions{}), optimizedConn(t, us, socketOptions{})
	rc, _ := us.SyscallConn()
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1) })
	b := fillBatch(8, 1100, false, ackhandler.NotECT)
	defer putTxBatch(b)
	if err := s.writeBatch(b, ur.LocalAddr(), netip.AddrPort{}, netip.Addr{}); err != nil {
		t.Fatal(err)
	}
	if s.info().GSO {
		t.Fatal("GSO still on after the kernel refused it")
	}
	dgrams, _ := readDatagrams(t, ur, r, 8)
	for i, d := range dgrams {
		if len(d) != 1100 || d[0] != byte(i) {
			t.Fatalf("datagram %d: %d bytes starting with %d", i, len(d), d[0])
		}
	}
}

// addrRecorder is a client socket that records where datagrams come from.
type addrRecorder struct {
	net.PacketConn
	mu    sync.Mutex
	froms map[string]int
}

func (a *addrRecorder) ReadFrom(b []byte) (int, net.Addr, error) {
	n, addr, err := a.PacketConn.ReadFrom(b)
	if err == nil {
		a.mu.Lock()
		a.froms[addr.String()]++
		a.mu.Unlock()
	}
	return n, addr, err
}

// A server on 0.0.0.0 reached at 127.0.0.2 (Linux loopback carries all of
// 127/8) answers from 127.0.0.2, not from the address the kernel would
// pick for a client on 127.0.0.1 (127.0.0.1); and a peer that does not
// report ECN counts makes the server stop marking.
func TestSocketWildcardSourceAddressAndECN(t *testing.T) {
	// [::] is a dual-stack socket: IPv4 through IPv4-mapped addresses.
	for _, laddr := range []string{"0.0.0.0:0", "[::]:0"} {
		t.Run(laddr, func(t *testing.T) { testWildcardSource(t, laddr) })
	}
}

func testWildcardSource(t *testing.T, laddr string) {
	testWildcardSourceAt(t, listenUDP(t, laddr), listenUDP(t, "127.0.0.1:0"), netip.MustParseAddr("127.0.0.2"))
}

// A server on [::] in a network namespace whose loopback has fd00::1 and
// fd00::2, reached at fd00::2 from fd00::1, answers from fd00::2 (the
// kernel's own choice would be fd00::1, the best match for the client).
func TestSocketWildcardSourceAddressIPv6(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	ns := fmt.Sprintf("qsock%d", os.Getpid())
	for _, args := range [][]string{
		{"netns", "add", ns}, {"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", "fd00::1/128", "dev", "lo", "nodad"},
		{"-n", ns, "addr", "add", "fd00::2/128", "dev", "lo", "nodad"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			exec.Command("ip", "netns", "del", ns).Run()
			t.Skipf("cannot set up a network namespace: ip %v: %v: %s", args, err, out)
		}
	}
	defer exec.Command("ip", "netns", "del", ns).Run()
	var su, cu *net.UDPConn
	errc := make(chan error, 1)
	go func() {
		// The thread stays in the namespace and exits with the goroutine.
		runtime.LockOSThread()
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		if err == nil {
			su, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv6unspecified})
		}
		if err == nil {
			cu, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("fd00::1")})
		}
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	defer cu.Close()
	testWildcardSourceAt(t, su, cu, netip.MustParseAddr("fd00::2"))
}

// testWildcardSourceAt runs an echo between a server on the wildcard socket
// su and a client on cu that dials the server at the address at, and
// checks every datagram the client receives comes from there.
func testWildcardSourceAt(t *testing.T, su, cu *net.UDPConn, at netip.Addr) {
	ctls, stls := testTLS(t)
	str := &Transport{Conn: su}
	defer str.Close()
	l, err := str.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	port := su.LocalAddr().(*net.UDPAddr).Port
	rec := &addrRecorder{PacketConn: cu, froms: map[string]int{}}
	ctr := &Transport{Conn: rec}
	defer ctr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const size = 1 << 20
	srvDone := make(chan *Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			srvDone <- nil
			return
		}
		s, err := c.AcceptStream(ctx)
		if err == nil {
			io.Copy(s, s)
			s.CloseWrite()
		}
		srvDone <- c
	}()
	c, err := ctr.Dial(ctx, net.UDPAddrFromAddrPort(netip.AddrPortFrom(at, uint16(port))), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.OpenStream()
	data := bytes.Repeat([]byte("ecn!"), size/4)
	go func() { s.Write(data); s.CloseWrite() }()
	got, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("echo: %d bytes, %v", len(got), err)
	}
	sc := <-srvDone
	if sc == nil {
		t.Fatal("server failed")
	}
	c.CloseWithError(0, "")
	<-c.done
	<-sc.done
	// A copy: datagrams may still arrive (the client's Transport reads on
	// until it closes), and the map is the read loop's.
	rec.mu.Lock()
	froms := maps.Clone(rec.froms)
	rec.mu.Unlock()
	want := netip.AddrPortFrom(at, uint16(port)).String()
	if len(froms) != 1 || froms[want] == 0 {
		t.Fatalf("client received from %v; want only %s", froms, want)
	}
	// The client's socket is not a *net.UDPConn: it neither marks nor
	// reads marks, so its ACK frames carry no ECN counts. The server's
	// marked packets are acknowledged without them, and "ECN validation
	// fails if the corresponding ECN counts are not present in the ACK
	// frame" (RFC 9000, Section 13.4.2.1): the server stops marking
	// instead of breaking the connection.
	if st := sc.state.sent.ECNState(); st != ackhandler.ECNFailed {
		t.Fatalf("server ECN state %v with a client that reports no ECN counts; want failed", st)
	}
}

// Two Transports on Linux sockets mark their packets ECT(0), read the
// marks, report them in ACK frames and so validate ECN (RFC 9000,
// Section 13.4.2).
func TestSocketECNValidation(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "::1"} {
		t.Run(addr, func(t *testing.T) { testECNValidation(t, addr) })
	}
}

func testECNValidation(t *testing.T, addr string) {
	ctls, stls := testTLS(t)
	su := listenUDP(t, net.JoinHostPort(addr, "0"))
	str := &Transport{Conn: su}
	defer str.Close()
	l, err := str.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctr := &Transport{Conn: listenUDP(t, net.JoinHostPort(addr, "0"))}
	defer ctr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := make(chan *Conn, 1)
	go func() {
		c, _ := l.Accept(ctx)
		if c != nil {
			if s, err := c.AcceptStream(ctx); err == nil {
				io.Copy(s, s)
				s.CloseWrite()
			}
		}
		srv <- c
	}()
	c, err := ctr.Dial(ctx, su.LocalAddr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.OpenStream()
	data := make([]byte, 256<<10)
	go func() { s.Write(data); s.CloseWrite() }()
	if got, err := io.ReadAll(s); err != nil || len(got) != len(data) {
		t.Fatalf("echo: %d bytes, %v", len(got), err)
	}
	sc := <-srv
	if sc == nil {
		t.Fatal("server failed")
	}
	c.CloseWithError(0, "")
	<-c.done
	<-sc.done
	for _, x := range []*Conn{c, sc} {
		if st := x.state.sent.ECNState(); st != ackhandler.ECNCapable {
			t.Errorf("ECN state %v after a transfer over loopback; want capable", st)
		}
	}
}

// A send that fails for another reason than GSO, with an error that a
// GSO failure could also give (EINVAL: here, destination port 0), leaves
// GSO on once the datagrams sent one by one fail the same way.
func TestSocketGSOKeptOnOtherErrors(t *testing.T) {
	s := optimizedConn(t, listenUDP(t, "127.0.0.1:0"), socketOptions{})
	b := fillBatch(4, 1000, false, ackhandler.NotECT)
	defer putTxBatch(b)
	dst := netip.MustParseAddrPort("127.0.0.1:0")
	err := s.writeBatch(b, net.UDPAddrFromAddrPort(dst), dst, netip.Addr{})
	if err != unix.EINVAL {
		t.Fatalf("send to port 0: %v; want EINVAL", err)
	}
	if !s.info().GSO {
		t.Fatal("GSO turned off by an error that was not GSO's")
	}
}

// With every socket feature turned off, two Transports still move data
// (one datagram per system call), and ECN validation never starts.
func TestSocketTransferFeaturesOff(t *testing.T) {
	ctls, stls := testTLS(t)
	off := func(u *net.UDPConn) *Transport {
		return &Transport{Conn: u, DisableGSO: true, DisableGRO: true, DisableECN: true, DisableBatchIO: true}
	}
	su := listenUDP(t, "127.0.0.1:0")
	str, ctr := off(su), off(listenUDP(t, "127.0.0.1:0"))
	defer str.Close()
	defer ctr.Close()
	l, err := str.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := make(chan *Conn, 1)
	go func() {
		c, _ := l.Accept(ctx)
		if c != nil {
			if s, err := c.AcceptStream(ctx); err == nil {
				io.Copy(s, s)
				s.CloseWrite()
			}
		}
		srv <- c
	}()
	c, err := ctr.Dial(ctx, su.LocalAddr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.OpenStream()
	data := bytes.Repeat([]byte("plain sockets "), 100000)
	go func() { s.Write(data); s.CloseWrite() }()
	if got, err := io.ReadAll(s); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("echo: %d bytes, %v", len(got), err)
	}
	sc := <-srv
	if sc == nil {
		t.Fatal("server failed")
	}
	c.CloseWithError(0, "")
	<-c.done
	<-sc.done
	for _, x := range []*Conn{c, sc} {
		if st := x.state.sent.ECNState(); st != ackhandler.ECNFailed {
			t.Errorf("ECN state %v with ECN disabled; want failed (never marking)", st)
		}
	}
}

// Loopback carries the largest UDP payload over IPv4, 65507 bytes, in one
// datagram that the receiving socket reads whole (its GRO-sized buffers),
// and the kernel refuses a larger one at once (EMSGSIZE), which the
// batch reports as too big: what path MTU discovery relies on to find
// 64 KB packets on loopback (TestSimPathMTULoopbackJumbo; the real-time
// TestUDPLoopbackJumboPackets runs with make test-jumbo).
func TestSocketLoopbackJumboDatagram(t *testing.T) {
	ur, us := listenUDP(t, "127.0.0.1:0"), listenUDP(t, "127.0.0.1:0")
	r, s := optimizedConn(t, ur, socketOptions{}), optimizedConn(t, us, socketOptions{})
	if r.rxBufferSize() < 65507 {
		t.Skipf("receive buffers of %d bytes (no GRO)", r.rxBufferSize())
	}
	for _, size := range []int{65508, 65507} {
		b := getTxBatch(true, size)
		d := b.next()[:size]
		for i := range d {
			d[i] = byte(size)
		}
		b.commit(d, ackhandler.NotECT, true)
		err := s.writeBatch(b, ur.LocalAddr(), netip.AddrPort{}, netip.Addr{})
		tooBig := b.tooBig
		putTxBatch(b)
		if size > 65507 {
			if tooBig != size || !errors.Is(err, unix.EMSGSIZE) {
				t.Fatalf("%d bytes: reported too big %d, error %v; want EMSGSIZE", size, tooBig, err)
			}
			continue
		}
		if err != nil || tooBig != 0 {
			t.Fatalf("%d bytes refused: %v", size, err)
		}
	}
	dgrams, _ := readDatagrams(t, ur, r, 1)
	if want := byte(65507 & 0xff); len(dgrams) != 1 || len(dgrams[0]) != 65507 || dgrams[0][0] != want || dgrams[0][65506] != want {
		t.Fatalf("received %d datagrams, the first of %d bytes", len(dgrams), len(dgrams[0]))
	}
}

// The interface of a link-local source address becomes its zone, as a
// decimal index, without allocating; other addresses get none, and a
// zone by name becomes the index of that interface.
func TestSockaddrZone(t *testing.T) {
	sa := unix.RawSockaddrInet6{Family: unix.AF_INET6, Port: 0xbb01, Addr: netip.MustParseAddr("fe80::1").As16(), Scope_id: 7}
	var ap netip.AddrPort
	if a := testing.AllocsPerRun(100, func() { ap = sockaddrToAddrPort(&sa) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
	if ap != netip.MustParseAddrPort("[fe80::1%7]:443") {
		t.Errorf("got %v", ap)
	}
	sa.Addr = netip.MustParseAddr("2001:db8::1").As16()
	if ap = sockaddrToAddrPort(&sa); ap.Addr().Zone() != "" {
		t.Errorf("global address with zone: %v", ap)
	}
	lo, err := net.InterfaceByIndex(1)
	if err != nil {
		t.Skip(err)
	}
	named := netip.MustParseAddrPort("[fe80::1%" + lo.Name + "]:443")
	if got := numericZone(named); got != netip.MustParseAddrPort("[fe80::1%1]:443") {
		t.Errorf("numericZone(%v) = %v", named, got)
	}
	var s txScratch
	(&linuxConn{v6: true}).fillSockaddr(&s, netip.MustParseAddrPort("[fe80::1%1]:443"))
	if s.name.Scope_id != 1 {
		t.Errorf("scope ID %d, want 1", s.name.Scope_id)
	}
}
