package linkem

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/certs"
)

// Our QUIC flow and a kernel TCP flow (Linux's Cubic) share one emulated
// bottleneck, both sending from A to B: 20 Mbit/s, 20 ms each way, the
// default 100 ms tail-drop queue. Over the last 14 s of 20, each of our
// controllers gets between half and twice what TCP gets: it neither
// starves TCP nor is starved by it (issue 27, section 3). It is a
// real-time measurement, so it runs with the precise checks
// (LINKEM_CHECK=1, make linkem-check), not in make test.
func TestCheckFairnessTCP(t *testing.T) {
	checkEnabled(t)
	for _, cc := range []struct {
		name string
		f    congestion.ControllerFactory
	}{{"cubic", congestion.NewCubic}, {"bbr", congestion.NewBBR}, {"newreno", congestion.NewNewReno}} {
		t.Run(cc.name, func(t *testing.T) {
			ours, tcp := shareWithTCP(t, cc.f, "cubic", 20*time.Second, 6*time.Second)
			ratio := float64(ours) / float64(tcp)
			t.Logf("ours (%s) %.2f Mbit/s, kernel TCP (cubic) %.2f Mbit/s: ratio %.2f", cc.name,
				float64(ours)*8/14e6, float64(tcp)*8/14e6, ratio)
			if !(ratio >= 0.5 && ratio <= 2) {
				t.Errorf("ours/TCP = %.2f, want within [0.5, 2]", ratio)
			}
		})
	}
}

// shareWithTCP runs a bulk QUIC flow with controller f and a bulk kernel
// TCP flow with tcpCC from A to B for d, and returns the bytes each
// delivered after warm.
func shareWithTCP(t *testing.T, f congestion.ControllerFactory, tcpCC string, d, warm time.Duration) (ours, tcp int64) {
	prm := Params{Delay: 20 * time.Millisecond, Rate: 20e6}
	p := newTestPair(t, Config{AB: prm, BA: prm, Seed: 11})
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	var gotQUIC, gotTCP atomic.Int64
	count := func(r io.Reader, n *atomic.Int64) {
		buf := make([]byte, 64<<10)
		for {
			k, err := r.Read(buf)
			n.Add(int64(k))
			if err != nil {
				return
			}
		}
	}

	// Kernel TCP, its congestion control set per socket.
	setCC := func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, tcpCC)
		})
		return serr
	}
	var ln net.Listener
	err := p.Do(B, func() (err error) {
		lc := net.ListenConfig{Control: setCC}
		ln, err = lc.Listen(ctx, "tcp4", net.JoinHostPort(p.Addr(B).String(), "5201"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		count(c, &gotTCP)
	}()

	// Our QUIC.
	cert, pool, err := certs.SelfSigned(p.Addr(B).String())
	if err != nil {
		t.Fatal(err)
	}
	su, err := p.ListenPacket(B, "udp4", net.JoinHostPort(p.Addr(B).String(), "4433"))
	if err != nil {
		t.Fatal(err)
	}
	st := &quic.Transport{Conn: su}
	defer st.Close()
	conf := &quic.Config{Congestion: f}
	l, err := st.Listen(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"fair"}}, conf)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		count(s, &gotQUIC)
	}()
	cu, err := p.ListenPacket(A, "udp4", net.JoinHostPort(p.Addr(A).String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	ct := &quic.Transport{Conn: cu}
	defer ct.Close()
	qc, err := ct.Dial(ctx, su.LocalAddr(), &tls.Config{RootCAs: pool, ServerName: p.Addr(B).String(), NextProtos: []string{"fair"}}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	qs, err := qc.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := p.Dial(ctx, A, &net.Dialer{Control: setCC}, "tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()

	stop := make(chan struct{})
	send := func(w io.Writer) {
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}
	go send(qs)
	go send(tc)
	time.Sleep(warm)
	q0, t0 := gotQUIC.Load(), gotTCP.Load()
	time.Sleep(d - warm)
	q1, t1 := gotQUIC.Load(), gotTCP.Load()
	close(stop)
	if t1 == t0 || q1 == q0 {
		t.Fatalf("a flow delivered nothing: QUIC %d, TCP %d bytes", q1-q0, t1-t0)
	}
	return q1 - q0, t1 - t0
}
