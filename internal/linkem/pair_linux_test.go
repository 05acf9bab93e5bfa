package linkem

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests in this file make network namespaces (root only)
// and check what holds however loaded the machine is: the emulator never
// delivers a packet early, never faster than the rate, and loses exactly
// the packets its seeded link says. The precise figures (delay within
// 1 ms, rate within 2% at 100 Mbit/s) are checked by check_linux_test.go,
// behind `make linkem-check`.

// Pings cross the link in both directions: none comes back in less than
// the two delays, and a change of the delay in the middle of a run applies
// to the pings sent after it.
func TestPairPing(t *testing.T) {
	const d = 10 * time.Millisecond
	p := newTestPair(t, Config{AB: Params{Delay: d, Rate: 100e6}, BA: Params{Delay: d, Rate: 100e6}})
	ctx := context.Background()
	rtts, err := p.Ping(ctx, A, 20, 10*time.Millisecond, 56)
	if err != nil {
		t.Fatal(err)
	}
	if len(rtts) != 20 {
		t.Fatalf("%d of 20 pings answered over a link without loss", len(rtts))
	}
	for _, r := range rtts {
		if r < 2*d {
			t.Fatalf("ping RTT %v over a link with %v each way", r, d)
		}
	}
	t.Logf("ping A→B, %v each way: median RTT %v", d, percentile(rtts, 0.5))
	if err := p.SetParams(BA, Params{Delay: 40 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if got := p.Params(BA); got.Delay != 40*time.Millisecond || got.Rate != 0 {
		t.Fatalf("Params after SetParams: %+v", got)
	}
	rtts, err = p.Ping(ctx, B, 10, 10*time.Millisecond, 56)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rtts {
		if r < 50*time.Millisecond {
			t.Fatalf("ping RTT %v after the delay B→A went to 40 ms", r)
		}
	}
	for _, dir := range []Dir{AB, BA} {
		s := pairStats(t, p, dir)
		if s.Delivered < 30 || s.WriteErrors != 0 || s.ReadErrors != 0 {
			t.Errorf("%v: %+v", dir, s)
		}
		if !s.RealTime {
			t.Logf("%v: the forwarder runs without real-time scheduling", dir)
		}
	}
}

// The forwarders run in the program's own process with InProcess.
func TestPairInProcess(t *testing.T) {
	const d = 5 * time.Millisecond
	p := newTestPair(t, Config{InProcess: true, AB: Params{Delay: d}, BA: Params{Delay: d}})
	rtts, err := p.Ping(context.Background(), B, 10, 5*time.Millisecond, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(rtts) != 10 {
		t.Fatalf("%d of 10 pings answered", len(rtts))
	}
	for _, r := range rtts {
		if r < 2*d {
			t.Fatalf("ping RTT %v over a link with %v each way", r, d)
		}
	}
	if err := p.SetParams(AB, Params{Loss: 1}); err != nil {
		t.Fatal(err)
	}
	if rtts, _ := p.Ping(context.Background(), B, 3, time.Millisecond, 100); len(rtts) != 0 {
		t.Fatalf("%d pings answered over a link that loses everything", len(rtts))
	}
	if s := pairStats(t, p, AB); s.DroppedLoss != 3 || s.Delivered != 10 {
		t.Fatalf("A→B: %d delivered, %d lost; want 10 and 3", s.Delivered, s.DroppedLoss)
	}
}

// UDP datagrams meet exactly the emulation a Link with the same seed
// predicts: the same datagrams are lost.
func TestPairUDPLossIsTheLinks(t *testing.T) {
	const n, seed = 2000, 77
	prm := Params{Delay: 2 * time.Millisecond, Loss: 0.2, GE: Gilbert(0.05, 3)}
	p := newTestPair(t, Config{AB: prm, Seed: seed})
	a, b, to := udpSockets(t, p)
	defer a.Close()
	got := udpReceiver(t, b)
	sendPaced(t, a, to, n, 200, 10000)
	// Wait until the link holds nothing more.
	for deadline := time.Now().Add(10 * time.Second); pairStats(t, p, AB).Held > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	b.Close()
	recv := <-got

	want := NewLink(prm, LinkOptions{Seed: seed})
	var wantIDs []uint64
	for _, d := range linkRun(t, want, n, 200, 100*time.Microsecond) {
		wantIDs = append(wantIDs, d.id)
	}
	var gotIDs []uint64
	for _, r := range recv {
		gotIDs = append(gotIDs, r.seq)
	}
	s := pairStats(t, p, AB)
	if s.Arrived != n {
		t.Fatalf("the link saw %d packets from A; want the %d datagrams sent", s.Arrived, n)
	}
	if !equalIDs(gotIDs, wantIDs) {
		t.Fatalf("received %d datagrams, the link predicts %d; first differences: %v", len(gotIDs), len(wantIDs), firstDiff(gotIDs, wantIDs))
	}
	t.Logf("%d of %d datagrams delivered, as predicted (%d random losses, %d in bursts)", len(gotIDs), n, s.DroppedLoss, s.DroppedBurst)
}

func firstDiff(a, b []uint64) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("at %d: got %d, want %d", i, a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

// Kernel TCP crosses the link: a transfer completes with Cubic and with
// BBR, never faster than the rate allows.
func TestPairTCP(t *testing.T) {
	const rate = 20e6
	p := newTestPair(t, Config{AB: Params{Delay: 5 * time.Millisecond, Rate: rate}, BA: Params{Delay: 5 * time.Millisecond}})
	for _, cc := range []string{"cubic", "bbr"} {
		before := pairStats(t, p, AB)
		start := time.Now()
		r := tcpTransfer(t, p, cc, 3<<20, 0, 0)
		el := time.Since(start)
		if r.received != 3<<20 {
			t.Fatalf("%s: received %d bytes; want %d", cc, r.received, 3<<20)
		}
		after := pairStats(t, p, AB)
		wire := float64(after.DeliveredBytes-before.DeliveredBytes) * 8 / el.Seconds()
		if wire > rate*1.02 {
			t.Fatalf("%s: %s on the wire over a %s link", cc, mbit(wire), mbit(rate))
		}
		t.Logf("%s: 3 MiB in %v, %s on the wire of a %s link", cc, el.Round(time.Millisecond), mbit(wire), mbit(rate))
	}
}

// Do runs a function inside a namespace: the thread's network namespace
// is the pair's, and sockets opened there stay there.
func TestDo(t *testing.T) {
	p := newTestPair(t, Config{})
	var inside, host syscall.Stat_t
	if err := syscall.Stat("/proc/thread-self/ns/net", &host); err != nil {
		t.Skip(err)
	}
	if err := p.Do(A, func() error { return syscall.Stat("/proc/thread-self/ns/net", &inside) }); err != nil {
		t.Fatal(err)
	}
	var want syscall.Stat_t
	if err := syscall.Stat(netnsDir+p.Namespace(A), &want); err != nil {
		t.Fatal(err)
	}
	if inside.Ino != want.Ino || inside.Ino == host.Ino {
		t.Fatalf("inside Do the namespace is %d; want %d (the host's is %d)", inside.Ino, want.Ino, host.Ino)
	}
	// A's address is only in A.
	if _, err := net.Listen("tcp4", net.JoinHostPort(p.Addr(A).String(), "0")); err == nil {
		t.Fatal("A's address is usable outside A")
	}
	l, err := p.Listen(A, "tcp4", net.JoinHostPort(p.Addr(A).String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	for _, bad := range []string{"", "..", "a/b", "linkem-no-such-namespace"} {
		if err := Do(bad, func() error { return nil }); err == nil {
			t.Errorf("Do(%q) succeeded", bad)
		}
	}
	out, err := p.Command(context.Background(), B, "ip", "-4", "-o", "addr", "show", "dev", tunName).CombinedOutput()
	if err != nil || !strings.Contains(string(out), p.Addr(B).String()) {
		t.Fatalf("ip addr in B: %v: %s", err, out)
	}
}

// Close stops the forwarders and removes the namespaces; a second Close
// does nothing.
func TestPairClose(t *testing.T) {
	if err := checkNetnsSupport(); err != nil {
		t.Skipf("no network namespaces here: %v", err)
	}
	p, err := New(Config{AB: Params{Delay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	// A packet in the delay line when the pair closes.
	c, err := p.ListenPacket(A, "udp4", net.JoinHostPort(p.Addr(A).String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteTo([]byte("late"), &net.UDPAddr{IP: p.Addr(B).AsSlice(), Port: 9})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, s := range []Side{A, B} {
		if strings.Contains(string(out), p.Namespace(s)) {
			t.Errorf("namespace %s still listed after Close", p.Namespace(s))
		}
	}
}

// A packet longer than the pair's MTU (someone raised the device's MTU
// inside a namespace) is dropped and reported; the link goes on.
func TestPairOversizePacket(t *testing.T) {
	p := newTestPair(t, Config{})
	if out, err := exec.Command("ip", "-n", p.Namespace(A), "link", "set", "dev", tunName, "mtu", "9000").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	a, b, to := udpSockets(t, p)
	defer a.Close()
	got := udpReceiver(t, b)
	big := make([]byte, 8000)
	udpStamp(big, 0)
	if _, err := a.WriteTo(big, to); err != nil {
		t.Fatal(err)
	}
	small := make([]byte, 100)
	udpStamp(small, 1)
	if _, err := a.WriteTo(small, to); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pairStats(t, p, AB).Delivered == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	b.Close()
	recv := <-got
	if len(recv) != 1 || recv[0].seq != 1 {
		t.Fatalf("received %+v; want only the small datagram", recv)
	}
	if s := pairStats(t, p, AB); s.ReadErrors != 1 || s.LastError == nil || !strings.Contains(s.LastError.Error(), "MTU") {
		t.Fatalf("A→B: %d read errors, last %v; want the oversized packet reported", s.ReadErrors, s.LastError)
	}
}

// New removes the namespaces that a pair of a dead process left behind.
func TestSweepStale(t *testing.T) {
	if err := checkNetnsSupport(); err != nil {
		t.Skipf("no network namespaces here: %v", err)
	}
	// A process number above the kernel's maximum is never alive.
	stale := "linkem99999999-1-a"
	if err := addNetns(stale); err != nil {
		t.Fatal(err)
	}
	defer delNetns(stale)
	newTestPair(t, Config{})
	if _, err := os.Stat(netnsDir + stale); !os.IsNotExist(err) {
		t.Fatalf("stale namespace %s still there: %v", stale, err)
	}
}

// New refuses a bad configuration before it makes anything.
func TestNewConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Name: "no/slash"},
		{Name: strings.Repeat("x", 41)},
		{MTU: 100},
		{AB: Params{Loss: 2}},
		{BA: Params{Delay: -1}},
	} {
		c := cfg
		if err := c.setDefaults(); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// Parameters change and counters are read from several goroutines while
// packets flow, in both forwarding modes (run with -race). The queue (the
// default, 1.25 MB at 100 Mbit/s) holds every byte sent, however bursty
// the sender, so nothing is lost.
func TestPairConcurrentControl(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		p := newTestPair(t, Config{InProcess: inProcess, AB: Params{Delay: time.Millisecond}})
		a, b, to := udpSockets(t, p)
		got := udpCountUntil(t, b, 2000, time.Minute)
		stop := make(chan struct{})
		done := make(chan struct{})
		for g := range 3 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					d := Dir(i % 2)
					if err := p.SetParams(d, Params{Delay: time.Duration(g*i%5) * time.Millisecond, Rate: 100e6}); err != nil {
						t.Error(err)
						return
					}
					if _, err := p.Stats(d); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		sendPaced(t, a, to, 2000, 500, 20000)
		close(stop)
		for range 3 {
			<-done
		}
		// Every datagram arrives, however long the loaded machine takes
		// to forward and read them (the count ends at 2000 or after a
		// minute).
		if recv := <-got; recv != 2000 {
			t.Errorf("in process %v: %d of 2000 datagrams received over a link without loss", inProcess, recv)
		}
		a.Close()
		b.Close()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stats(AB); err == nil {
			t.Error("Stats after Close succeeded")
		}
		if err := p.SetParams(AB, Params{}); err == nil {
			t.Error("SetParams after Close succeeded")
		}
	}
}
