package quic

import (
	"context"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"
)

// bulkPair is a connPair over loopback UDP with one stream open from the
// client, whose data the server discards.
type bulkPair struct {
	*connPair
	s        *Stream
	received chan int64
}

// newBulkPair makes the pair; cfg (or nil) configures both sides. It is
// closed at cleanup.
func newBulkPair(t testing.TB, cfg *Config) *bulkPair {
	p := &bulkPair{connPair: newConnPair(t, connPairOpts{Config: cfg}), received: make(chan int64, 1024)}
	server := p.server
	go func() {
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("side", "server")))
		s, err := server.AcceptStream(context.Background())
		if err != nil {
			return
		}
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			p.received <- int64(n)
			if err != nil {
				return
			}
		}
	}()
	var err error
	if p.s, err = p.client.OpenStream(); err != nil {
		t.Fatal(err)
	}
	// The server's stream appears once the stream's first bytes do.
	p.s.Write(make([]byte, 1))
	<-p.received
	return p
}

// transfer sends n bytes and waits until the server read them.
func (p *bulkPair) transfer(t testing.TB, n int64, chunk []byte) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		timeout := time.NewTimer(30 * time.Second)
		defer timeout.Stop()
		var got int64
		for got < n {
			select {
			case k := <-p.received:
				got += k
			case <-timeout.C:
				t.Error("server stopped receiving")
				return
			}
		}
	}()
	for sent := int64(0); sent < n; sent += int64(len(chunk)) {
		if _, err := p.s.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	<-done
}

// TestBulkTransferAllocs checks that a steady bulk transfer over UDP
// allocates nothing per packet on either side: after a warm-up (buffers
// pooled, windows grown), the allocations of the whole process during
// 32 MB are counted. With packets of an Ethernet path that is about 27,000
// packets each way counting ACKs; with the default, path MTU discovery
// finds loopback's 64 KB packets, about 700, and what is left (rings
// grown, a key update) is counted per MB, with a garbage collection
// during the count.
func TestBulkTransferAllocs(t *testing.T) {
	if connIDRaceEnabled {
		// The race detector makes sync.Pool drop items at random; the
		// non-race pass of make test (-run Alloc) asserts this.
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, tc := range []struct {
		name      string
		cfg       *Config
		perPacket float64 // at most, allocations per packet
		perMB     float64 // at most, allocations per MB
	}{
		{"ethernet", &Config{MaxPacketSize: 1452}, 0.05, 1e9},
		{"default", nil, 1e9, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newBulkPair(t, tc.cfg)
			chunk := make([]byte, 64<<10)
			// Warm-up: the windows grow and, with them, the receive
			// backlog's high-water mark, which sets how many chunk
			// groups and GRO buffers the free lists hold; at 8 MB the
			// lists were still growing (20-60 allocations in the next
			// 32 MB), at 32 MB they are not (8-33).
			p.transfer(t, 32<<20, chunk)
			var before, after runtime.MemStats
			sent0 := p.client.Stats().PacketsSent + p.server.Stats().PacketsSent
			runtime.ReadMemStats(&before)
			// A garbage collection halfway, as a long transfer meets
			// them: pools that empty at a collection and refill after
			// it (sync.Pool) cost about 70 allocations each time, most
			// of this count before the stream chunks and receive
			// buffers moved to free lists (internal/freelist).
			const n = 32 << 20
			p.transfer(t, n/2, chunk)
			runtime.GC()
			p.transfer(t, n/2, chunk)
			runtime.ReadMemStats(&after)
			packets := p.client.Stats().PacketsSent + p.server.Stats().PacketsSent - sent0
			allocs := after.Mallocs - before.Mallocs
			perPacket, perMB := float64(allocs)/float64(packets), float64(allocs)/(n>>20)
			t.Logf("%d allocations for %d packets (%.3f per packet, %.2f per MB, %d bytes); datagrams of %d bytes",
				allocs, packets, perPacket, perMB, after.TotalAlloc-before.TotalAlloc, p.client.Stats().MaxDatagramSize)
			if perPacket > tc.perPacket {
				t.Errorf("%.3f allocations per packet in a steady bulk transfer; want 0", perPacket)
			}
			if perMB > tc.perMB {
				t.Errorf("%.2f allocations per MB in a steady bulk transfer; want at most %v", perMB, tc.perMB)
			}
		})
	}
}

// BenchmarkBulkTransferUDP measures one stream over loopback UDP; profile
// it with -cpuprofile and -memprofile. cpu-s/GB is the CPU time of both
// sides (the whole process) per GB moved, acks/GB the receiver's packets
// per GB.
func BenchmarkBulkTransferUDP(b *testing.B) { benchmarkBulkTransfer(b, nil) }

// BenchmarkBulkTransferUDP1452 is BenchmarkBulkTransferUDP with packets
// capped at 1,452 bytes (Config.MaxPacketSize), the size every real path
// allows, where the per-packet cost of both sides shows.
func BenchmarkBulkTransferUDP1452(b *testing.B) {
	benchmarkBulkTransfer(b, &Config{MaxPacketSize: 1452})
}

func benchmarkBulkTransfer(b *testing.B, cfg *Config) {
	p := newBulkPair(b, cfg)
	// The writer is the client's side in a profile split by side (see
	// newConnPair).
	defer pprof.SetGoroutineLabels(context.Background())
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("side", "client")))
	chunk := make([]byte, 64<<10)
	const n = 16 << 20
	b.SetBytes(n)
	b.ReportAllocs()
	cpu0 := processCPUTime()
	acks0 := p.server.Stats().PacketsSent
	for b.Loop() {
		p.transfer(b, n, chunk)
	}
	if cpu := processCPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(cpu.Seconds()/(float64(b.N)*n/1e9), "cpu-s/GB")
	}
	// The receiver's packets, nearly all ACK-only, per GB: the count the
	// acknowledgment policy sets.
	b.ReportMetric(float64(p.server.Stats().PacketsSent-acks0)/(float64(b.N)*n/1e9), "acks/GB")
}
