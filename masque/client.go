package masque

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
)

// A Client opens UDP tunnels through a UDP proxy (RFC 9298). Its
// zero value is not usable: Template must be set. Multiple goroutines may
// invoke methods on a Client simultaneously; tunnels to the same proxy
// share one HTTP/3 connection.
type Client struct {
	// Template is the proxy's URI Template, absolute, with the
	// variables target_host and target_port (RFC 9298, Section 2), such
	// as "https://proxy.example:443/.well-known/masque/udp/{target_host}/{target_port}/".
	Template string
	// Header holds header fields sent with each request, such as
	// credentials for the proxy's Authenticate.
	Header http.Header
	// TLSClientConfig and QUICConfig configure the connection to the
	// proxy, as for http3.Transport; datagrams are enabled on a copy of
	// QUICConfig, and its InitialPacketSize is TunnelPacketSize unless it
	// sets one.
	TLSClientConfig *tls.Config
	QUICConfig      *quic.Config
	// Dial, if not nil, makes the QUIC connection to the proxy (see
	// http3.Transport.Dial).
	Dial func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error)

	once sync.Once
	tr   *http3.Transport
	tmpl *template
	terr error
}

func (c *Client) init() {
	c.once.Do(func() {
		c.tmpl, c.terr = parseTemplate(c.Template)
		if c.terr == nil && c.tmpl.prefix == "" {
			c.terr = errTemplate // a client needs scheme and authority
		}
		c.tr = &http3.Transport{TLSClientConfig: c.TLSClientConfig, QUICConfig: tunnelConfig(c.QUICConfig), EnableDatagrams: true, Dial: c.Dial}
	})
}

// Close closes the Client's connection to the proxy, ending its tunnels.
func (c *Client) Close() error {
	c.init()
	return c.tr.Close()
}

// A ProxyError is the proxy's refusal of a tunnel: its response's status
// and Proxy-Status header field (RFC 9209).
type ProxyError struct {
	StatusCode  int
	ProxyStatus string
}

func (e *ProxyError) Error() string {
	if e.ProxyStatus != "" {
		return fmt.Sprintf("masque: the proxy answered %d (%s)", e.StatusCode, e.ProxyStatus)
	}
	return fmt.Sprintf("masque: the proxy answered %d", e.StatusCode)
}

// DialUDP opens a tunnel to target ("host:port"; an IPv6 host in
// brackets) through the proxy and returns it as a connected
// net.PacketConn: what it writes goes to target, whatever address WriteTo
// is given, and what it reads comes from there. ctx bounds the
// connection and the request, not the tunnel. A refusal is a
// *ProxyError.
//
// A quic.Transport can run on the returned Conn, to reach a QUIC server
// through the proxy. Payloads travel in QUIC DATAGRAM frames of the
// connection to the proxy, so the inner connection's packets must fit in
// one: its InitialPacketSize should be 1200, and path MTU discovery
// finds what fits.
func (c *Client) DialUDP(ctx context.Context, target string) (*Conn, error) {
	c.init()
	if c.terr != nil {
		return nil, c.terr
	}
	host, ps, err := net.SplitHostPort(target)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || port == 0 || host == "" {
		return nil, fmt.Errorf("masque: invalid target %q", target)
	}
	u, err := url.Parse(c.tmpl.expand(host, uint16(port)))
	if err != nil {
		return nil, err
	}
	hdr := make(http.Header)
	for k, v := range c.Header {
		hdr[k] = append([]string(nil), v...)
	}
	hdr[":protocol"] = []string{"connect-udp"}
	hdr.Set("Capsule-Protocol", "?1")
	// Cancelling a request's context resets its stream: the tunnel
	// outlives ctx.
	reqCtx, cancelReq := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancelReq)
	defer stop()
	req := (&http.Request{Method: http.MethodConnect, URL: u, Host: u.Host, Header: hdr}).WithContext(reqCtx)
	resp, str, err := c.tr.OpenRequestStream(req)
	if err != nil {
		cancelReq()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if !stop() {
		str.Close()
		return nil, ctx.Err()
	}
	// "Any response other than a successful response indicates that the
	// request has failed; thus, the client MUST abort the request."
	// (Section 3.1)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		str.CancelRead(http3.ErrCodeRequestCancelled)
		str.CancelWrite(http3.ErrCodeRequestCancelled)
		return nil, &ProxyError{StatusCode: resp.StatusCode, ProxyStatus: resp.Header.Get("Proxy-Status")}
	}
	var raddr net.Addr = &Addr{Host: host, Port: uint16(port)}
	if a, err := netip.ParseAddr(host); err == nil {
		raddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(a, uint16(port)))
	}
	return newConn(str, raddr), nil
}

// An Addr is a target named by host name, as a Conn's RemoteAddr when
// the target was not given as an IP address.
type Addr struct {
	Host string
	Port uint16
}

// Network returns "udp".
func (a *Addr) Network() string { return "udp" }

func (a *Addr) String() string { return net.JoinHostPort(a.Host, strconv.Itoa(int(a.Port))) }

// maxQueued and maxQueuedBytes bound the payloads a Conn holds for
// ReadFrom; more are dropped, as a full socket buffer does.
const (
	maxQueued      = 256
	maxQueuedBytes = 1 << 20
)

// A Conn is a UDP tunnel through a proxy, as a net.PacketConn connected
// to its target. Payloads go in HTTP Datagrams, or in DATAGRAM capsules
// if the connection to the proxy has no HTTP/3 datagrams. Multiple
// goroutines may invoke methods on a Conn simultaneously.
type Conn struct {
	str   *http3.RequestStream
	raddr net.Addr

	in     chan []byte
	queued atomic.Int64 // bytes in in
	closed chan struct{}
	once   sync.Once
	err    error // why it closed, set before closed is

	wmu sync.Mutex // orders capsule writes

	dmu           sync.Mutex
	readDeadline  time.Time
	deadlineMoved chan struct{}
}

func newConn(str *http3.RequestStream, raddr net.Addr) *Conn {
	c := &Conn{str: str, raddr: raddr, in: make(chan []byte, maxQueued), closed: make(chan struct{}), deadlineMoved: make(chan struct{})}
	go c.readDatagrams()
	go c.readCapsules()
	return c
}

// push queues a received HTTP Datagram payload's UDP payload.
func (c *Conn) push(d []byte) {
	id, payload, ok := parsePayload(d)
	if !ok || id != contextIDUDP {
		return
	}
	if len(payload) > maxUDPPayload {
		c.abort(errors.New("masque: UDP payload longer than 65527 bytes"))
		return
	}
	if c.queued.Add(int64(len(payload))) > maxQueuedBytes {
		c.queued.Add(-int64(len(payload)))
		return
	}
	select {
	case c.in <- payload:
	default:
		c.queued.Add(-int64(len(payload)))
	}
}

// pop takes a payload from in off the queued bytes.
func (c *Conn) pop(p, d []byte) int {
	c.queued.Add(-int64(len(d)))
	return copy(p, d)
}

func (c *Conn) readDatagrams() {
	ctx := c.str.Context()
	for {
		d, err := c.str.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		c.push(d)
	}
}

func (c *Conn) readCapsules() {
	for {
		cp, err := c.str.ReadCapsule(1 + 8 + maxUDPPayload)
		if err != nil {
			c.shut(err)
			return
		}
		if cp.Type == capsuleDatagram {
			c.push(cp.Value)
		}
	}
}

// abort resets the tunnel's stream: "An endpoint that receives an HTTP
// Datagram using Context ID zero whose UDP Proxying Payload field is
// longer than 65527 MUST abort the corresponding stream." (RFC 9298,
// Section 5)
func (c *Conn) abort(err error) {
	c.str.CancelRead(http3.ErrCodeMessageError)
	c.str.CancelWrite(http3.ErrCodeMessageError)
	c.shut(err)
}

// shut marks the Conn closed with err.
func (c *Conn) shut(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.closed)
	})
}

// ReadFrom reads the next payload from the target. It returns
// os.ErrDeadlineExceeded after the read deadline, and an error once the
// tunnel ended; a payload longer than p is cut.
func (c *Conn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		c.dmu.Lock()
		deadline, moved := c.readDeadline, c.deadlineMoved
		c.dmu.Unlock()
		var timeout <-chan time.Time
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return 0, nil, os.ErrDeadlineExceeded
			}
			t := time.NewTimer(d)
			timeout = t.C
			defer t.Stop()
		}
		select {
		case d := <-c.in:
			return c.pop(p, d), c.raddr, nil
		case <-c.closed:
			select {
			case d := <-c.in:
				return c.pop(p, d), c.raddr, nil
			default:
			}
			return 0, nil, c.closedErr()
		case <-timeout:
			return 0, nil, os.ErrDeadlineExceeded
		case <-moved:
		}
	}
}

func (c *Conn) closedErr() error {
	if c.err == nil || c.err == errClosedConn || c.err == io.EOF {
		return net.ErrClosed
	}
	return c.err
}

var errClosedConn = errors.New("masque: closed")

// WriteTo sends p to the target, whatever addr is: the tunnel is
// connected. Payloads too large for a QUIC DATAGRAM frame are dropped, as
// an IP network drops them.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	select {
	case <-c.closed:
		return 0, c.closedErr()
	default:
	}
	if len(p) > maxUDPPayload {
		return 0, errors.New("masque: UDP payload longer than 65527 bytes")
	}
	b := appendUDP(make([]byte, 0, 1+len(p)), p)
	err := c.str.SendDatagram(b)
	if err == http3.ErrDatagramsNotSupported {
		c.wmu.Lock()
		err = c.str.WriteCapsule(capsuleDatagram, b)
		c.wmu.Unlock()
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close ends the tunnel: the request stream is closed.
func (c *Conn) Close() error {
	c.shut(errClosedConn)
	return c.str.Close()
}

// LocalAddr returns the local address of the connection to the proxy.
func (c *Conn) LocalAddr() net.Addr { return c.str.QUICConn().LocalAddr() }

// RemoteAddr returns the target.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// SetDeadline sets the read deadline; writes do not block.
func (c *Conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline sets the deadline for ReadFrom calls, current and
// future.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.dmu.Lock()
	c.readDeadline = t
	close(c.deadlineMoved)
	c.deadlineMoved = make(chan struct{})
	c.dmu.Unlock()
	return nil
}

// SetWriteDeadline does nothing: writes do not block.
func (c *Conn) SetWriteDeadline(t time.Time) error { return nil }

var _ net.PacketConn = (*Conn)(nil)
