package linkem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newTestPair makes a pair for a test and closes it when the test ends. It
// skips the test where namespaces cannot be made (not root, no ip
// command, no TUN device).
func newTestPair(t testing.TB, cfg Config) *Pair {
	t.Helper()
	if err := checkNetnsSupport(); err != nil {
		t.Skipf("no network namespaces here: %v", err)
	}
	p, err := New(cfg)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no network namespaces here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// percentile returns the q-quantile of ds, sorted in place.
func percentile(ds []time.Duration, q float64) time.Duration {
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0
	}
	return ds[min(int(q*float64(len(ds))), len(ds)-1)]
}

// tcpResult is what a TCP transfer measured.
type tcpResult struct {
	bytes    int64         // received in the measuring window
	window   time.Duration // the measuring window
	mss      int           // the sender's MSS (TCP_INFO tcpi_snd_mss)
	goodput  float64       // bit/s of payload in the window
	received int64         // bytes received in all
}

// tcpTransfer sends from A to B over TCP with the congestion controller cc
// for warmup+measure, or until total bytes were sent if total > 0, and
// measures the goodput at the receiver after warmup.
func tcpTransfer(t testing.TB, p *Pair, cc string, total int64, warmup, measure time.Duration) tcpResult {
	t.Helper()
	l, err := p.Listen(B, "tcp4", net.JoinHostPort(p.Addr(B).String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type recv struct {
		window   int64
		received int64
		dur      time.Duration
		err      error
	}
	done := make(chan recv, 1)
	start := make(chan time.Time, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			done <- recv{err: err}
			return
		}
		defer c.Close()
		buf := make([]byte, 256<<10)
		t0 := <-start
		var r recv
		var from time.Time
		for {
			n, err := c.Read(buf)
			now := time.Now()
			r.received += int64(n)
			if now.Sub(t0) >= warmup {
				if from.IsZero() {
					from = now
				} else {
					r.window += int64(n)
				}
				r.dur = now.Sub(from)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				r.err = err
				break
			}
		}
		done <- r
	}()
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc) })
		if err != nil {
			return err
		}
		return serr
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := p.Dial(ctx, A, d, "tcp4", l.Addr().String())
	if err != nil {
		t.Fatalf("dialing with %s: %v", cc, err)
	}
	t0 := time.Now()
	start <- t0
	buf := make([]byte, 64<<10)
	var sent int64
	for {
		if total > 0 && sent >= total {
			break
		}
		if total == 0 && time.Since(t0) >= warmup+measure {
			break
		}
		n, err := c.Write(buf[:min(int64(len(buf)), max(total-sent, int64(len(buf))))])
		sent += int64(n)
		if err != nil {
			t.Fatalf("sending: %v", err)
		}
	}
	var mss int
	if tc, ok := c.(*net.TCPConn); ok {
		rc, _ := tc.SyscallConn()
		rc.Control(func(fd uintptr) {
			if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
				mss = int(info.Snd_mss)
			}
		})
	}
	c.Close()
	r := <-done
	if r.err != nil {
		t.Fatalf("receiving: %v", r.err)
	}
	res := tcpResult{bytes: r.window, window: r.dur, mss: mss, received: r.received}
	if r.dur > 0 {
		res.goodput = float64(r.window) * 8 / r.dur.Seconds()
	}
	return res
}

// udpStamp writes the sequence number and the send time (UnixNano, wall
// clock) into the first 16 bytes of a datagram.
func udpStamp(b []byte, seq uint64) {
	binary.BigEndian.PutUint64(b, seq)
	binary.BigEndian.PutUint64(b[8:], uint64(time.Now().UnixNano()))
}

// udpReceived is one datagram a udpReceiver saw.
type udpReceived struct {
	seq     uint64
	oneWay  time.Duration // kernel receive time minus the send time
	size    int
	arrived time.Time // kernel receive time
}

// udpReceiver reads datagrams on c until it is closed, with their kernel
// receive timestamps, and sends what it saw on the returned channel.
func udpReceiver(t testing.TB, c net.PacketConn) <-chan []udpReceived {
	t.Helper()
	uc := c.(*net.UDPConn)
	uc.SetReadBuffer(8 << 20)
	rc, _ := uc.SyscallConn()
	rc.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		// Past net.core.rmem_max (root): a receiver that the machine's
		// load keeps off the CPU for a while loses nothing.
		unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
	})
	out := make(chan []udpReceived, 1)
	go func() {
		var got []udpReceived
		buf := make([]byte, 65536)
		oob := make([]byte, 128)
		for {
			n, oobn, _, _, err := uc.ReadMsgUDP(buf, oob)
			if err != nil {
				break
			}
			if n < 16 {
				continue
			}
			at, ok := rxTimestamp(oob[:oobn])
			if !ok {
				at = time.Now()
			}
			sent := time.Unix(0, int64(binary.BigEndian.Uint64(buf[8:])))
			got = append(got, udpReceived{seq: binary.BigEndian.Uint64(buf), oneWay: at.Sub(sent), size: n, arrived: at})
		}
		out <- got
	}()
	return out
}

// udpSockets opens a UDP socket in A and one in B and returns them, with
// B's address.
func udpSockets(t testing.TB, p *Pair) (a, b net.PacketConn, to net.Addr) {
	t.Helper()
	b, err := p.ListenPacket(B, "udp4", net.JoinHostPort(p.Addr(B).String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	a, err = p.ListenPacket(A, "udp4", net.JoinHostPort(p.Addr(A).String(), "0"))
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	a.(*net.UDPConn).SetWriteBuffer(8 << 20)
	return a, b, b.LocalAddr()
}

// sendPaced sends n datagrams of size bytes of payload from a to to at
// about pps datagrams per second, in bursts of a millisecond's worth.
// The datagrams leave from a thread with real-time priority (where
// allowed), so that no other thread runs between a datagram's timestamp
// and its sending.
func sendPaced(t testing.TB, a net.PacketConn, to net.Addr, n, size int, pps float64) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: probePriority}, 0)
		buf := make([]byte, size)
		start := time.Now()
		for i := range n {
			// Wait until datagram i is due.
			due := start.Add(time.Duration(float64(i) / pps * float64(time.Second)))
			if d := time.Until(due); d > 500*time.Microsecond {
				time.Sleep(d)
			}
			udpStamp(buf, uint64(i))
			if _, err := a.WriteTo(buf, to); err != nil {
				errc <- fmt.Errorf("sending datagram %d: %v", i, err)
				return
			}
		}
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// udpCountUntil counts the datagrams of at least 16 bytes that c
// receives until it has n of them or the timeout passes (a long one: it
// bounds only a broken run), and sends the count. Unlike closing the
// socket after a pause, it leaves no datagram unread in the socket's
// buffer, however late a loaded machine schedules the reader.
func udpCountUntil(t testing.TB, c net.PacketConn, n int, timeout time.Duration) <-chan int {
	t.Helper()
	uc := c.(*net.UDPConn)
	uc.SetReadBuffer(8 << 20)
	rc, _ := uc.SyscallConn()
	rc.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
	})
	uc.SetReadDeadline(time.Now().Add(timeout))
	out := make(chan int, 1)
	go func() {
		got := 0
		buf := make([]byte, 65536)
		for got < n {
			m, _, err := uc.ReadFrom(buf)
			if err != nil {
				break
			}
			if m >= 16 {
				got++
			}
		}
		out <- got
	}()
	return out
}

// mbit formats a rate in bits per second.
func mbit(r float64) string { return fmt.Sprintf("%.3f Mbit/s", r/1e6) }

// pairStats returns the counters of direction d.
func pairStats(t testing.TB, p *Pair, d Dir) Stats {
	t.Helper()
	s, err := p.Stats(d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
