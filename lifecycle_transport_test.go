package quic

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quicstack/quic/wire"
)

// loopbackTransport returns a Transport on a UDP socket of its own on
// 127.0.0.1, which the caller closes with the Transport.
func loopbackTransport(t testing.TB) *Transport {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &Transport{Conn: pc, ownConn: true}
}

// watchdog fails the test from another goroutine if done is not closed
// within d: a hang in a lifecycle test is a defect, and the test binary's
// own timeout would hide which call hung.
func watchdog(t *testing.T, d time.Duration, what string) (done func()) {
	ch := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-time.After(d):
			panic(what + ": did not return within " + d.String())
		}
	}()
	return sync.OnceFunc(func() { close(ch) })
}

// Transport.Close while other goroutines dial. It panicked ("sync:
// WaitGroup is reused before previous Wait has returned"): Conn.start
// added to the WaitGroup Close was waiting on. Dials racing Close either
// succeed, and the connection is closed by Close, or fail with
// ErrTransportClosed; none hangs.
func TestTransportCloseWhileDialing(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept(context.Background())
			if err != nil {
				return
			}
			go func() { // the client closes it
				<-c.Context().Done()
			}()
		}
	}()
	for round := 0; round < 3; round++ {
		ct := loopbackTransport(t)
		var wg sync.WaitGroup
		var closed atomic.Bool
		dialed := make(chan struct{}, 64)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					after := closed.Load()
					c, err := ct.Dial(ctx, l.Addr(), ctls, nil)
					cancel()
					if after {
						// Close returned before this dial started.
						if !errors.Is(err, ErrTransportClosed) {
							t.Errorf("Dial after Close: %v, want ErrTransportClosed", err)
						}
						return
					}
					if err != nil {
						continue // racing Close: any error
					}
					select {
					case dialed <- struct{}{}:
					default:
					}
					// Close closes it.
					<-c.Context().Done()
				}
			}()
		}
		<-dialed
		done := watchdog(t, 20*time.Second, "Transport.Close racing dials")
		ct.Close()
		closed.Store(true)
		wg.Wait()
		done()
	}
}

// Transport.Close while other goroutines start connections at a high
// rate (dials whose context is already cancelled start and abandon one
// each). It panicked with "sync: WaitGroup is reused before previous Wait
// has returned" within a few hundred rounds: Conn.start added to the
// WaitGroup that Close waited on, after its count had reached zero.
func TestTransportCloseWhileDialingPanics(t *testing.T) {
	ctls, _ := testTLS(t)
	addr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for round := 0; round < 1000; round++ {
		ct := loopbackTransport(t)
		var closed atomic.Bool
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					after := closed.Load()
					_, err := ct.Dial(cancelled, addr, ctls, nil)
					if after {
						if !errors.Is(err, ErrTransportClosed) {
							t.Errorf("Dial after Close: %v, want ErrTransportClosed", err)
						}
						return
					}
				}
			}()
		}
		ct.Close()
		closed.Store(true)
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}

// Listen and Dial on a closed Transport fail at once with
// ErrTransportClosed, which is a net.ErrClosed. Listen used to succeed,
// and Accept then blocked forever.
func TestTransportClosedRefusesListenAndDial(t *testing.T) {
	ctls, stls := testTLS(t)
	tr := loopbackTransport(t)
	tr.Close()
	done := watchdog(t, 10*time.Second, "Listen/Accept/Dial on a closed Transport")
	defer done()
	l, err := tr.Listen(stls, nil)
	if err == nil {
		_, aerr := l.Accept(context.Background())
		t.Fatalf("Listen on a closed Transport succeeded; Accept: %v", aerr)
	}
	if !errors.Is(err, ErrTransportClosed) || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Listen: %v, want ErrTransportClosed and net.ErrClosed", err)
	}
	if _, err := tr.ListenEarly(stls, nil); !errors.Is(err, ErrTransportClosed) {
		t.Fatalf("ListenEarly: %v", err)
	}
	addr := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	if _, err := tr.Dial(context.Background(), addr, ctls, nil); !errors.Is(err, ErrTransportClosed) {
		t.Fatalf("Dial: %v", err)
	}
	if _, err := tr.DialEarly(context.Background(), addr, ctls, nil); !errors.Is(err, ErrTransportClosed) {
		t.Fatalf("DialEarly: %v", err)
	}
}

// A zero Transport, or one never used, closes cleanly, and twice. The
// zero value panicked with "close of nil channel".
func TestTransportZeroAndUnusedClose(t *testing.T) {
	done := watchdog(t, 10*time.Second, "Close of an unused Transport")
	defer done()
	var zero Transport
	if err := zero.Close(); err != nil {
		t.Fatalf("zero Close: %v", err)
	}
	if err := zero.Close(); err != nil {
		t.Fatalf("zero Close twice: %v", err)
	}
	ctls, _ := testTLS(t)
	if _, err := zero.Dial(context.Background(), &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}, ctls, nil); err == nil {
		t.Fatal("Dial on a closed zero Transport succeeded")
	}
	unused := loopbackTransport(t)
	if err := unused.Close(); err != nil {
		t.Fatal(err)
	}
	if err := unused.Close(); err != nil {
		t.Fatal(err)
	}
}

// Transport.Close returns within its documented bound (closeLinger, 5 s,
// for the closing periods, plus the moment the connections take to send
// their CONNECTION_CLOSE) whatever the peers' RTT and max_ack_delay make
// of the closing periods (three PTOs, RFC 9000, Section 10.2): 12 s at a
// 1.4 s RTT, 49 s at an 11 ms RTT when the peer advertises the largest
// max_ack_delay allowed (2^14 - 1 ms; RFC 9000, Section 18.2). Close
// waited for each connection's whole closing period, up to 5 s each, then
// 5 s more: connections it closed never handed over to their
// closed-connection records. Fake time (synctest) makes the bound exact.
func TestTransportCloseBound(t *testing.T) {
	for _, tc := range []struct {
		name        string
		oneWay      time.Duration
		maxAckDelay time.Duration // the server's, 0: the default
	}{
		{"rtt 1.4s", 700 * time.Millisecond, 0},
		{"rtt 11ms, peer max_ack_delay 16383ms", 5500 * time.Microsecond, 16383 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.maxAckDelay > 0 {
				testHookTransportParameters = func(r wire.Role, p *wire.TransportParameters) {
					if r == wire.RoleServer {
						p.MaxAckDelay = tc.maxAckDelay
					}
				}
				defer func() { testHookTransportParameters = nil }()
			}
			synctest.Test(t, func(t *testing.T) {
				ctls, stls := testTLS(t)
				sc, cc := newMemConnPair()
				sc.latency, cc.latency = tc.oneWay, tc.oneWay
				clientT, serverT := &Transport{Conn: cc}, &Transport{Conn: sc}
				defer sc.Close()
				defer cc.Close()
				l, err := serverT.Listen(stls, nil)
				if err != nil {
					t.Fatal(err)
				}
				var clients, servers []*Conn
				for range 4 {
					c, err := clientT.Dial(context.Background(), sc.LocalAddr(), ctls, nil)
					if err != nil {
						t.Fatal(err)
					}
					s, err := l.Accept(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					clients, servers = append(clients, c), append(servers, s)
				}
				time.Sleep(5 * time.Second) // the handshakes confirmed, the RTT sampled
				pto := 3 * clients[0].Stats().SmoothedRTT
				start := time.Now()
				clientT.Close()
				took := time.Since(start)
				t.Logf("client Transport.Close took %v (smoothed RTT %v)", took, pto/3)
				if bound := closeLinger + time.Second; took > bound {
					t.Errorf("client Transport.Close took %v, bound %v", took, bound)
				}
				for i, s := range servers {
					select {
					case <-s.Context().Done():
					default:
						t.Fatalf("server connection %d did not get the client's CONNECTION_CLOSE", i)
					}
					var ae *ApplicationError
					if err := context.Cause(s.Context()); !errors.As(err, &ae) || !ae.Remote {
						t.Errorf("server connection %d: %v", i, err)
					}
				}
				start = time.Now()
				serverT.Close() // its connections are draining: nothing to answer
				if took := time.Since(start); took > time.Second {
					t.Errorf("server Transport.Close took %v with only draining connections", took)
				}
			})
		})
	}
}

// A datagram the read loop routed to a connection that handed its IDs to
// its closed-connection record meanwhile (the lookup came first) is
// answered by the record, as the next lookup would be, and not counted as
// dropped for a full queue.
func TestDatagramDuringHandOverGoesToRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newConnPair(t, connPairOpts{Mem: true, NoDial: true})
		defer m.closeAfter(time.Second, time.Second)
		client, server := m.dial(t, nil)
		server.CloseWithError(0, "bye")
		synctest.Wait() // closing: handed over to the record
		var cid wire.ConnectionID
		server.state.localIDs.each(func(id ConnectionID) { cid = id })
		r := m.serverT.ep.routes.get(cid)
		if r.closed == nil {
			t.Fatal("the closed connection's IDs do not route to its record")
		}
		before := r.closed.received.Load()
		// What the read loop does with a connection it looked up before
		// the hand-over; a refusal counts as a full-queue drop (route).
		if !server.enqueue(inboundDatagram{data: make([]byte, 1200)}) {
			t.Error("the datagram was refused, as if the queue were full")
		}
		if got := r.closed.received.Load(); got != before+1 {
			t.Errorf("record received %d datagrams, want %d", got, before+1)
		}
		_ = client
	})
}

// Close of a Transport never used leaves the application's socket as it
// was: no read deadline set in the past, and it still reads.
func TestTransportUnusedCloseLeavesSocket(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	tr := &Transport{Conn: pc}
	tr.Close()
	if _, err := tr.Listen(nil, nil); !errors.Is(err, ErrTransportClosed) {
		t.Fatalf("Listen after Close: %v", err)
	}
	other, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.WriteTo([]byte("x"), pc.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10) // no deadline of ours: a past one fails at once
	if n, _, err := pc.ReadFrom(buf); err != nil || string(buf[:n]) != "x" {
		t.Fatalf("the socket of an unused Transport after Close: %q, %v", buf[:n], err)
	}
}
