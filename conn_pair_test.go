package quic

import (
	"cmp"
	"context"
	"crypto/tls"
	"net"
	"runtime/pprof"
	"testing"
	"time"
)

// connPair is the package's one harness for tests that drive the public
// API (Transport, Listener, Conn, Stream) over a network: a client and a
// server Transport, the server listening, and one connection between
// them unless connPairOpts.NoDial. The network is two loopback UDP
// sockets, or with connPairOpts.Mem an in-memory memConn pair inside the
// caller's testing/synctest bubble. The deterministic simulator has its
// own, newSimPairOpts (sim_helpers_test.go); tests that exercise one
// socket or the netns links build those themselves.
type connPair struct {
	clientT, serverT *Transport
	listener         *Listener
	client, server   *Conn
	ctls, stls       *tls.Config
	mem, early       bool // mem: in a synctest bubble
	shut             bool
}

// connPairOpts configures newConnPair; the zero value is a default pair
// over loopback UDP.
type connPairOpts struct {
	// Client and Server configure each side's connections; Config
	// configures a side whose own is nil. Packet size (MaxPacketSize),
	// qlog and tracers (Tracer), 0-RTT (Allow0RTT) are Config fields.
	Client, Server, Config *Config
	// Mem runs the pair over a memConn pair with Latency each way
	// (memOneWayLatency if 0); newConnPair must then run inside a
	// synctest bubble, unless RealTime: then the memConns have no
	// latency and shutdown does not wait for the closing period.
	Mem      bool
	Latency  time.Duration
	RealTime bool
	// ServerConn, if set, wraps the server's socket (loss, counting).
	ServerConn func(net.PacketConn) net.PacketConn
	// Early listens with ListenEarly and dials with DialEarly.
	Early bool
	// Retry makes the server validate every client's address with a
	// Retry packet (Transport.RequireAddressValidation).
	Retry bool
	// TLS, if set, makes the TLS configs instead of testTLS (resumeTLS);
	// ClientTLS and ServerTLS, if set, change them (ALPN, session
	// caches).
	TLS                  func(testing.TB) (client, server *tls.Config)
	ClientTLS, ServerTLS func(*tls.Config)
	// ServerTransport, if set, changes the server Transport before it
	// listens (keys, token settings).
	ServerTransport func(*Transport)
	// NoDial leaves the pair without a connection: the test dials
	// (connPair.dial).
	NoDial bool
}

// newConnPair makes a pair as o says. Everything is closed at cleanup
// (connPair.shutdown), or earlier by shutdown or closeAfter.
func newConnPair(t testing.TB, o connPairOpts) *connPair {
	t.Helper()
	p := &connPair{mem: o.Mem && !o.RealTime, early: o.Early}
	if o.TLS == nil {
		o.TLS = testTLS
	}
	p.ctls, p.stls = o.TLS(t)
	if o.ClientTLS != nil {
		o.ClientTLS(p.ctls)
	}
	if o.ServerTLS != nil {
		o.ServerTLS(p.stls)
	}
	if o.Mem {
		sc, cc := newMemConnPair()
		if !o.RealTime {
			sc.latency, cc.latency = cmp.Or(o.Latency, memOneWayLatency), cmp.Or(o.Latency, memOneWayLatency)
		}
		p.clientT, p.serverT = &Transport{Conn: cc}, &Transport{Conn: sc}
	} else {
		p.clientT, p.serverT = &Transport{Conn: loopbackUDP(t)}, &Transport{Conn: loopbackUDP(t)}
	}
	if o.ServerConn != nil {
		p.serverT.Conn = o.ServerConn(p.serverT.Conn)
	}
	if o.Retry {
		p.serverT.RequireAddressValidation = func(net.Addr) bool { return true }
	}
	if o.ServerTransport != nil {
		o.ServerTransport(p.serverT)
	}
	t.Cleanup(p.shutdown)
	server := o.Server
	if server == nil {
		server = o.Config
	}
	var err error
	listen := p.serverT.Listen
	if o.Early {
		listen = p.serverT.ListenEarly
	}
	// Each side's goroutines (read loop, connection loop) carry a
	// profiler label, side=server or side=client, so that a CPU
	// profile of a benchmark splits by side (go tool pprof -tagfocus).
	// Goroutines inherit the labels of the one that starts them.
	defer pprof.SetGoroutineLabels(context.Background())
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("side", "server")))
	if p.listener, err = listen(p.stls, server); err != nil {
		t.Fatal(err)
	}
	if o.NoDial {
		return p
	}
	client := o.Client
	if client == nil {
		client = o.Config
	}
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("side", "client")))
	p.client, p.server = p.dial(t, client)
	return p
}

// loopbackUDP returns a UDP socket on 127.0.0.1.
func loopbackUDP(t testing.TB) *net.UDPConn {
	t.Helper()
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// dial connects a client with conf to the server (DialEarly with
// connPairOpts.Early) and returns both ends, within 10 seconds (of fake
// time with Mem).
func (p *connPair) dial(t testing.TB, conf *Config) (client, server *Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := p.clientT.Dial
	if p.early {
		dial = p.clientT.DialEarly
	}
	client, err := dial(ctx, p.serverT.Conn.LocalAddr(), p.ctls, conf)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if server, err = p.listener.Accept(ctx); err != nil {
		t.Fatalf("accept: %v", err)
	}
	return client, server
}

// shutdown closes both connections of the pair and, with Mem, lets them
// finish their closing period; then it closes the listener, both
// Transports and their sockets. With Mem, Transport.Close is called only
// once no connection is left: with a connection still open it
// busy-loops in fake time (see TestSynctestTransportCloseSpins in the
// report), which freezes the bubble's clock. Later calls do nothing.
func (p *connPair) shutdown() {
	if p.shut {
		return
	}
	for _, c := range []*Conn{p.client, p.server} {
		if c != nil {
			c.CloseWithError(0, "")
		}
	}
	if p.mem {
		time.Sleep(10 * time.Second) // > 3 PTO: closing and draining end
	}
	p.closeAfter(0, 0)
}

// closeAfter closes the listener, then each Transport once its closed
// connections are gone (after clientWait and serverWait), then the
// sockets. Later calls, and shutdown after it, do nothing.
func (p *connPair) closeAfter(clientWait, serverWait time.Duration) {
	if p.shut {
		return
	}
	p.shut = true
	if p.listener != nil {
		p.listener.Close()
	}
	time.Sleep(clientWait)
	p.clientT.Close()
	time.Sleep(serverWait)
	p.serverT.Close()
	p.clientT.Conn.Close()
	p.serverT.Conn.Close()
}
