package interop

// The three implementations as servers and clients of the interop cases
// (cases_test.go): hq-interop (internal/hq) over each stack, with the
// options the cases need.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/congestion"
	hq "github.com/quicstack/quic/internal/hqfiles"
	"github.com/quicstack/quic/wire"
	xquic "golang.org/x/net/quic"
)

// Implementation names, as they appear in the matrix.
const (
	implOurs   = "ours"
	implQuicGo = "quic-go"
	implXNet   = "x/net"
)

// serverOpts are what a case asks of a server.
type serverOpts struct {
	retry      bool  // validate every client address with Retry
	allow0RTT  bool  // accept 0-RTT
	maxStreams int64 // incoming bidirectional streams (0: the case default of 1000)
	ipv6       bool
	v2         bool // prefer QUIC v2 (compatible version negotiation)
	idle       time.Duration
	handshake  time.Duration                // handshake idle timeout (0: the default)
	cc         congestion.ControllerFactory // ours only (nil: the default, Cubic)
	keyUpdate  uint64                       // ours only: Config.KeyUpdateInterval
	preferred  bool                         // ours only: offer a preferred address (a second socket)
	trace      bool                         // ours only: record the connections' frames (ourObs)
}

// clientOpts are what a case asks of a client.
type clientOpts struct {
	smallWindows bool // small initial flow-control windows (transfer)
	early        bool // send requests in 0-RTT when a session allows
	ipv6         bool
	v2           bool // offer QUIC v2 besides v1
	idle         time.Duration
	handshake    time.Duration // handshake timeout
	keyUpdate    uint64        // ours only: Config.KeyUpdateInterval
	trace        bool          // ours only: record the connections' frames (ourObs)
}

// hqServer is a running hq-interop server.
type hqServer struct {
	addr     *net.UDPAddr
	rec      *qlogRecorder // quic-go's events, nil for the others
	accepted atomic.Int32
	ours     ourConns     // our connections accepted
	obs      *ourObs      // their frames, with serverOpts.trace
	pref     *net.UDPAddr // the preferred address, with serverOpts.preferred
}

func listenUDP(t *testing.T, ipv6 bool) *net.UDPConn {
	t.Helper()
	ip := net.IPv4(127, 0, 0, 1)
	if ipv6 {
		ip = net.IPv6loopback
	}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	return udp
}

// startHQServer starts impl's hq-interop server for files.
func startHQServer(t *testing.T, ctx context.Context, impl string, stls *tls.Config, o serverOpts, files hq.Files) *hqServer {
	t.Helper()
	if o.maxStreams == 0 {
		o.maxStreams = 1000
	}
	if o.idle == 0 {
		o.idle = 30 * time.Second
	}
	udp := listenUDP(t, o.ipv6)
	s := &hqServer{addr: udp.LocalAddr().(*net.UDPAddr)}
	serve := func(c hq.Conn) {
		s.accepted.Add(1)
		go hq.Serve(ctx, c, files)
	}
	switch impl {
	case implOurs:
		tr := &ours.Transport{Conn: udp}
		if o.retry {
			tr.RequireAddressValidation = func(net.Addr) bool { return true }
		}
		t.Cleanup(func() { tr.Close() })
		conf := &ours.Config{MaxIncomingStreams: o.maxStreams, Allow0RTT: o.allow0RTT, MaxIdleTimeout: o.idle, HandshakeIdleTimeout: o.handshake, Congestion: o.cc,
			KeyUpdateInterval: o.keyUpdate, MaxPacketSize: keyUpdateMaxPacket(o.keyUpdate)}
		if o.trace {
			s.obs = &ourObs{}
			conf.Tracer = s.obs.tracer
		}
		if o.v2 {
			conf.Versions = []wire.Version{wire.Version2, wire.Version1}
		} else {
			conf.Versions = []wire.Version{wire.Version1}
		}
		var l *ours.Listener
		var err error
		if o.allow0RTT {
			l, err = tr.ListenEarly(stls, conf)
		} else {
			l, err = tr.Listen(stls, conf)
		}
		if err != nil {
			t.Fatal(err)
		}
		if o.preferred {
			pt := &ours.Transport{Conn: listenUDP(t, o.ipv6)}
			t.Cleanup(func() { pt.Close() })
			var err error
			if o.ipv6 {
				err = l.SetPreferredAddress(nil, pt)
			} else {
				err = l.SetPreferredAddress(pt, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			s.pref = pt.Conn.LocalAddr().(*net.UDPAddr)
		}
		go func() {
			for {
				c, err := l.Accept(ctx)
				if err != nil {
					return
				}
				s.ours.add(c)
				serve(hq.Ours(c))
			}
		}()
	case implQuicGo:
		s.rec = &qlogRecorder{}
		tr := &quicgo.Transport{Conn: udp}
		if o.retry {
			tr.VerifySourceAddress = func(net.Addr) bool { return true }
		}
		t.Cleanup(func() { tr.Close() })
		conf := &quicgo.Config{MaxIncomingStreams: o.maxStreams, Allow0RTT: o.allow0RTT, MaxIdleTimeout: o.idle, HandshakeIdleTimeout: o.handshake, Tracer: s.rec.tracer()}
		if o.v2 {
			conf.Versions = []quicgo.Version{quicgo.Version2, quicgo.Version1}
		}
		l, err := tr.ListenEarly(stls, conf)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept(ctx)
				if err != nil {
					return
				}
				serve(hqQuicGo{c})
			}
		}()
	case implXNet:
		e, err := xquic.NewEndpoint(udp, &xquic.Config{TLSConfig: stls, RequireAddressValidation: o.retry,
			MaxBidiRemoteStreams: o.maxStreams, MaxIdleTimeout: o.idle, HandshakeTimeout: o.handshake})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			e.Close(cctx)
		})
		go func() {
			for {
				c, err := e.Accept(ctx)
				if err != nil {
					return
				}
				serve(hqXNet{c, true})
			}
		}()
	default:
		t.Fatalf("unknown implementation %q", impl)
	}
	return s
}

// connInfo is what a client learned about one connection.
type connInfo struct {
	didResume, used0RTT bool
	version             string
}

// hqClient dials hq-interop connections.
type hqClient struct {
	dial func(ctx context.Context, addr *net.UDPAddr, early bool) (hq.Conn, func() connInfo, func(), error)
	rec  *qlogRecorder // quic-go's events, nil for the others
	ours ourConns      // our connections dialed
	obs  *ourObs       // their frames, with clientOpts.trace
}

// newHQClient returns impl's client. All its connections share one
// socket, as an interop runner client does.
func newHQClient(t *testing.T, impl string, ctls *tls.Config, o clientOpts) *hqClient {
	t.Helper()
	if o.idle == 0 {
		o.idle = 30 * time.Second
	}
	if o.handshake == 0 {
		o.handshake = 10 * time.Second
	}
	const smallStream, smallConn = 16 << 10, 32 << 10
	switch impl {
	case implOurs:
		tr := &ours.Transport{Conn: listenUDP(t, o.ipv6)}
		t.Cleanup(func() { tr.Close() })
		conf := &ours.Config{MaxIdleTimeout: o.idle, HandshakeIdleTimeout: o.handshake, Versions: []wire.Version{wire.Version1},
			KeyUpdateInterval: o.keyUpdate, MaxPacketSize: keyUpdateMaxPacket(o.keyUpdate)}
		hc := &hqClient{}
		if o.trace {
			hc.obs = &ourObs{}
			conf.Tracer = hc.obs.tracer
		}
		if o.v2 {
			conf.Versions = []wire.Version{wire.Version1, wire.Version2}
		}
		if o.smallWindows {
			conf.InitialStreamReceiveWindow, conf.InitialConnectionReceiveWindow = smallStream, smallConn
		}
		hc.dial = func(ctx context.Context, addr *net.UDPAddr, early bool) (hq.Conn, func() connInfo, func(), error) {
			var c *ours.Conn
			var err error
			if early && o.early {
				c, err = tr.DialEarly(ctx, addr, ctls, conf)
			} else {
				c, err = tr.Dial(ctx, addr, ctls, conf)
			}
			if err != nil {
				return nil, nil, nil, err
			}
			hc.ours.add(c)
			info := func() connInfo {
				<-c.HandshakeComplete()
				st := c.ConnectionState()
				return connInfo{st.TLS.DidResume, st.Used0RTT, st.Version.String()}
			}
			return hq.Ours(c), info, func() { c.CloseWithError(0, "") }, nil
		}
		return hc
	case implQuicGo:
		rec := &qlogRecorder{}
		tr := &quicgo.Transport{Conn: listenUDP(t, o.ipv6)}
		t.Cleanup(func() { tr.Close() })
		conf := &quicgo.Config{MaxIdleTimeout: o.idle, HandshakeIdleTimeout: o.handshake, Tracer: rec.tracer(),
			Versions: []quicgo.Version{quicgo.Version1}}
		if o.v2 {
			conf.Versions = []quicgo.Version{quicgo.Version1, quicgo.Version2}
		}
		if o.smallWindows {
			conf.InitialStreamReceiveWindow, conf.InitialConnectionReceiveWindow = smallStream, smallConn
		}
		return &hqClient{rec: rec, dial: func(ctx context.Context, addr *net.UDPAddr, early bool) (hq.Conn, func() connInfo, func(), error) {
			var c *quicgo.Conn
			var err error
			if early && o.early {
				c, err = tr.DialEarly(ctx, addr, ctls, conf)
			} else {
				c, err = tr.Dial(ctx, addr, ctls, conf)
			}
			if err != nil {
				return nil, nil, nil, err
			}
			info := func() connInfo {
				<-c.HandshakeComplete()
				st := c.ConnectionState()
				return connInfo{st.TLS.DidResume, st.Used0RTT, st.Version.String()}
			}
			return hqQuicGo{c}, info, func() { c.CloseWithError(0, "") }, nil
		}}
	case implXNet:
		host := "127.0.0.1:0"
		if o.ipv6 {
			host = "[::1]:0"
		}
		e, err := xquic.Listen("udp", host, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			e.Close(cctx)
		})
		conf := &xquic.Config{TLSConfig: ctls, MaxIdleTimeout: o.idle, HandshakeTimeout: o.handshake}
		if o.smallWindows {
			conf.MaxStreamReadBufferSize, conf.MaxConnReadBufferSize = smallStream, smallConn
		}
		return &hqClient{dial: func(ctx context.Context, addr *net.UDPAddr, early bool) (hq.Conn, func() connInfo, func(), error) {
			c, err := e.Dial(ctx, "udp", addr.String(), conf)
			if err != nil {
				return nil, nil, nil, err
			}
			info := func() connInfo { return connInfo{didResume: c.ConnectionState().DidResume, version: "v1"} }
			return hqXNet{c, false}, info, func() { c.Close() }, nil
		}}
	}
	t.Fatalf("unknown implementation %q", impl)
	return nil
}

// --- hq.Conn adapters of the peers ---

type hqQuicGo struct{ c *quicgo.Conn }

func (q hqQuicGo) OpenStream(ctx context.Context) (hq.Stream, error) {
	s, err := q.c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return quicGoStream{s}, nil
}

func (q hqQuicGo) AcceptStream(ctx context.Context) (hq.Stream, error) {
	s, err := q.c.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return quicGoStream{s}, nil
}

type hqXNet struct {
	c      *xquic.Conn
	server bool
}

// xServerStream closes the read side with the write side: x/net/quic
// counts a peer's stream as done, and raises MAX_STREAMS, only then.
type xServerStream struct{ xStream }

func (s xServerStream) CloseWrite() error {
	err := s.Stream.CloseWrite()
	s.Stream.CloseRead()
	return err
}

func (x hqXNet) wrap(s *xquic.Stream) hq.Stream {
	if x.server {
		return xServerStream{xStream{s}}
	}
	return xStream{s}
}

func (x hqXNet) OpenStream(ctx context.Context) (hq.Stream, error) {
	s, err := x.c.NewStream(ctx)
	if err != nil {
		return nil, err
	}
	return x.wrap(s), nil
}

func (x hqXNet) AcceptStream(ctx context.Context) (hq.Stream, error) {
	s, err := x.c.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return x.wrap(s), nil
}

var errUnknownImpl = errors.New("unknown implementation")

func implError(impl string) error { return fmt.Errorf("%w %q", errUnknownImpl, impl) }

func init() {
	// quic-go warns that a wrapped or small socket's buffers cannot be
	// set; the parallel cases cannot use t.Setenv.
	os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
}

// keyUpdateMaxPacket is our endpoints' MaxPacketSize in the keyupdate
// case: packets of the runner's Ethernet network, which the relay on
// loopback does not impose (our endpoints would find 64 KB packets, too
// few in the case's transfer for an update every caseKeyUpdateInterval).
func keyUpdateMaxPacket(keyUpdate uint64) int {
	if keyUpdate > 0 {
		return 1452
	}
	return 0
}
