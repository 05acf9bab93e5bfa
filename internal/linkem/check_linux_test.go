package linkem

import (
	"context"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The precise checks of the emulator (`make linkem-check`, LINKEM_CHECK=1):
// delay within 1 ms and rate within 2% at 100 Mbit/s, measured by ping,
// kernel TCP (Cubic and BBR) and UDP. They take about a minute and want
// the machine as quiet as it can be, so `make test` leaves them out and
// runs the coarse versions in pair_linux_test.go instead.

const checkRate = 100e6

func checkEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv("LINKEM_CHECK") == "" {
		t.Skip("set LINKEM_CHECK=1 (make linkem-check) for the precise measurement")
	}
}

// lateLine formats a direction's forwarding lateness.
func lateLine(s Stats) string {
	l := s.Late
	return "forwarder lateness over " + strconv.FormatUint(l.Count, 10) + " packets: mean " + l.Mean.String() +
		", p50 " + l.P50.String() + ", p99 " + l.P99.String() + ", p99.9 " + l.P999.String() + ", max " + l.Max.String()
}

// Ping's round trip over a 100 Mbit/s link is twice the one-way delay
// within 1 ms, for 99% of pings, and the median within 0.5 ms.
func TestCheckPingDelay(t *testing.T) {
	checkEnabled(t)
	for _, d := range []time.Duration{0, 5 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond} {
		prm := Params{Delay: d, Rate: checkRate}
		p := newTestPair(t, Config{AB: prm, BA: prm})
		rtts, err := p.Ping(context.Background(), A, 500, 5*time.Millisecond, 56)
		if err != nil {
			t.Fatal(err)
		}
		if len(rtts) != 500 {
			t.Fatalf("%d of 500 pings answered", len(rtts))
		}
		errs := make([]time.Duration, len(rtts))
		for i, r := range rtts {
			errs[i] = r - 2*d
		}
		p50, p99, worst := percentile(errs, 0.5), percentile(errs, 0.99), percentile(errs, 1)
		t.Logf("ping, %v each way at 100 Mbit/s: RTT - 2×delay: min %v, p50 %v, p99 %v, max %v; A→B %s",
			d, errs[0], p50, p99, worst, lateLine(pairStats(t, p, AB)))
		if errs[0] < 0 || p50 > 500*time.Microsecond || p99 > time.Millisecond {
			t.Errorf("%v each way: RTT error p50 %v, p99 %v; want within [0, 0.5 ms] and [0, 1 ms]", d, p50, p99)
		}
		checkSystemPing(t, p, d)
		p.Close()
	}
}

// checkSystemPing runs ping(8) too, where it is installed, and logs its
// summary.
func checkSystemPing(t *testing.T, p *Pair, d time.Duration) {
	if _, err := exec.LookPath("ping"); err != nil {
		return
	}
	out, err := p.Command(context.Background(), A, "ping", "-q", "-c", "200", "-i", "0.005", p.Addr(B).String()).CombinedOutput()
	if err != nil {
		t.Logf("ping(8): %v: %s", err, out)
		return
	}
	m := regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) ms`).FindSubmatch(out)
	if m == nil {
		t.Logf("ping(8) said: %s", out)
		return
	}
	t.Logf("ping(8), %v each way: rtt min/avg/max/mdev = %s/%s/%s/%s ms", d, m[1], m[2], m[3], m[4])
	avg, _ := strconv.ParseFloat(string(m[2]), 64)
	if e := avg - 2*float64(d)/1e6; e < 0 || e > 1 {
		t.Errorf("ping(8) average RTT %.3f ms; want 2×%v + [0, 1 ms]", avg, d)
	}
}

// UDP datagrams at 100 Mbit/s worth of 1,500-byte packets (8,300 per
// second) each way at once, over a link with a 20 ms delay and no rate
// limit, arrive 20 ms after they were sent, within 1 ms for 99% of them
// and within 0.2 ms for half: the one-way delay from before sendto(2) to
// the kernel's receive timestamp.
func TestCheckUDPDelay(t *testing.T) {
	checkEnabled(t)
	const d, n = 20 * time.Millisecond, 40000
	p := newTestPair(t, Config{AB: Params{Delay: d}, BA: Params{Delay: d}})
	a, b, toB := udpSockets(t, p)
	// Each socket sends and receives: A sends to B and B to A.
	gotB, gotA := udpReceiver(t, b), udpReceiver(t, a)
	toA := a.LocalAddr()
	start := time.Now()
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		sendPaced(t, b, toA, n, 1472, checkRate/8/1500)
	}()
	sendPaced(t, a, toB, n, 1472, checkRate/8/1500)
	<-sent
	el := time.Since(start)
	time.Sleep(100 * time.Millisecond)
	a.Close()
	b.Close()
	for _, dir := range []struct {
		d    Dir
		recv []udpReceived
	}{{AB, <-gotB}, {BA, <-gotA}} {
		recv := dir.recv
		if len(recv) != n {
			s := pairStats(t, p, dir.d)
			out, _ := p.Command(context.Background(), A, "ip", "-s", "link", "show", "dev", tunName).CombinedOutput()
			t.Fatalf("%v: %d of %d datagrams received over a link without loss; the link saw %d and delivered %d; the TUN device in A: %s",
				dir.d, len(recv), n, s.Arrived, s.Delivered, out)
		}
		errs := make([]time.Duration, len(recv))
		for i, r := range recv {
			errs[i] = r.oneWay - d
		}
		p50, p99, p999, worst := percentile(errs, 0.5), percentile(errs, 0.99), percentile(errs, 0.999), percentile(errs, 1)
		t.Logf("UDP %v, %d datagrams of 1,500 bytes at %.0f/s each way, %v one way: delay - %v: min %v, p50 %v, p99 %v, p99.9 %v, max %v; %s",
			dir.d, n, float64(n)/el.Seconds(), d, d, errs[0], p50, p99, p999, worst, lateLine(pairStats(t, p, dir.d)))
		if errs[0] < 0 || p50 > 200*time.Microsecond || p99 > time.Millisecond {
			t.Errorf("%v: one-way delay error min %v, p50 %v, p99 %v; want within [0, 0.2 ms] and [0, 1 ms]", dir.d, errs[0], p50, p99)
		}
	}
}

// Kernel TCP Cubic fills a 100 Mbit/s link with a 10 ms delay each way and
// the default queue (100 ms): its goodput is the rate times the share of
// payload in a full packet (MSS/MTU), within 2%. BBR's goodput is logged,
// not checked: BBR keeps the queue nearly empty by design, so that its
// own pacing (kernel timers that a loaded machine fires late) and its
// gain cycles, not the link, decide how full the link is.
func TestCheckTCPRate(t *testing.T) {
	checkEnabled(t)
	for _, cc := range []string{"cubic", "bbr"} {
		prm := Params{Delay: 10 * time.Millisecond, Rate: checkRate}
		p := newTestPair(t, Config{AB: prm, BA: Params{Delay: 10 * time.Millisecond}})
		// From 2 s to 9 s: past the start, and before BBR's first
		// ProbeRTT (10 s after its minimum RTT was measured, at the
		// start), which drains the link for 200 ms or more.
		r := tcpTransfer(t, p, cc, 0, 2*time.Second, 7*time.Second)
		if r.mss == 0 {
			t.Fatal("no MSS from TCP_INFO")
		}
		want := checkRate * float64(r.mss) / 1500
		e := r.goodput/want - 1
		s := pairStats(t, p, AB)
		t.Logf("TCP %s, 100 Mbit/s, 10 ms each way: goodput %s over %v; expected %s (MSS %d of 1,500 bytes): error %+.2f%%; %d tail drops; %s",
			cc, mbit(r.goodput), r.window.Round(time.Millisecond), mbit(want), r.mss, 100*e, s.DroppedQueue, lateLine(s))
		if cc == "cubic" && math.Abs(e) > 0.02 {
			t.Errorf("%s: goodput %s, expected %s: off by %+.2f%%, more than 2%%", cc, mbit(r.goodput), mbit(want), 100*e)
		}
		p.Close()
	}
}

// UDP sent faster than the link carries arrives at the rate, within 2%:
// the bytes of the IP packets received per second, measured from the
// kernel's receive timestamps.
func TestCheckUDPRate(t *testing.T) {
	checkEnabled(t)
	const n, size = 80000, 1472 // 1,500-byte IP packets
	// A queue of 160 ms absorbs the pauses of the sender, a thread of
	// this process.
	p := newTestPair(t, Config{AB: Params{Delay: 5 * time.Millisecond, Rate: checkRate, Queue: 2e6}})
	a, b, to := udpSockets(t, p)
	defer a.Close()
	got := udpReceiver(t, b)
	sendPaced(t, a, to, n, size, 1.2*checkRate/8/1500) // 120 Mbit/s
	time.Sleep(200 * time.Millisecond)
	b.Close()
	recv := <-got
	if len(recv) < n/2 {
		t.Fatalf("%d of %d datagrams received", len(recv), n)
	}
	// Leave out the first and last second.
	first, last := recv[0].arrived.Add(time.Second), recv[len(recv)-1].arrived.Add(-time.Second)
	var bytes int
	var from, to2 time.Time
	for _, r := range recv {
		if r.arrived.Before(first) || r.arrived.After(last) {
			continue
		}
		if from.IsZero() {
			from = r.arrived
			continue
		}
		bytes += r.size + 28
		to2 = r.arrived
	}
	rate := float64(bytes) * 8 / to2.Sub(from).Seconds()
	e := rate/checkRate - 1
	s := pairStats(t, p, AB)
	t.Logf("UDP at 120 Mbit/s into a 100 Mbit/s link: %s of IP packets received over %v: error %+.2f%%; %d tail drops; %s",
		mbit(rate), to2.Sub(from).Round(time.Millisecond), 100*e, s.DroppedQueue, lateLine(s))
	if math.Abs(e) > 0.02 {
		t.Errorf("UDP rate %s; want %s within 2%%", mbit(rate), mbit(checkRate))
	}
}
