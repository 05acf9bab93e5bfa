//go:build linux

package interop

// The ACK frequency extension (draft-ietf-quic-ack-frequency) against
// quinn, through quinn's benchmark tool quinn-perf (../shared/tools; the
// test skips where it is missing) and its perf protocol: the client opens
// a bidirectional stream, writes the size of the response it wants as 8
// bytes (big-endian), then its upload and the FIN; the server reads the
// upload to its end and answers with that many bytes of value 42.
// quinn-perf runs with --ack-frequency, which it leaves off by default.
// The datagrams cross the netem relay with 5 ms of delay each way: on
// paths of a few milliseconds or less our sender does not ask for fewer
// ACKs (see the root package's wantedAckThreshold).

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/netem"
	"github.com/quicstack/quic/wire"
)

// ackFreqCounter counts ACK frequency frames in the packets a connection
// sent and received, from its Tracer.
type ackFreqCounter struct {
	sentAF, rcvdAF, rcvdIA atomic.Int64
}

func (c *ackFreqCounter) tracer(context.Context, bool, ours.ConnectionID) *ours.Tracer {
	count := func(payload []byte, af, ia *atomic.Int64) {
		var f wire.Frame
		for len(payload) > 0 {
			n, err := wire.ParseFrame(payload, &f, 64)
			if err != nil || n <= 0 {
				return
			}
			switch f.Type {
			case wire.FrameTypeAckFrequency:
				af.Add(1)
			case wire.FrameTypeImmediateAck:
				if ia != nil {
					ia.Add(1)
				}
			}
			payload = payload[n:]
		}
	}
	return &ours.Tracer{
		PacketSent:     func(p ours.PacketInfo) { count(p.Payload, &c.sentAF, nil) },
		PacketReceived: func(p ours.PacketInfo) { count(p.Payload, &c.rcvdAF, &c.rcvdIA) },
	}
}

func TestAckFrequencyQuinnPerf(t *testing.T) {
	bin := *perfQuinn
	if bin == "" {
		bin = findQuinnPerf()
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("quinn-perf not found: %v", err)
	}
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	addr := u.LocalAddr().String() // free a moment ago
	u.Close()
	var srvOut bytes.Buffer
	srv := exec.Command(bin, "server", "--listen", addr, "--ack-frequency")
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("quinn-perf server output:\n%s", tail(srvOut.Bytes()))
		}
	}()

	udp := loopbackUDP(t)
	tr := &ours.Transport{Conn: udp}
	defer tr.Close()
	saddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := netem.New(netem.Config{Server: saddr, Link: netem.SimpleP2P(200_000_000, 5*time.Millisecond, 2000), Seed: 28})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	raddr := proxy.Addr()
	// quinn-perf's certificate is self-signed for "localhost".
	ctls := &tls.Config{ServerName: "localhost", InsecureSkipVerify: true, NextProtos: []string{"perf"}}
	counter := &ackFreqCounter{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var c *ours.Conn
	for range 50 { // the server binds its socket
		dctx, dcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		c, err = tr.Dial(dctx, raddr, ctls, &ours.Config{MaxPacketSize: perfPacketSize, Tracer: counter.tracer})
		dcancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("dial quinn-perf: %v", err)
	}
	defer c.CloseWithError(0, "")

	const up, down = 12 << 20, 12 << 20
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var req [8]byte
	binary.BigEndian.PutUint64(req[:], down)
	if _, err := s.Write(req[:]); err != nil {
		t.Fatal(err)
	}
	if err := writeN(s, up); err != nil {
		t.Fatalf("upload: %v", err)
	}
	if err := s.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var got int64
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		for _, b := range buf[:n] {
			if b != 42 {
				t.Fatalf("byte %d of the response is %d, want 42", got, b)
			}
			got++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("download after %d bytes: %v (stats %+v)", got, err, c.Stats())
		}
	}
	if got != down {
		t.Fatalf("downloaded %d bytes, want %d", got, down)
	}
	st := c.Stats()
	t.Logf("ACK_FREQUENCY sent %d, received %d; IMMEDIATE_ACK received %d; ACK packets sent %d, ACK frames received %d; packets sent %d, received %d",
		counter.sentAF.Load(), counter.rcvdAF.Load(), counter.rcvdIA.Load(), st.AcksSent, st.AcksReceived, st.PacketsSent, st.PacketsReceived)
	// The upload: quinn advertised min_ack_delay, and our client asked it
	// for fewer ACKs once its window grew; quinn took the frames (the
	// connection is still open and the transfer completed).
	if counter.sentAF.Load() == 0 {
		t.Error("our client sent quinn no ACK_FREQUENCY frame during the upload")
	}
	if counter.rcvdAF.Load()+counter.rcvdIA.Load() == 0 {
		t.Error("quinn-perf with --ack-frequency sent no ACK_FREQUENCY or IMMEDIATE_ACK frame")
	}
	select {
	case <-c.Context().Done():
		t.Fatalf("connection closed: %v", context.Cause(c.Context()))
	default:
	}
}
