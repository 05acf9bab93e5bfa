package fleettest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// relay forwards one client's datagrams to a server from an outbound
// socket it can replace: a NAT rebinding the client's address. Its
// outbound sockets are in the server's network namespace.
type relay struct {
	ns     string
	front  *net.UDPConn
	server *net.UDPAddr
	mu     sync.Mutex
	out    *net.UDPConn
	client net.Addr
}

func newRelay(t *testing.T, ns string, server *net.UDPAddr) *relay {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ns: ns, front: front, server: server}
	r.rebind(t)
	go func() {
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
	t.Cleanup(func() {
		front.Close()
		r.mu.Lock()
		r.out.Close()
		r.mu.Unlock()
	})
	return r
}

func (r *relay) rebind(t *testing.T) {
	out, err := listenUDPNS(r.ns, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	old := r.out
	r.out = out
	r.mu.Unlock()
	if old != nil {
		time.AfterFunc(time.Second, func() { old.Close() }) // in flight
	}
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := out.ReadFrom(buf)
			if err != nil {
				return
			}
			r.mu.Lock()
			client := r.client
			r.mu.Unlock()
			if client != nil {
				r.front.WriteTo(buf[:n], client)
			}
		}
	}()
}

// startGroupServer starts example/fleet with a reuseport group of two
// sockets per generation on a loopback port of a network namespace of
// its own, and returns it with the namespace, its address and pid.
func startGroupServer(t *testing.T) (*server, string, *net.UDPAddr, int, fleetFiles) {
	t.Helper()
	bin, files := buildFleet(t), writeFleetFiles(t)
	ns := names("qfg", 0)
	exec.Command("ip", "netns", "del", ns).Run() // a leftover of a killed run
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() }) // after the servers'
	run(t, "ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
	s := startServer(t, ns, bin, "-listen", "127.0.0.1:0", "-sockets", "2", "-drain", "20s",
		"-cert", files.cert, "-key", files.key, "-secret", files.secret, "-server-id", "01")
	var addr string
	var pid int
	s.mu.Lock()
	fmt.Sscanf(s.log[len(s.log)-1], "fleet: listening %s server-id 01 pid %d", &addr, &pid)
	s.mu.Unlock()
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil || pid == 0 {
		t.Fatalf("server address %q, pid %d: %v", addr, pid, err)
	}
	return s, ns, ua, pid, files
}

// successorPid waits for the line of a process started by s's graceful
// restart or share, and returns its pid.
func successorPid(t *testing.T, s *server, not int) int {
	t.Helper()
	for {
		l := s.waitLine(t, "fleet: listening")
		var pid int
		fmt.Sscanf(l[strings.Index(l, "pid "):], "pid %d", &pid)
		if pid != not {
			return pid
		}
	}
}

// clientConn dials addr from a new loopback socket.
func clientConn(ctx context.Context, ns string, addr net.Addr, ctls *tls.Config) (*quic.Conn, func(), error) {
	udp, err := listenUDPNS(ns, "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	tr := &quic.Transport{Conn: udp}
	c, err := tr.Dial(ctx, addr, ctls, &quic.Config{MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		tr.Close()
		udp.Close()
		return nil, nil, err
	}
	return c, func() { c.CloseWithError(0, ""); tr.Close(); udp.Close() }, nil
}

// download asks for n bytes and checks them.
func download(ctx context.Context, c *quic.Conn, n int, mid func()) error {
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(s, "bytes %d\n", n)
	s.CloseWrite()
	buf := make([]byte, n)
	if _, err := io.ReadFull(s, buf[:n/2]); err != nil {
		return err
	}
	if mid != nil {
		mid()
	}
	if _, err := io.ReadFull(s, buf[n/2:]); err != nil {
		return err
	}
	for i, b := range buf {
		if b != byte('a'+i%26) {
			return fmt.Errorf("byte %d corrupt", i)
		}
	}
	return nil
}

// TestTwoProcessesOnePort: a server process starts a second one that
// shares its port (SIGUSR1): 100 connections spread over both, and
// clients whose NAT rebinds mid-download keep their process.
func TestTwoProcessesOnePort(t *testing.T) {
	requireFleet(t)
	s, ns, addr, pid1, files := startGroupServer(t)
	syscall.Kill(pid1, syscall.SIGUSR1)
	pid2 := successorPid(t, s, pid1)
	t.Logf("fleet: processes %d and %d share %v in network namespace %s", pid1, pid2, addr, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	perPid := map[string]int{}
	var failed atomic.Int64
	sem := make(chan struct{}, 20)
	var wg sync.WaitGroup
	for i := range 100 {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r := newRelay(t, ns, addr) // from the test's namespace into the server's
			c, done, err := clientConn(ctx, "", r.front.LocalAddr(), files.ctls)
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				failed.Add(1)
				return
			}
			defer done()
			before, err := ask(ctx, c, "id")
			if err == nil {
				err = download(ctx, c, 1<<20, func() { r.rebind(t) })
			}
			var after string
			if err == nil {
				after, err = ask(ctx, c, "id")
			}
			if err != nil || before != after {
				t.Errorf("client %d: %v; process before the rebinding %q, after %q", i, err, before, after)
				failed.Add(1)
				return
			}
			mu.Lock()
			perPid[strings.Fields(before)[1]]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("fleet: connections per process %v; every client rebound mid-download; failures %d", perPid, failed.Load())
	if len(perPid) != 2 || perPid[fmt.Sprint(pid1)] < 20 || perPid[fmt.Sprint(pid2)] < 20 {
		t.Errorf("connections spread %v over processes %d and %d", perPid, pid1, pid2)
	}
	syscall.Kill(pid2, syscall.SIGTERM)
	syscall.Kill(pid1, syscall.SIGTERM)
}

// TestRollingRestart restarts a server gracefully (SIGUSR2) every fifth
// of FLEET_RESTART_DURATION (default 60 s) while clients keep making
// connections and requests: no request may fail.
func TestRollingRestart(t *testing.T) {
	requireFleet(t)
	duration := 60 * time.Second
	if d, err := time.ParseDuration(os.Getenv("FLEET_RESTART_DURATION")); err == nil {
		duration = d
	}
	s, ns, addr, pid, files := startGroupServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), duration+2*time.Minute)
	defer cancel()
	stop := time.Now().Add(duration)
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				c, done, err := clientConn(ctx, ns, addr, files.ctls)
				if err != nil {
					t.Errorf("worker %d: dial: %v", w, err)
					failed.Add(1)
					continue
				}
				for range 3 {
					if _, err := ask(ctx, c, "id"); err != nil {
						t.Errorf("worker %d: %v", w, err)
						failed.Add(1)
						continue
					}
					if err := download(ctx, c, 100_000, nil); err != nil {
						t.Errorf("worker %d: %v", w, err)
						failed.Add(1)
						continue
					}
					ok.Add(2)
				}
				done()
			}
		})
	}
	restarts := 0
	for time.Now().Add(duration / 5).Before(stop.Add(time.Second)) {
		time.Sleep(duration / 5)
		syscall.Kill(pid, syscall.SIGUSR2)
		next := successorPid(t, s, pid)
		restarts++
		t.Logf("fleet: restart %d: process %d took over from %d after %d requests", restarts, next, pid, ok.Load())
		pid = next
	}
	wg.Wait()
	t.Logf("fleet: %d requests in %v across %d graceful restarts, %d failed", ok.Load(), duration, restarts, failed.Load())
	if failed.Load() != 0 || restarts < 4 {
		t.Errorf("%d requests failed, %d restarts", failed.Load(), restarts)
	}
	syscall.Kill(pid, syscall.SIGTERM)
}
