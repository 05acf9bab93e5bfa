package quic

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/wire"
)

// lossyMemConn drops every every-th datagram it writes once armed.
type lossyMemConn struct {
	*memConn
	every int64
	armed atomic.Bool
	n     atomic.Int64
}

func (c *lossyMemConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if c.armed.Load() && c.n.Add(1)%c.every == 0 {
		return len(p), nil
	}
	return c.memConn.WriteTo(p, addr)
}

// TestSynctestFleetStats checks the fleet statistics of both Transports
// over a connection with open streams and losses, then a resumed one
// with 0-RTT: handshake durations in their bucket, versions, cipher
// suites and groups, resumption and 0-RTT counts, open streams, and
// packets and bytes lost equal to the sum of the connections' own.
func TestSynctestFleetStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lossy *lossyMemConn
		p := newConnPair(t, connPairOpts{Mem: true, Early: true, NoDial: true,
			TLS: func(t testing.TB) (*tls.Config, *tls.Config) {
				ctls, stls, _ := resumeTLS(t)
				return ctls, stls
			},
			ServerConn: func(pc net.PacketConn) net.PacketConn {
				lossy = &lossyMemConn{memConn: pc.(*memConn), every: 16}
				return lossy
			},
			Server: &Config{Allow0RTT: true}})
		st, ct, l, ctls := p.serverT, p.clientT, p.listener, p.ctls
		sc := p.serverT.Conn
		ctx := context.Background()
		var mu sync.Mutex
		var serverConns []*Conn
		go func() {
			for {
				c, err := l.Accept(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				serverConns = append(serverConns, c)
				mu.Unlock()
				go func() {
					for {
						s, err := c.AcceptStream(ctx)
						if err != nil {
							return
						}
						go func() { io.Copy(s, s); s.CloseWrite() }()
					}
				}()
			}
		}()

		c1, err := ct.Dial(ctx, sc.LocalAddr(), ctls, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.client = c1
		// Three streams left open both ways, then finished.
		var open []*Stream
		for range 3 {
			s, err := c1.OpenStreamSync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s.Write([]byte("x"))
			b := make([]byte, 1)
			if _, err := io.ReadFull(s, b); err != nil {
				t.Fatal(err)
			}
			open = append(open, s)
		}
		synctest.Wait()
		if c, s := ct.Stats().StreamsOpen, st.Stats().StreamsOpen; c != 3 || s != 3 {
			t.Errorf("streams open: client %d, server %d; want 3", c, s)
		}
		for _, s := range open {
			s.CloseWrite()
			io.ReadAll(s)
		}
		time.Sleep(time.Second)
		if c, s := ct.Stats().StreamsOpen, st.Stats().StreamsOpen; c != 0 || s != 0 {
			t.Errorf("streams open after closing: client %d, server %d", c, s)
		}

		// A transfer with every 16th server datagram lost.
		lossy.armed.Store(true)
		s, _ := c1.OpenStreamSync(ctx)
		msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
		go func() { s.Write(msg); s.CloseWrite() }()
		if got, err := io.ReadAll(s); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo: %d bytes, %v", len(got), err)
		}
		lossy.armed.Store(false)
		time.Sleep(time.Second)
		mu.Lock()
		s1 := serverConns[0]
		mu.Unlock()
		ss, cs := st.Stats(), ct.Stats()
		if s1.Stats().PacketsLost == 0 || ss.PacketsLost != s1.Stats().PacketsLost || ss.BytesLost != s1.Stats().BytesLost {
			t.Errorf("server lost %d packets (%d bytes); its connection %d (%d)", ss.PacketsLost, ss.BytesLost, s1.Stats().PacketsLost, s1.Stats().BytesLost)
		}
		if cs.PacketsLost != c1.Stats().PacketsLost || cs.BytesLost != c1.Stats().BytesLost {
			t.Errorf("client lost %d packets (%d bytes); its connection %d (%d)", cs.PacketsLost, cs.BytesLost, c1.Stats().PacketsLost, c1.Stats().BytesLost)
		}
		c1.CloseWithError(0, "")
		time.Sleep(10 * time.Second)

		// A resumed connection with 0-RTT.
		c2, err := ct.DialEarly(ctx, sc.LocalAddr(), ctls, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.client = c2
		s, _ = c2.OpenStream()
		s.Write([]byte("early"))
		s.CloseWrite()
		if b, err := io.ReadAll(s); err != nil || string(b) != "early" {
			t.Fatalf("0-RTT echo %q, %v", b, err)
		}
		<-c2.HandshakeComplete()
		time.Sleep(time.Second) // the client's Finished reaches the server
		if !c2.ConnectionState().Used0RTT {
			t.Fatal("0-RTT not used")
		}
		for _, x := range []struct {
			name string
			s    TransportStats
		}{{"client", ct.Stats()}, {"server", st.Stats()}} {
			s := x.s
			if s.HandshakesCompleted != 2 || s.ResumptionOffered != 1 || s.ResumptionAccepted != 1 ||
				s.ZeroRTTOffered != 1 || s.ZeroRTTAccepted != 1 || s.ZeroRTTRejected != 0 {
				t.Errorf("%s: completed %d, resumption %d/%d, 0-RTT %d/%d/%d", x.name, s.HandshakesCompleted,
					s.ResumptionOffered, s.ResumptionAccepted, s.ZeroRTTOffered, s.ZeroRTTAccepted, s.ZeroRTTRejected)
			}
			if s.Versions[wire.Version2] != 2 || len(s.Versions) != 1 {
				t.Errorf("%s: versions %v", x.name, s.Versions)
			}
			if len(s.CipherSuites) != 1 || s.CipherSuites[tls.TLS_AES_128_GCM_SHA256] != 2 {
				t.Errorf("%s: cipher suites %v", x.name, s.CipherSuites)
			}
			groups := uint64(0)
			for g, n := range s.KeyExchanges {
				if g == 0 {
					t.Errorf("%s: a handshake without key exchange group: %v", x.name, s.KeyExchanges)
				}
				groups += n
			}
			if groups != 2 {
				t.Errorf("%s: key exchanges %v", x.name, s.KeyExchanges)
			}
			// Both handshakes take one round trip of 20 ms of fake time
			// (on the server, from its first Initial to the client's
			// Finished), in the bucket (10 ms, 25 ms].
			h := s.HandshakeDuration
			i10, i25 := 3, 4
			if h.Bounds[i10] != 10*time.Millisecond || h.Bounds[i25] != 25*time.Millisecond {
				t.Fatalf("bounds %v", h.Bounds)
			}
			if h.Count != 2 || h.Cumulative[i10] != 0 || h.Cumulative[i25] != 2 || h.Cumulative[len(h.Cumulative)-1] != 2 ||
				h.Sum < 40*time.Millisecond || h.Sum > 50*time.Millisecond {
				t.Errorf("%s: handshake durations %+v", x.name, h)
			}
		}
		p.server = nil
		mu.Lock()
		for _, c := range serverConns {
			c.CloseWithError(0, "")
		}
		mu.Unlock()
		p.shutdown()
		if n := st.Stats().StreamsOpen; n != 0 {
			t.Errorf("server streams open after the end: %d", n)
		}
	})
}

// TestKeyedCountersConcurrent adds keys from many goroutines: each key
// gets one slot and no count is lost, and keys beyond the table's
// capacity are counted under 0.
func TestKeyedCountersConcurrent(t *testing.T) {
	var k keyedCounters
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				k.add(uint32(1 + (i+g)%20)) // 20 keys, 16 slots
			}
		})
	}
	wg.Wait()
	m := keyedSnapshot[uint32](&k)
	total := uint64(0)
	for _, n := range m {
		total += n
	}
	if total != 8000 || len(m) != 17 || m[0] == 0 {
		t.Errorf("%d counted in %d keys: %v", total, len(m), m)
	}
	k.add(^uint32(0))
	if m := keyedSnapshot[uint32](&k); m[0] == 0 {
		t.Error("key 2^32-1 not counted")
	}
}

// TestDurationHistogram checks the bucket boundaries: a duration equal
// to a bound falls in that bucket.
func TestDurationHistogram(t *testing.T) {
	var h durationHistogram
	for _, d := range []time.Duration{0, time.Millisecond, time.Millisecond + 1, 10 * time.Second, time.Minute} {
		h.observe(d)
	}
	s := h.snapshot()
	if s.Count != 5 || s.Cumulative[0] != 2 || s.Cumulative[1] != 3 || s.Cumulative[len(s.Cumulative)-1] != 4 {
		t.Errorf("%+v", s)
	}
	if s.Sum != 2*time.Millisecond+1+10*time.Second+time.Minute {
		t.Errorf("sum %v", s.Sum)
	}
}

// TestUDPFleetStatsMigration checks that a client's migration to another
// socket counts on both Transports.
func TestUDPFleetStatsMigration(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts := &Transport{Conn: pathListenUDP(t)}
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)
	ta, tb := &Transport{Conn: pathListenUDP(t)}, &Transport{Conn: pathListenUDP(t)}
	defer ta.Close()
	defer tb.Close()
	c, err := ta.Dial(ctx, ts.Conn.LocalAddr(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	<-conns
	pathEcho(t, c, []byte("before"))
	if n := ts.Stats().Migrations; n != 0 {
		t.Fatalf("migrations before migrating: %d", n)
	}
	if err := c.Migrate(ctx, tb); err != nil {
		t.Fatal(err)
	}
	pathEcho(t, c, []byte("after"))
	pathPollUntil(t, "the server's migration count", func() bool { return ts.Stats().Migrations == 1 })
	if n := ta.Stats().Migrations + tb.Stats().Migrations; n != 1 {
		t.Errorf("client Transports count %d migrations", n)
	}
}

// TestTransportStatsAdd sums two Transports' statistics, maps and
// histograms included, into an empty total.
func TestTransportStatsAdd(t *testing.T) {
	var h1, h2 durationHistogram
	h1.observe(time.Millisecond)
	h2.observe(time.Second)
	h2.observe(time.Minute)
	a := TransportStats{HandshakesCompleted: 1, StreamsOpen: 2, Versions: map[wire.Version]uint64{wire.Version1: 1},
		PacketsDropped: map[PacketDropReason]uint64{DropInvalid: 3}, HandshakeDuration: h1.snapshot()}
	b := TransportStats{HandshakesCompleted: 2, StreamsOpen: -1, Versions: map[wire.Version]uint64{wire.Version1: 1, wire.Version2: 1},
		KeyExchanges: map[tls.CurveID]uint64{tls.X25519: 2}, HandshakeDuration: h2.snapshot()}
	var sum TransportStats
	sum.Add(a)
	sum.Add(b)
	if sum.HandshakesCompleted != 3 || sum.StreamsOpen != 1 || sum.Versions[wire.Version1] != 2 || sum.Versions[wire.Version2] != 1 ||
		sum.PacketsDropped[DropInvalid] != 3 || sum.KeyExchanges[tls.X25519] != 2 {
		t.Errorf("sum %+v", sum)
	}
	h := sum.HandshakeDuration
	if h.Count != 3 || h.Cumulative[0] != 1 || h.Cumulative[9] != 2 || h.Cumulative[len(h.Cumulative)-1] != 2 || h.Sum != time.Millisecond+time.Second+time.Minute {
		t.Errorf("histogram %+v", h)
	}
	if a.Versions[wire.Version1] != 1 {
		t.Error("Add modified its argument's map")
	}
}

// TestTransportStatsAddEveryCounter fills every integer field of a
// TransportStats with 1 and adds it twice: each must count 2, so that a
// counter added to TransportStats is not left out of the sums
// http3.Server.Stats makes.
func TestTransportStatsAddEveryCounter(t *testing.T) {
	var one TransportStats
	v := reflect.ValueOf(&one).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Uint64:
			f.SetUint(1)
		case reflect.Int64:
			f.SetInt(1)
		}
	}
	var sum TransportStats
	sum.Add(one)
	sum.Add(one)
	s := reflect.ValueOf(sum)
	for i := range s.NumField() {
		f, name := s.Field(i), s.Type().Field(i).Name
		if (f.Kind() == reflect.Uint64 && f.Uint() != 2) || (f.Kind() == reflect.Int64 && f.Int() != 2) {
			t.Errorf("Add left out %s: %v", name, f)
		}
	}
}
