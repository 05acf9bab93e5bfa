package masque

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
)

// DefaultIdleTimeout is the Proxy's IdleTimeout when it is zero: "UDP
// proxies that close sockets after a period of inactivity SHOULD NOT use
// a period lower than two minutes" (RFC 9298, Section 3.1).
const DefaultIdleTimeout = 2 * time.Minute

// DefaultMaxTunnels is the Proxy's MaxTunnels when it is zero.
const DefaultMaxTunnels = 4096

// A Proxy is a UDP proxy (RFC 9298): an http.Handler for an http3.Server
// that answers extended CONNECT requests with the "connect-udp" upgrade
// token, opens a UDP socket to the target the request's URI names, and
// relays UDP payloads between it and the request stream, in HTTP
// Datagrams with Context ID 0, or in DATAGRAM capsules when the
// connection has no HTTP/3 datagrams. ConfigureServer sets the server up
// for it. Multiple goroutines may invoke methods on a Proxy
// simultaneously.
//
// What each tunnel holds is bounded: one socket, a 64 KiB receive buffer,
// and the datagrams queued by package http3 (64 at most); a payload that
// cannot be forwarded at once is dropped, as UDP does.
type Proxy struct {
	// Template is the URI Template whose target_host and target_port
	// variables name the target, its path and query only (the request's
	// authority is not checked); empty means DefaultTemplate. Invalid
	// templates fail every request with 500.
	Template string
	// Authenticate, if not nil, checks a request before anything else:
	// an error refuses it with 407 (Proxy Authentication Required).
	// "HTTP servers that support UDP proxying ought to restrict its use to
	// authenticated users" (RFC 9298, Section 7).
	Authenticate func(r *http.Request) error
	// Policy decides whether a request may reach a target, once its name
	// is resolved; an error refuses it with 403. nil means
	// DefaultPolicy, which refuses loopback, private, link-local,
	// multicast and broadcast addresses and the proxy's own.
	Policy func(r *http.Request, target netip.AddrPort) error
	// Resolver resolves target names; nil means net.DefaultResolver.
	// "if the "target_host" is a DNS name, the UDP proxy MUST perform DNS
	// resolution before replying to the HTTP request" (Section 3.1).
	Resolver *net.Resolver
	// IdleTimeout closes a tunnel, its socket and its request stream,
	// after this long without a payload in either direction. Zero means
	// DefaultIdleTimeout; negative, no limit.
	IdleTimeout time.Duration
	// MaxTunnels bounds the tunnels open at once, over all connections:
	// each holds a socket (a file descriptor). A request beyond it is
	// refused with 503 (Service Unavailable) and Proxy-Status
	// connection_limit_reached (RFC 9209, Section 2.3.12). Zero means
	// DefaultMaxTunnels; negative, no limit.
	MaxTunnels int

	tunnels atomic.Int64 // open now

	once sync.Once
	tmpl *template
	terr error
}

// ConfigureServer enables on srv what the proxy needs: extended CONNECT
// (RFC 9220) and HTTP/3 datagrams (RFC 9297), with QUIC datagrams, and
// an InitialPacketSize of TunnelPacketSize unless one is set.
func ConfigureServer(srv *http3.Server) {
	srv.EnableExtendedConnect = true
	srv.EnableDatagrams = true
	srv.QUICConfig = tunnelConfig(srv.QUICConfig)
}

// TunnelPacketSize is the InitialPacketSize of the QUIC connections
// between clients and proxies when their configuration sets none: large
// enough that a tunneled QUIC packet of 1200 bytes, the least QUIC
// allows, fits in one QUIC DATAGRAM frame from the start, before path MTU
// discovery finds what the path carries (masque-go uses the same size).
const TunnelPacketSize = 1350

// tunnelConfig returns a copy of c with datagrams enabled and, unless c
// sets one, an InitialPacketSize of TunnelPacketSize.
func tunnelConfig(c *quic.Config) *quic.Config {
	qc := &quic.Config{}
	if c != nil {
		*qc = *c
	}
	qc.EnableDatagrams = true
	if qc.InitialPacketSize == 0 {
		qc.InitialPacketSize = TunnelPacketSize
	}
	return qc
}

func (p *Proxy) template() (*template, error) {
	p.once.Do(func() {
		s := p.Template
		if s == "" {
			s = DefaultTemplate
		}
		p.tmpl, p.terr = parseTemplate(s)
	})
	return p.tmpl, p.terr
}

// proxyStatus sets the Proxy-Status header field of a refusal (RFC 9209).
func proxyStatus(w http.ResponseWriter, errType string) {
	w.Header().Set("Proxy-Status", "quicstack; error="+errType)
}

// ServeHTTP serves a UDP proxying request (RFC 9298, Section 3.4): 400
// (Bad Request) for a request that is not one or names no valid target,
// 407 if Authenticate refuses it, 502 (Bad Gateway) if the target's name
// does not resolve or no socket can be opened, 403 (Forbidden) if the
// policy refuses the target, and otherwise 200 with "Capsule-Protocol:
// ?1", after which it relays until the stream ends, the tunnel is idle
// for IdleTimeout, or the connection closes.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect || r.Header.Get(":protocol") != "connect-udp" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	streamer, ok := w.(http3.HTTPStreamer)
	if !ok {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if p.Authenticate != nil {
		if err := p.Authenticate(r); err != nil {
			w.WriteHeader(http.StatusProxyAuthRequired)
			return
		}
	}
	t, err := p.template()
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	host, port, ok := t.match(r.URL)
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	addr, err := p.resolve(r.Context(), host)
	if err != nil {
		proxyStatus(w, "dns_error")
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	target := netip.AddrPortFrom(addr, port)
	policy := p.Policy
	if policy == nil {
		policy = DefaultPolicy
	}
	if err := policy(r, target); err != nil {
		proxyStatus(w, "destination_ip_prohibited")
		w.WriteHeader(http.StatusForbidden)
		return
	}
	if !p.reserveTunnel() {
		proxyStatus(w, "connection_limit_reached")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	// "UDP proxies can use connected UDP sockets ... that allows the UDP
	// proxy to rely on the kernel to only send it UDP packets that match
	// the correct 5-tuple." (Section 3.1)
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(target))
	if err != nil {
		p.tunnels.Add(-1)
		proxyStatus(w, "destination_unavailable")
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	setDontFragment(conn, !target.Addr().Is4())
	w.Header().Set("Capsule-Protocol", "?1")
	str := streamer.HTTPStream()
	idle := p.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	go func() {
		defer p.tunnels.Add(-1)
		relay(str, conn, idle)
	}()
}

// reserveTunnel counts a new tunnel, false if MaxTunnels are open.
func (p *Proxy) reserveTunnel() bool {
	limit := int64(p.MaxTunnels)
	if limit == 0 {
		limit = DefaultMaxTunnels
	}
	if n := p.tunnels.Add(1); limit > 0 && n > limit {
		p.tunnels.Add(-1)
		return false
	}
	return true
}

// resolve returns the address of host: the literal, or the first address
// its name resolves to.
func (p *Proxy) resolve(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	res := p.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(addrs) == 0 {
		return netip.Addr{}, errors.New("masque: no address for " + strconv.Quote(host))
	}
	return addrs[0].Unmap(), nil
}

// tunnel is one UDP proxying request stream and its socket.
type tunnel struct {
	str  *http3.RequestStream
	conn *net.UDPConn
	last atomic.Int64 // unix nanoseconds of the last payload either way

	closeOnce sync.Once
	wmu       sync.Mutex // orders capsule writes
}

// relay runs a tunnel until the stream or the socket ends, or it is idle
// for idle: "The lifetime of the socket is tied to the request stream.
// The UDP proxy MUST keep the socket open while the request stream is
// open. ... UDP proxies MAY choose to close sockets due to a period of
// inactivity, but they MUST close the request stream when closing the
// socket." (Section 3.1)
func relay(str *http3.RequestStream, conn *net.UDPConn, idle time.Duration) {
	t := &tunnel{str: str, conn: conn}
	t.touch()
	go t.fromTarget()
	go t.fromDatagrams()
	if idle > 0 {
		go t.watchIdle(idle)
	}
	t.fromCapsules()
	t.close(false)
}

func (t *tunnel) touch() { t.last.Store(time.Now().UnixNano()) }

// close ends the tunnel: the socket, and the request stream, gracefully
// (FIN) or, abort, with H3_MESSAGE_ERROR.
func (t *tunnel) close(abort bool) {
	t.closeOnce.Do(func() {
		t.conn.Close()
		if abort {
			t.str.CancelRead(http3.ErrCodeMessageError)
			t.str.CancelWrite(http3.ErrCodeMessageError)
			return
		}
		t.str.Close()
	})
}

// watchIdle closes the tunnel once it is idle for d.
func (t *tunnel) watchIdle(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-t.str.Context().Done():
			return
		case <-timer.C:
		}
		since := time.Since(time.Unix(0, t.last.Load()))
		if since >= d {
			t.close(false)
			return
		}
		timer.Reset(d - since)
	}
}

// fromTarget forwards the target's packets to the client, in HTTP
// Datagrams, or in DATAGRAM capsules where the connection has none.
func (t *tunnel) fromTarget() {
	buf := make([]byte, 1+maxUDPPayload+1)
	for {
		n, err := t.conn.Read(buf[1:])
		if err != nil {
			// "If a UDP proxy is notified by its operating system that
			// its socket is no longer usable, it MUST close the request
			// stream." (Section 3.1) A closed socket ends here too.
			t.close(false)
			return
		}
		if n > maxUDPPayload {
			continue
		}
		t.touch()
		buf[0] = contextIDUDP
		err = t.str.SendDatagram(buf[:1+n])
		if err == http3.ErrDatagramsNotSupported {
			t.wmu.Lock()
			err = t.str.WriteCapsule(capsuleDatagram, buf[:1+n])
			t.wmu.Unlock()
			if err != nil {
				t.close(false)
				return
			}
		}
		// A payload too large for a QUIC DATAGRAM frame is dropped: "the
		// UDP proxy SHOULD NOT send the UDP payload in a DATAGRAM capsule"
		// (Section 6.1).
	}
}

// fromDatagrams forwards the client's HTTP Datagrams to the target.
func (t *tunnel) fromDatagrams() {
	ctx := t.str.Context()
	for {
		d, err := t.str.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		if !t.forward(d) {
			return
		}
	}
}

// fromCapsules reads the client's capsules until the stream ends,
// forwarding DATAGRAM capsules to the target; others are dropped ("MUST
// silently drop", RFC 9297, Section 3.2).
func (t *tunnel) fromCapsules() {
	for {
		c, err := t.str.ReadCapsule(1 + 8 + maxUDPPayload)
		if err != nil {
			return // a malformed capsule reset the stream
		}
		if c.Type == capsuleDatagram && !t.forward(c.Value) {
			return
		}
	}
}

// forward sends an HTTP Datagram's UDP payload to the target; false if
// the stream was aborted. Unknown Context IDs are dropped: "the receiver
// SHALL either drop that datagram silently or buffer it temporarily"
// (Section 5).
func (t *tunnel) forward(d []byte) bool {
	id, payload, ok := parsePayload(d)
	if !ok || id != contextIDUDP {
		return true
	}
	if len(payload) > maxUDPPayload {
		t.close(true)
		return false
	}
	t.touch()
	// "UDP proxies MUST NOT introduce fragmentation at the IP layer ...
	// overly large datagrams are silently dropped" (Section 3.1): a send
	// the socket refuses is dropped.
	t.conn.Write(payload)
	return true
}
