//go:build linux && (amd64 || arm64)

package quic

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicstack/quic/ackhandler"
)

// pathNetnsPair creates two network namespaces joined by a veth pair with the
// given MTU, 10.99.0.1 in the first and 10.99.0.2 in the second, and
// removes them when the test ends. It skips the test where namespaces
// cannot be made (not root, no ip command).
func pathNetnsPair(t *testing.T, mtu int) (a, b string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("network namespace tests need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network namespace tests need the ip command")
	}
	id := os.Getpid() % 100000
	a, b = fmt.Sprintf("quicpath%da", id), fmt.Sprintf("quicpath%db", id)
	va, vb := fmt.Sprintf("qpa%d", id), fmt.Sprintf("qpb%d", id)
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
		return nil
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", a).Run()
		exec.Command("ip", "netns", "del", b).Run()
	})
	for _, cmd := range [][]string{
		{"netns", "add", a}, {"netns", "add", b},
		{"link", "add", va, "type", "veth", "peer", "name", vb},
		{"link", "set", va, "netns", a}, {"link", "set", vb, "netns", b},
		{"-n", a, "addr", "add", "10.99.0.1/24", "dev", va},
		{"-n", b, "addr", "add", "10.99.0.2/24", "dev", vb},
		{"-n", a, "link", "set", va, "mtu", fmt.Sprint(mtu), "up"},
		{"-n", b, "link", "set", vb, "mtu", fmt.Sprint(mtu), "up"},
	} {
		if err := run(cmd...); err != nil {
			if cmd[0] == "netns" && cmd[2] == a {
				t.Skipf("cannot create network namespaces: %v", err)
			}
			t.Fatal(err)
		}
	}
	return a, b
}

// pathListenUDPIn opens a UDP socket at addr inside the network namespace ns,
// with the don't-fragment bit set (IP_PMTUDISC_DO), so that datagrams
// larger than the path MTU are refused instead of fragmented. The socket
// is made on a thread moved into the namespace; the thread ends with its
// goroutine.
func pathListenUDPIn(t *testing.T, ns, addr string) *net.UDPConn {
	t.Helper()
	type result struct {
		c   *net.UDPConn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		if _, _, e := syscall.RawSyscall(pathSysSetns, f.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
			ch <- result{nil, e}
			return
		}
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(pathAddrPort(addr)))
		if err == nil {
			var serr error
			rc, _ := c.SyscallConn()
			rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MTU_DISCOVER, syscall.IP_PMTUDISC_DO)
			})
			if serr != nil {
				c.Close()
				c, err = nil, serr
			}
		}
		ch <- result{c, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.c.Close() })
	return r.c
}

// netnsEchoPair connects a client in one network namespace to an echo
// server in another, over a veth pair with the given MTU, and returns
// the two Transports, the client's connection and the channel the
// server's connection comes on.
func netnsEchoPair(t *testing.T, mtu int) (ts, tc *Transport, c *Conn, conns chan *Conn) {
	t.Helper()
	nsA, nsB := pathNetnsPair(t, mtu)
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	ts = &Transport{Conn: pathListenUDPIn(t, nsA, "10.99.0.1:0")}
	t.Cleanup(func() { ts.Close() })
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	conns = make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)
	tc = &Transport{Conn: pathListenUDPIn(t, nsB, "10.99.0.2:0")}
	t.Cleanup(func() { tc.Close() })
	c, err = tc.Dial(ctx, ts.Conn.LocalAddr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts, tc, c, conns
}

// Path MTU discovery over real sockets finds the MTU of a veth link of
// 1,400 bytes: 1,372 bytes of UDP payload over IPv4. The sockets refuse
// larger datagrams (don't fragment), which the connection sees as lost
// probes.
func TestNetnsPathMTU(t *testing.T) {
	_, _, c, conns := netnsEchoPair(t, 1400)
	defer c.CloseWithError(0, "")
	srv := <-conns
	const want = 1400 - 20 - 8
	pathEcho(t, c, bytes.Repeat([]byte("mtu "), 100000))
	pathPollUntil(t, "PMTU discovery", func() bool {
		return c.Stats().MaxDatagramSize == want && srv.Stats().MaxDatagramSize == want
	})
	pathEcho(t, c, bytes.Repeat([]byte("again "), 100000))
}

func pathAddrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// A GSO run whose first datagram is larger than the path MTU (a PMTU
// probe followed by a shorter datagram) is refused whole by the kernel
// with EMSGSIZE; the socket layer sends the rest again one by one, so
// that only the probe is lost. Before, the datagram after each lost probe
// was lost too, and three such losses looked like a black hole.
func TestNetnsGSORunAfterTooLargeDatagram(t *testing.T) {
	nsA, nsB := pathNetnsPair(t, 1400)
	us, ur := pathListenUDPIn(t, nsA, "10.99.0.1:0"), pathListenUDPIn(t, nsB, "10.99.0.2:0")
	s, r := optimizedConn(t, us, socketOptions{}), optimizedConn(t, ur, socketOptions{})
	if !s.info().GSO {
		t.Skip("no GSO on the veth pair")
	}
	b := getTxBatch(true, 0)
	defer putTxBatch(b)
	for i, size := range []int{1402, 1341, 1341, 1341} {
		d := b.next()[:size]
		for j := range d {
			d[j] = byte(i)
		}
		b.commit(d, ackhandler.NotECT, false)
	}
	if err := s.writeBatch(b, ur.LocalAddr(), netip.AddrPort{}, netip.Addr{}); err != unix.EMSGSIZE {
		t.Fatalf("writeBatch: %v; want EMSGSIZE for the probe", err)
	}
	dgrams, _ := readDatagrams(t, ur, r, 3)
	for i, d := range dgrams {
		if len(d) != 1341 || d[0] != byte(i+1) {
			t.Fatalf("datagram %d: %d bytes starting with %d; want 1341 bytes of %d", i, len(d), d[0], i+1)
		}
	}
	if !s.info().GSO {
		t.Fatal("GSO turned off by a datagram too large for the path")
	}
}
