package fleettest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// The addresses of the fleet: the client's namespace has two addresses
// (it moves from one to the other mid-download), the balancer's routes
// between the client and three server namespaces, and clients send to a
// VIP that no interface holds.
const (
	vip       = "10.98.100.1:4433"
	clientIP  = "10.98.0.2"
	clientIP2 = "10.98.0.3"
)

func serverIP(i int) string { return fmt.Sprintf("10.98.%d.2", i) }

// fleet is the namespaces, servers and balancer of one test.
type fleet struct {
	bin     string
	files   fleetFiles
	client  string // namespace
	lb      string
	servers []*server
	ns      []string
	alive   []bool
}

// newFleet creates the namespaces and links, starts the servers and loads
// the balancer's ruleset.
func newFleet(t *testing.T, n int) *fleet {
	t.Helper()
	f := &fleet{bin: buildFleet(t), files: writeFleetFiles(t), client: names("qfc", 0), lb: names("qfl", 0)}
	all := []string{f.client, f.lb}
	for i := 1; i <= n; i++ {
		f.ns = append(f.ns, names("qfs", i))
	}
	all = append(all, f.ns...)
	t.Cleanup(func() {
		for _, ns := range all {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	for _, ns := range all {
		run(t, "ip", "netns", "add", ns)
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	link := func(ns string, i int, nsAddr, lbAddr string, extra ...string) {
		a, b := names("qfa", i), names("qfb", i)
		run(t, "ip", "link", "add", a, "type", "veth", "peer", "name", b)
		run(t, "ip", "link", "set", a, "netns", ns)
		run(t, "ip", "link", "set", b, "netns", f.lb)
		run(t, "ip", "-n", ns, "addr", "add", nsAddr+"/24", "dev", a)
		for _, e := range extra {
			run(t, "ip", "-n", ns, "addr", "add", e+"/24", "dev", a)
		}
		run(t, "ip", "-n", f.lb, "addr", "add", lbAddr+"/24", "dev", b)
		run(t, "ip", "-n", ns, "link", "set", a, "up")
		run(t, "ip", "-n", f.lb, "link", "set", b, "up")
		run(t, "ip", "-n", ns, "route", "add", "default", "via", lbAddr)
		run(t, "ip", "netns", "exec", f.lb, "sysctl", "-qw", "net.ipv4.conf."+b+".rp_filter=0")
	}
	run(t, "ip", "netns", "exec", f.lb, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	run(t, "ip", "netns", "exec", f.lb, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0")
	link(f.client, 0, clientIP, "10.98.0.1", clientIP2)
	for i := 1; i <= n; i++ {
		link(f.ns[i-1], i, serverIP(i), fmt.Sprintf("10.98.%d.1", i))
	}
	for i := 1; i <= n; i++ {
		f.servers = append(f.servers, startServer(t, f.ns[i-1], f.bin, "-listen", "0.0.0.0:4433",
			"-cert", f.files.cert, "-key", f.files.key, "-secret", f.files.secret, "-server-id", fmt.Sprintf("%02x", i)))
		f.alive = append(f.alive, true)
	}
	f.loadRuleset(t)
	return f
}

// loadRuleset loads the balancer's ruleset for the live servers.
func (f *fleet) loadRuleset(t *testing.T) {
	t.Helper()
	args := []string{f.bin, "nft", "-vip", vip}
	for i, ok := range f.alive {
		if ok {
			args = append(args, "-backend", fmt.Sprintf("%02x=%s", i+1, serverIP(i+1)))
		}
	}
	rs := output(t, args...)
	runInput(t, rs, "ip", "netns", "exec", f.lb, "nft", "-f", "-")
}

// dial connects from a new socket at ip in the client namespace.
func (f *fleet) dial(t *testing.T, ctx context.Context, ip string, ctls *tls.Config, early bool) (*quic.Conn, *quic.Transport) {
	t.Helper()
	tr := &quic.Transport{Conn: listenUDPIn(t, f.client, ip+":0")}
	t.Cleanup(func() { tr.Close() })
	raddr, _ := net.ResolveUDPAddr("udp", vip)
	dial := tr.Dial
	if early {
		dial = tr.DialEarly
	}
	c, err := dial(ctx, raddr, ctls, &quic.Config{MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// ask sends one request on a new stream of c and returns the answer.
func ask(ctx context.Context, c *quic.Conn, req string) (string, error) {
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return "", err
	}
	s.Write([]byte(req + "\n"))
	s.CloseWrite()
	b, err := io.ReadAll(s)
	return strings.TrimSpace(string(b)), err
}

// serverOf returns the server ID in an "id" answer.
func serverOf(answer string) string { return strings.Fields(answer + " ?")[0] }

// TestFleet runs three servers behind an nftables QUIC-LB balancer:
// a client that moves to another address mid-download keeps its server
// and gets every byte; a returning client resumes with 0-RTT on another
// server; when a server is killed and taken out of the ruleset, its
// clients get a stateless reset from a live one and reconnect at once.
func TestFleet(t *testing.T) {
	requireFleet(t)
	f := newFleet(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctls := f.files.ctls.Clone()
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(4)

	// 1. A download during which the client changes its address.
	c, _ := f.dial(t, ctx, clientIP, ctls, false)
	id, err := ask(ctx, c, "id")
	if err != nil {
		t.Fatal(err)
	}
	first := serverOf(id)
	t.Logf("fleet: client %s connected through the balancer to server %s (%s)", clientIP, first, id)
	const size = 32 << 20
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(s, "bytes %d\n", size)
	s.CloseWrite()
	r := bufio.NewReaderSize(s, 64<<10)
	var got int64
	moved := false
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		for i := range n {
			if buf[i] != byte('a'+(got+int64(i))%26) {
				t.Fatalf("byte %d corrupt", got+int64(i))
			}
		}
		got += int64(n)
		if !moved && got > size/3 {
			moved = true
			nt := &quic.Transport{Conn: listenUDPIn(t, f.client, clientIP2+":0")}
			defer nt.Close()
			if err := c.Migrate(ctx, nt); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			t.Logf("fleet: after %d MB the client moves to %s", got>>20, clientIP2)
		}
		if err != nil {
			if err != io.EOF {
				t.Fatalf("download: %v after %d bytes", err, got)
			}
			break
		}
	}
	if got != size {
		t.Fatalf("downloaded %d bytes, want %d", got, size)
	}
	id2, err := ask(ctx, c, "id")
	if err != nil || serverOf(id2) != first || !strings.HasPrefix(c.LocalAddr().String(), clientIP2) {
		t.Fatalf("after the move: server %q (%v) from %v, want %s from %s", id2, err, c.LocalAddr(), first, clientIP2)
	}
	t.Logf("fleet: download of %d MB intact, still on server %s, client now at %s; migrations seen by the client: %d",
		size>>20, first, c.LocalAddr(), c.Stats().Migrations)
	c.CloseWithError(0, "")

	// 2. The client returns and resumes with 0-RTT on another server.
	var resumedOn string
	for i := 0; i < 30 && resumedOn == ""; i++ {
		c2, _ := f.dial(t, ctx, clientIP, ctls, true)
		ans, err := ask(ctx, c2, "id")
		if err != nil {
			t.Fatal(err)
		}
		<-c2.HandshakeComplete()
		if serverOf(ans) != first {
			if !c2.ConnectionState().Used0RTT || !c2.ConnectionState().TLS.DidResume {
				t.Fatalf("on server %s: resumed %v, 0-RTT %v", serverOf(ans), c2.ConnectionState().TLS.DidResume, c2.ConnectionState().Used0RTT)
			}
			resumedOn = serverOf(ans)
		}
		c2.CloseWithError(0, "")
	}
	if resumedOn == "" {
		t.Fatal("every new connection went to the first server")
	}
	t.Logf("fleet: a returning client resumed with 0-RTT on server %s (its ticket came from another server)", resumedOn)

	// 3. A server dies; the balancer is told; its clients are reset by a
	// live server and reconnect at once.
	c3, _ := f.dial(t, ctx, clientIP, ctls, false)
	ans, err := ask(ctx, c3, "id")
	if err != nil {
		t.Fatal(err)
	}
	victim := serverOf(ans)
	var vi int
	fmt.Sscanf(victim, "%x", &vi)
	f.servers[vi-1].cmd.Process.Signal(syscall.SIGKILL)
	f.servers[vi-1].cmd.Wait()
	f.alive[vi-1] = false
	f.loadRuleset(t)
	t.Logf("fleet: server %s killed and taken out of the ruleset", victim)
	start := time.Now()
	_, err = ask(ctx, c3, "id")
	var reset *quic.StatelessResetError
	if !errors.As(err, &reset) {
		t.Fatalf("the dead server's client: %v, want a stateless reset", err)
	}
	t.Logf("fleet: its client got a stateless reset from a live server %v after its next request", time.Since(start).Round(time.Microsecond))
	c4, _ := f.dial(t, ctx, clientIP, ctls, false)
	ans, err = ask(ctx, c4, "id")
	if err != nil || serverOf(ans) == victim {
		t.Fatalf("reconnect: %q, %v", ans, err)
	}
	t.Logf("fleet: it reconnected to server %s %v after the reset", serverOf(ans), time.Since(start).Round(time.Millisecond))
	c4.CloseWithError(0, "")
}
