package qlog_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/qlog"
	"github.com/quicstack/quic/wire"
)

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration { return cli.CPUTime() }

type discardCloser struct{}

func (discardCloser) Write(p []byte) (int, error) { return len(p), nil }
func (discardCloser) Close() error                { return nil }

// BenchmarkPacketEvent is the cost of tracing one full-size 1-RTT packet
// (an ACK and a STREAM frame) as a qlog packet_sent event.
func BenchmarkPacketEvent(b *testing.B) {
	tr := qlog.NewTracer(discardCloser{}, true, wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8}))
	payload := (&wire.AckFrame{Ranges: []wire.AckRange{{Smallest: 100, Largest: 120}, {Smallest: 10, Largest: 90}}, Delay: 100}).Append(nil)
	payload = wire.StreamFrame{StreamID: 4, Offset: 1 << 20, Data: make([]byte, 1200), HasLength: true}.Append(payload)
	p := quic.PacketInfo{Time: time.Now(), Type: wire.PacketType1RTT, Number: 1234, Size: len(payload) + 25, AckEliciting: true, Payload: payload}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		tr.PacketSent(p)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLoopbackTransfer moves 8 MB over one stream on loopback,
// without tracing and with qlog files written on both sides.
func BenchmarkLoopbackTransfer(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "qlog=off"
		if traced {
			name = "qlog=on"
		}
		b.Run(name, func(b *testing.B) {
			var conf *quic.Config
			if traced {
				conf = &quic.Config{Tracer: qlog.DirTracer(b.TempDir())}
			}
			benchTransfer(b, conf)
		})
	}
}

func benchTransfer(b *testing.B, conf *quic.Config) {
	const size = 8 << 20
	stls, ctls := tlsConfigs(b)
	sudp, _ := net.ListenPacket("udp", "127.0.0.1:0")
	cudp, _ := net.ListenPacket("udp", "127.0.0.1:0")
	srv, cli := &quic.Transport{Conn: sudp}, &quic.Transport{Conn: cudp}
	defer func() { cli.Close(); srv.Close(); sudp.Close(); cudp.Close() }()
	l, err := srv.Listen(stls, conf)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					io.Copy(io.Discard, s)
					s.Close()
				}
			}()
		}
	}()
	buf := make([]byte, 64<<10)
	b.SetBytes(size)
	// CPU time is a steadier measure than wall time on a busy machine.
	cpu0 := cpuTime()
	defer func() {
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*size>>20), "cpu-us/MiB")
	}()
	b.ResetTimer()
	for b.Loop() {
		c, err := cli.Dial(ctx, l.Addr(), ctls, conf)
		if err != nil {
			b.Fatal(err)
		}
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < size; n += len(buf) {
			if _, err := s.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		s.CloseWrite()
		io.Copy(io.Discard, s)
		c.CloseWithError(0, "")
	}
}

// BenchmarkTracingCost measures what qlog costs a bulk transfer: each
// iteration moves 8 MB over loopback on a new connection without tracing
// and then 8 MB with qlog files written (to a temporary directory),
// alternating so that both see the same machine load. It reports the
// throughput of each (off-MB/s, on-MB/s), their ratio (on/off, 1 = no
// cost) and the CPU time per MiB of each. In "server" only the server
// traces, as an operator would; in "both" each end writes its file, so
// one process (two cores here) does twice the tracing of one endpoint.
func BenchmarkTracingCost(b *testing.B) {
	b.Run("server", func(b *testing.B) { benchTracingCost(b, false) })
	b.Run("both", func(b *testing.B) { benchTracingCost(b, true) })
}

func benchTracingCost(b *testing.B, clientToo bool) {
	const size = 8 << 20
	stls, ctls := tlsConfigs(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := b.TempDir()
	type side struct {
		server, client *quic.Config
		l              *quic.Listener
		wall, cpu      time.Duration
		transfers      int
	}
	on := &side{server: &quic.Config{Tracer: qlog.DirTracer(dir)}}
	if clientToo {
		on.client = on.server
	}
	sides := [2]*side{{}, on}
	cudp, _ := net.ListenPacket("udp", "127.0.0.1:0")
	cli := &quic.Transport{Conn: cudp}
	defer func() { cli.Close(); cudp.Close() }()
	for _, s := range sides {
		sudp, _ := net.ListenPacket("udp", "127.0.0.1:0")
		srv := &quic.Transport{Conn: sudp}
		defer func() { srv.Close(); sudp.Close() }()
		l, err := srv.Listen(stls, s.server)
		if err != nil {
			b.Fatal(err)
		}
		s.l = l
		go serveDiscard(ctx, l)
	}
	buf := make([]byte, 64<<10)
	transfer := func(s *side) {
		start, cpu0 := time.Now(), cpuTime()
		c, err := cli.Dial(ctx, s.l.Addr(), ctls, s.client)
		if err != nil {
			b.Fatal(err)
		}
		st, err := c.OpenStreamSync(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < size; n += len(buf) {
			if _, err := st.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		st.CloseWrite()
		io.Copy(io.Discard, st)
		c.CloseWithError(0, "")
		s.wall += time.Since(start)
		s.cpu += cpuTime() - cpu0
		s.transfers++
	}
	b.SetBytes(2 * size)
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so that neither always follows the
		// other's trailing work (closing connections, flushing files).
		transfer(sides[i%2])
		transfer(sides[1-i%2])
	}
	mbps := func(s *side) float64 { return float64(s.transfers*size) / 1e6 / s.wall.Seconds() }
	cpuPerMiB := func(s *side) float64 {
		return float64(s.cpu.Microseconds()) / float64(s.transfers*size>>20)
	}
	b.ReportMetric(mbps(sides[0]), "off-MB/s")
	b.ReportMetric(mbps(sides[1]), "on-MB/s")
	b.ReportMetric(mbps(sides[1])/mbps(sides[0]), "on/off")
	b.ReportMetric(cpuPerMiB(sides[0]), "off-cpu-us/MiB")
	b.ReportMetric(cpuPerMiB(sides[1]), "on-cpu-us/MiB")
}

// serveDiscard reads every stream of every connection l accepts to its
// end, then closes it.
func serveDiscard(ctx context.Context, l *quic.Listener) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		go func() {
			for {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				io.Copy(io.Discard, s)
				s.Close()
			}
		}()
	}
}
