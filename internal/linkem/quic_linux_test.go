package linkem

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
)

// Our QUIC crosses the same emulation as kernel TCP: an echo of 1 MB over
// a lossy 20 Mbit/s link completes, byte for byte, after the link lost
// some of its packets in each direction.
func TestPairQUIC(t *testing.T) {
	prm := Params{Delay: 10 * time.Millisecond, Rate: 20e6, Loss: 0.02}
	p := newTestPair(t, Config{AB: prm, BA: prm, Seed: 5})
	cert, pool, err := certs.SelfSigned(p.Addr(B).String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	su, err := p.ListenPacket(B, "udp4", net.JoinHostPort(p.Addr(B).String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	st := &quic.Transport{Conn: su}
	defer st.Close()
	l, err := st.Listen(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"linkem"}}, nil)
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
		io.Copy(s, s)
		s.CloseWrite()
	}()

	cu, err := p.ListenPacket(A, "udp4", net.JoinHostPort(p.Addr(A).String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	ct := &quic.Transport{Conn: cu}
	defer ct.Close()
	c, err := ct.Dial(ctx, su.LocalAddr(), &tls.Config{RootCAs: pool, ServerName: p.Addr(B).String(), NextProtos: []string{"linkem"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	msg := bytes.Repeat([]byte("linkem "), 150000)
	go func() {
		s.Write(msg)
		s.CloseWrite()
	}()
	got, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo over the emulated link: %d of %d bytes, %v", len(got), len(msg), err)
	}
	for _, d := range []Dir{AB, BA} {
		s := pairStats(t, p, d)
		if s.DroppedLoss == 0 {
			t.Errorf("%v: the link lost nothing of %d packets at 2%% loss", d, s.Arrived)
		}
		t.Logf("%v: %d packets, %d lost", d, s.Arrived, s.DroppedLoss)
	}
}
