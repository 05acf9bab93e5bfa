package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The TCP side of AutoTransport: net/http's Transport, whose TLS
// connections this file dials, so that a race can connect over TCP ahead
// of the request and hand the connection to net/http, and so that the
// transport knows whether an origin has a TCP connection already.

// predialTTL is how long a connection dialed for a race waits for
// net/http to take it before it is closed. The request that raced takes
// it at once; what is left (QUIC won the race) serves a request that
// falls back to TCP soon after. Servers give up on a connection that
// carries no request: Go's HTTP/2 server after 10 s without the preface,
// net/http's HTTP/1.1 server after its ReadHeaderTimeout, proxies after
// their handshake or request timeouts (often 5-10 s). 5 s keeps the
// connection well inside the common limits; a connection the server has
// closed anyway (shorter limits) is found out by take.
const predialTTL = 5 * time.Second

// tcpDialError wraps the error of a TCP or TLS connection that could not
// be made: the request was not sent.
type tcpDialError struct{ err error }

func (e *tcpDialError) Error() string { return e.err.Error() }
func (e *tcpDialError) Unwrap() error { return e.err }

// initTCP makes the net/http Transport.
func (t *AutoTransport) initTCP() {
	var tr *http.Transport
	if t.TCP != nil {
		tr = t.TCP.Clone()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	tc := t.TLSClientConfig
	if tc == nil {
		tc = tr.TLSClientConfig
	}
	if tc != nil {
		tc = tc.Clone()
	} else {
		tc = &tls.Config{}
	}
	h2 := !(tr.TLSNextProto != nil && len(tr.TLSNextProto) == 0) && (tr.Protocols == nil || tr.Protocols.HTTP2())
	if h2 {
		tc.NextProtos = []string{"h2", "http/1.1"}
	} else {
		tc.NextProtos = []string{"http/1.1"}
	}
	t.tcpTLS = tc
	tr.TLSClientConfig = tc
	if tr.DialTLSContext == nil && tr.DialTLS == nil {
		tr.DialTLSContext = t.dialTLS
		if h2 {
			tr.ForceAttemptHTTP2 = true
		}
	}
	t.tcp = tr
	t.pool.t = t
}

// viaTCP sends req over TCP and learns the response's Alt-Svc.
//
// A request that failed as the first on a connection dialed ahead for a
// race is sent once more (on a connection of its own, or the next one
// dialed ahead), when it can be: its body can be had again, and either
// none of it was written or it is idempotent. Such a connection waited
// unused in the pool, and the server may have given up on it just as it
// was taken (its limit for a connection without a request); net/http does
// not retry a request whose new connection fails, as it does for reused
// ones, and browsers count such an unused connection as reused for this
// decision.
func (t *AutoTransport) viaTCP(req *http.Request) (*http.Response, error) {
	var predialed, wrote atomic.Bool
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			predialed.Store(!info.Reused && wasPredialed(info.Conn))
		},
		WroteHeaders: func() { wrote.Store(true) },
	}
	resp, err := t.tcp.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil && predialed.Load() && req.Context().Err() == nil && (!wrote.Load() || idempotent(req)) {
		if again, rerr := replayable(req); rerr == nil {
			t.stats.tcpPredialRetries.Add(1)
			resp, err = t.tcp.RoundTrip(again)
		}
	}
	if err != nil {
		return nil, err
	}
	resp.Request = req
	if req.URL.Scheme == "https" {
		t.learn(originOf(req), resp)
	}
	return resp, nil
}

// dialTLS is the TCP transport's DialTLSContext: a connection dialed
// ahead by a race if one waits, a new one otherwise.
func (t *AutoTransport) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	if c := t.pool.take(addr); c != nil {
		return c, nil
	}
	c, err := t.dialTCP(ctx, network, addr)
	if err != nil {
		return nil, &tcpDialError{err}
	}
	return c, nil
}

// dialTCP connects to addr over TCP and completes the TLS handshake, the
// way net/http would (its DialContext and TLSHandshakeTimeout).
func (t *AutoTransport) dialTCP(ctx context.Context, network, addr string) (*tls.Conn, error) {
	t.stats.tcpDials.Add(1)
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	dial := t.tcp.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	raw, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := t.tcpTLS.Clone()
	if tc.ServerName == "" {
		tc.ServerName = host
	}
	c := tls.Client(t.pool.track(addr, raw), tc)
	hctx := ctx
	if d := t.tcp.TLSHandshakeTimeout; d > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	if err := c.HandshakeContext(hctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// tcpPool holds the TLS connections dialed ahead for races, and counts
// the TCP connections open to each address. Its methods may be called
// from any goroutine.
type tcpPool struct {
	t     *AutoTransport
	mu    sync.Mutex
	idle  map[string][]*tls.Conn    // dialed ahead, not taken yet
	live  map[string]int            // open connections per address
	dials map[string]*tcpPredial    // dials ahead in progress
	timer map[*tls.Conn]*time.Timer // expiry of idle ones
}

// tcpPredial is a dial ahead that racing requests wait for.
type tcpPredial struct {
	done chan struct{}
	err  error
}

// track counts c among addr's open connections until it closes.
func (p *tcpPool) track(addr string, c net.Conn) net.Conn {
	p.mu.Lock()
	if p.live == nil {
		p.live = make(map[string]int)
	}
	p.live[addr]++
	p.mu.Unlock()
	return &trackedConn{Conn: c, untrack: sync.OnceFunc(func() {
		p.mu.Lock()
		if p.live[addr]--; p.live[addr] <= 0 {
			delete(p.live, addr)
		}
		p.mu.Unlock()
	})}
}

// trackedConn is a TCP connection counted in tcpPool.live.
type trackedConn struct {
	net.Conn
	untrack   func()
	predialed bool // dialed ahead, taken from the pool; set before net/http has it
}

// wasPredialed reports whether c is a TLS connection that was dialed ahead
// for a race and taken from the pool.
func wasPredialed(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return false
	}
	tr, ok := tc.NetConn().(*trackedConn)
	return ok && tr.predialed
}

func (c *trackedConn) Close() error {
	c.untrack()
	return c.Conn.Close()
}

// ready returns a channel that receives nil once addr has a TCP
// connection (at once if it has one), or the error of the dial made for
// it. Concurrent callers share one dial; the dial goes on if ctx ends.
func (p *tcpPool) ready(ctx context.Context, addr string) <-chan error {
	ch := make(chan error, 1)
	p.mu.Lock()
	if p.live[addr] > 0 {
		p.mu.Unlock()
		ch <- nil
		return ch
	}
	if p.dials == nil {
		p.dials = make(map[string]*tcpPredial)
	}
	d := p.dials[addr]
	if d == nil {
		d = &tcpPredial{done: make(chan struct{})}
		p.dials[addr] = d
		go p.predial(addr, d)
	}
	p.mu.Unlock()
	go func() {
		select {
		case <-d.done:
			ch <- d.err
		case <-ctx.Done():
			ch <- ctx.Err()
		}
	}()
	return ch
}

// predial dials addr for the pool.
func (p *tcpPool) predial(addr string, d *tcpPredial) {
	c, err := p.t.dialTCP(p.t.bg, "tcp", addr)
	if err == nil {
		p.put(addr, c)
	}
	d.err = err
	p.mu.Lock()
	delete(p.dials, addr)
	p.mu.Unlock()
	close(d.done)
}

// put adds a connection dialed ahead, closed unless taken within
// predialTTL.
func (p *tcpPool) put(addr string, c *tls.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle == nil {
		p.idle = make(map[string][]*tls.Conn)
		p.timer = make(map[*tls.Conn]*time.Timer)
	}
	p.idle[addr] = append(p.idle[addr], c)
	p.timer[c] = time.AfterFunc(predialTTL, func() {
		p.mu.Lock()
		_, ok := p.timer[c]
		if ok {
			p.remove(addr, c)
		}
		p.mu.Unlock()
		if ok {
			c.Close()
		}
	})
}

// take returns a connection dialed ahead for addr, or nil. A connection
// the server has closed (FIN or RST received) is closed and skipped:
// net/http does not send a request again whose new connection fails, so
// a request handed such a connection would fail.
func (p *tcpPool) take(addr string) *tls.Conn {
	for {
		p.mu.Lock()
		list := p.idle[addr]
		if len(list) == 0 {
			p.mu.Unlock()
			return nil
		}
		c := list[0]
		p.timer[c].Stop()
		p.remove(addr, c)
		p.mu.Unlock()
		if predialOpen(c) {
			if tc, ok := c.NetConn().(*trackedConn); ok {
				tc.predialed = true
			}
			return c
		}
		p.t.stats.tcpPredialsStale.Add(1)
		c.Close()
	}
}

// predialOpen reports whether the TCP connection under c, dialed ahead
// and not used yet, has not been closed by the server. It never reads
// from c: the bytes the server sent (its SETTINGS, session tickets) stay
// for net/http. Connections whose state cannot be known (not a socket of
// this system, or not on Linux) count as open.
func predialOpen(c *tls.Conn) bool {
	var raw net.Conn = c.NetConn()
	if tc, ok := raw.(*trackedConn); ok {
		raw = tc.Conn
	}
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	open, known := true, false
	if err := rc.Control(func(fd uintptr) { open, known = tcpOpen(fd) }); err != nil {
		return false // the socket is closed
	}
	return open || !known
}

// remove forgets an idle connection. p.mu held.
func (p *tcpPool) remove(addr string, c *tls.Conn) {
	delete(p.timer, c)
	list := p.idle[addr]
	for i, x := range list {
		if x == c {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(p.idle, addr)
	} else {
		p.idle[addr] = list
	}
}

// closeAll closes the connections dialed ahead that were not taken.
func (p *tcpPool) closeAll() {
	p.mu.Lock()
	var all []*tls.Conn
	for addr, list := range p.idle {
		for _, c := range list {
			p.timer[c].Stop()
			all = append(all, c)
		}
		delete(p.idle, addr)
	}
	clear(p.timer)
	p.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
}

// isTCPDialError reports whether err says that no TCP connection could be
// made, so that the request was not sent.
func isTCPDialError(err error) bool {
	var de *tcpDialError
	return errors.As(err, &de)
}
