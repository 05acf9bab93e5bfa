//go:build linux

package quic

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/twolink"
)

// newTwoLink makes the wifi-and-cellular topology, or skips the test.
func newTwoLink(t *testing.T, noWifi bool) *twolink.Net {
	t.Helper()
	n, err := twolink.New(noWifi)
	if errors.Is(err, twolink.ErrUnsupported) {
		t.Skipf("no network namespaces here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// followPattern writes the deterministic content of the downloads.
func followPattern(w io.Writer, size int, pace bool) error {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 64<<10)
	// About 25 MB/s, so that the download lasts seconds and the network
	// change comes in its middle.
	tick := time.NewTicker(2500 * time.Microsecond)
	defer tick.Stop()
	for sent := 0; sent < size; {
		for i := 0; i+8 <= len(buf); i += 8 {
			v := rng.Uint64()
			for j := 0; j < 8; j++ {
				buf[i+j] = byte(v >> (8 * j))
			}
		}
		n := min(len(buf), size-sent)
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		sent += n
		if pace && sent%(64<<10) == 0 {
			<-tick.C
		}
	}
	return nil
}

// followServer serves the paced download on every stream a client opens
// on a connection accepted in the server namespace.
func followServer(t *testing.T, n *twolink.Net, stls *tls.Config) netip.AddrPort {
	t.Helper()
	pc, err := twolink.ListenUDP(n.ServerNS, netip.AddrPortFrom(twolink.Server, 0))
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Conn: pc}
	t.Cleanup(func() { tr.Close(); pc.Close() })
	l, err := tr.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := c.AcceptStream(context.Background())
					if err != nil {
						return
					}
					go func() {
						io.Copy(io.Discard, s)
						followPattern(s, followSize, true)
						s.CloseWrite()
					}()
				}
			}()
		}
	}()
	return pc.LocalAddr().(*net.UDPAddr).AddrPort()
}

// progress records when a download's reads returned data.
type progress struct {
	mu    sync.Mutex
	times []time.Time
	bytes []int
}

func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	p.times = append(p.times, time.Now())
	p.bytes = append(p.bytes, len(b))
	p.mu.Unlock()
	return len(b), nil
}

// stallAfter returns the longest time without data after at.
func (p *progress) stallAfter(at time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var worst time.Duration
	last := at
	for _, tm := range p.times {
		if tm.Before(at) {
			continue
		}
		worst = max(worst, tm.Sub(last))
		last = tm
	}
	return worst
}

// followDownload downloads the pattern on a new stream of c, calling
// change once a fifth of it arrived, and checks it arrived whole.
func followDownload(t *testing.T, c *Conn, change func()) (changed time.Time, p *progress) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("get"))
	s.CloseWrite()
	h := sha256.New()
	followPattern(h, followSize, false)
	wantSum := h.Sum(nil)
	got := sha256.New()
	p = &progress{}
	buf := make([]byte, 64<<10)
	total := 0
	for {
		n, err := s.Read(buf)
		if n > 0 {
			got.Write(buf[:n])
			p.Write(buf[:n])
			total += n
			if changed.IsZero() && total >= followSize/5 {
				changed = time.Now()
				change()
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", total, err)
		}
	}
	if total != followSize || !bytes.Equal(got.Sum(nil), wantSum) {
		t.Fatalf("downloaded %d bytes, SHA-256 %x; want %d, %x", total, got.Sum(nil), followSize, wantSum)
	}
	return changed, p
}

// followDial dials the server in the topology from a client socket on
// local (the wildcard address for any), with FollowNetwork.
func followDial(t *testing.T, n *twolink.Net, ctls *tls.Config, server, local netip.AddrPort) *Conn {
	t.Helper()
	pc, err := twolink.ListenUDP(n.Client, local)
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Conn: pc}
	t.Cleanup(func() { tr.Close(); pc.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := tr.Dial(ctx, net.UDPAddrFromAddrPort(server), ctls, &Config{FollowNetwork: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseWithError(0, "") })
	return c
}

// A connection with FollowNetwork on the wifi link of a device that also
// has cellular: the wifi address disappears in the middle of a 50 MB
// download; the connection moves to cellular by itself (no application
// call) and the download completes intact. The client socket is bound to
// the wifi address (as phones bind to the network they use: nothing can
// be sent from it once the address is gone), or to the wildcard address
// (as DialAddr's).
func TestNetnsFollowWifiRemoved(t *testing.T) {
	for _, bind := range []netip.Addr{twolink.Wifi, netip.IPv4Unspecified()} {
		t.Run(bind.String(), func(t *testing.T) {
			t.Parallel()
			n := newTwoLink(t, false)
			ctls, stls := testTLS(t)
			server := followServer(t, n, stls)
			c := followDial(t, n, ctls, server, netip.AddrPortFrom(bind, 0))
			changed, p := followDownload(t, c, func() {
				if err := n.RemoveWifi(); err != nil {
					t.Error(err)
				}
			})
			local := unmappedAddrPort(c.LocalAddr()).Addr()
			if local != twolink.Cellular || c.Stats().Migrations < 1 || c.follow.moves.Load() < 1 {
				t.Fatalf("after the download: local address %v, %d migrations, %d moves", local, c.Stats().Migrations, c.follow.moves.Load())
			}
			t.Logf("wifi removed: longest time without data %v (RTT %v), %d move(s)", p.stallAfter(changed).Round(time.Millisecond), c.Stats().SmoothedRTT, c.follow.moves.Load())
		})
	}
}

// The reverse switch: a connection on cellular moves to wifi when wifi
// comes back (its address and its preferred default route).
func TestNetnsFollowWifiReturns(t *testing.T) {
	t.Parallel()
	n := newTwoLink(t, true)
	ctls, stls := testTLS(t)
	server := followServer(t, n, stls)
	c := followDial(t, n, ctls, server, netip.AddrPortFrom(netip.IPv4Unspecified(), 0))
	changed, p := followDownload(t, c, func() {
		if err := n.RestoreWifi(); err != nil {
			t.Error(err)
		}
	})
	local := unmappedAddrPort(c.LocalAddr()).Addr()
	if local != twolink.Wifi || c.follow.moves.Load() < 1 {
		t.Fatalf("after the download: local address %v, %d moves", local, c.follow.moves.Load())
	}
	t.Logf("wifi back: longest time without data %v", p.stallAfter(changed).Round(time.Millisecond))
}

// Without netlink announcements (as on other systems), a failed write
// starts the move: the socket bound to the wifi address cannot send once
// the address is gone.
func TestNetnsFollowWriteFailure(t *testing.T) {
	netWatchDisabled = true
	defer func() { netWatchDisabled = false }()
	n := newTwoLink(t, false)
	ctls, stls := testTLS(t)
	server := followServer(t, n, stls)
	c := followDial(t, n, ctls, server, netip.AddrPortFrom(twolink.Wifi, 0))
	changed, p := followDownload(t, c, func() {
		if err := n.RemoveWifi(); err != nil {
			t.Error(err)
		}
	})
	if local := unmappedAddrPort(c.LocalAddr()).Addr(); local != twolink.Cellular {
		t.Fatalf("after the download: local address %v", local)
	}
	t.Logf("write failures: longest time without data %v", p.stallAfter(changed).Round(time.Millisecond))
}

// A path that stops answering without any change the system announces
// (here the server's firewall starts dropping the client's port, as when
// a NAT forgets the binding): the path probes go unanswered, and after two
// probe timeouts the connection moves to a new socket (a new port) on the
// same address, whose path validates.
func TestNetnsFollowPathSilent(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nftables (nft) is missing: `make nftables` installs it")
	}
	n := newTwoLink(t, false)
	ctls, stls := testTLS(t)
	server := followServer(t, n, stls)
	c := followDial(t, n, ctls, server, netip.AddrPortFrom(twolink.Wifi, 0))
	port := unmappedAddrPort(c.LocalAddr()).Port()
	changed, p := followDownload(t, c, func() {
		cmd := exec.Command("ip", "netns", "exec", n.ServerNS, "nft", "-f", "-")
		cmd.Stdin = strings.NewReader(fmt.Sprintf("table inet nat_gone {\n chain input {\n  type filter hook input priority 0; policy accept;\n  udp sport %d drop\n }\n}\n", port))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("nft: %v: %s", err, out)
		}
	})
	local := unmappedAddrPort(c.LocalAddr())
	if local.Addr() != twolink.Wifi || local.Port() == port || c.follow.moves.Load() < 1 {
		t.Fatalf("after the download: local address %v (was port %d), %d moves", local, port, c.follow.moves.Load())
	}
	t.Logf("binding lost: longest time without data %v", p.stallAfter(changed).Round(time.Millisecond))
}
