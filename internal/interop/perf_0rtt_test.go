//go:build linux

package interop

// Time to first byte with 0-RTT (issue 28): a client resumes a session
// and sends a small request in 0-RTT packets; the figure is the time from
// the dial to the first byte of the response, on loopback, median of
// -perf.ttfb.conns connections, for ours (DialEarly, ListenEarly with
// Allow0RTT) and quic-go (DialAddrEarly, ListenEarly with Allow0RTT).
// Connections whose 0-RTT was not accepted are not counted.

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
)

var (
	perfTTFBConns    = flag.Int("perf.ttfb.conns", 50, "connections per 0-RTT time-to-first-byte figure")
	perfTTFBQuantile = flag.Float64("perf.ttfb.quantile", 0.5, "quantile of a round's connections reported as its 0-RTT time to first byte (0.5: the median; lower quantiles are steadier on a loaded machine)")
)

// ttfbRequest is the request of the 0-RTT measurement; the server answers
// with ttfbResponse once it has read it whole.
var (
	ttfbRequest  = []byte("GET /small\r\n")
	ttfbResponse = []byte("hello, 0-RTT\n")
)

// ticketCache is a tls.ClientSessionCache that signals every Put.
type ticketCache struct {
	tls.ClientSessionCache
	puts chan struct{}
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.puts <- struct{}{}:
		default:
		}
	}
}

// drainTickets empties the signal channel.
func (c *ticketCache) drainTickets() {
	for {
		select {
		case <-c.puts:
		default:
			return
		}
	}
}

// waitTicket waits up to d for a ticket.
func (c *ticketCache) waitTicket(d time.Duration) bool {
	select {
	case <-c.puts:
		return true
	case <-time.After(d):
		return false
	}
}

// ttfbServe answers each stream of c: it reads the request to its end
// and writes the response.
func ttfbServe(s duplexStream) {
	io.Copy(io.Discard, s)
	s.Write(ttfbResponse)
	s.CloseWrite()
}

// ttfbConn is what the measurement needs of a client connection.
type ttfbConn struct {
	stream    duplexStream
	used0RTT  func() bool // after the handshake
	handshake <-chan struct{}
	close     func()
}

// ttfb0RTT measures k resumed connections made by dial (after one full
// handshake to get a ticket) and returns the median time to first byte
// (or the -perf.ttfb.quantile) of those that used 0-RTT, and how many did.
func ttfb0RTT(k int, cache *ticketCache, dial func(ctx context.Context, early bool) (ttfbConn, error)) (time.Duration, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var samples []time.Duration
	for i := 0; i <= k; i++ {
		cache.drainTickets()
		t0 := time.Now()
		c, err := dial(ctx, i > 0)
		if err != nil {
			return 0, 0, err
		}
		if _, err := c.stream.Write(ttfbRequest); err != nil {
			c.close()
			return 0, 0, err
		}
		c.stream.CloseWrite()
		var first [1]byte
		if _, err := io.ReadFull(c.stream, first[:]); err != nil {
			c.close()
			return 0, 0, fmt.Errorf("reading the response: %v", err)
		}
		el := time.Since(t0)
		io.Copy(io.Discard, c.stream)
		select {
		case <-c.handshake:
		case <-ctx.Done():
			c.close()
			return 0, 0, ctx.Err()
		}
		if i > 0 && c.used0RTT() {
			samples = append(samples, el)
		}
		// The next connection resumes with this one's ticket.
		got := cache.waitTicket(2 * time.Second)
		c.close()
		if !got {
			return 0, 0, fmt.Errorf("connection %d: no session ticket", i)
		}
	}
	if len(samples) == 0 {
		return 0, 0, fmt.Errorf("no connection used 0-RTT")
	}
	slices.Sort(samples)
	return samples[min(int(float64(len(samples))**perfTTFBQuantile), len(samples)-1)], len(samples), nil
}

// ttfbOurs is ttfb0RTT for ours on both sides.
func ttfbOurs(k int) (time.Duration, int, error) {
	ctls, stls := perfTLS.client.Clone(), perfTLS.server
	cache := &ticketCache{tls.NewLRUClientSessionCache(4), make(chan struct{}, 16)}
	ctls.ClientSessionCache = cache
	sudp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, err
	}
	defer sudp.Close()
	str := &ours.Transport{Conn: sudp}
	defer str.Close()
	l, err := str.ListenEarly(stls, &ours.Config{Allow0RTT: true})
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				s, err := c.AcceptStream(ctx)
				if err == nil {
					ttfbServe(s)
				}
			}()
		}
	}()
	cudp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, err
	}
	defer cudp.Close()
	ctr := &ours.Transport{Conn: cudp}
	defer ctr.Close()
	return ttfb0RTT(k, cache, func(ctx context.Context, early bool) (ttfbConn, error) {
		c, err := ctr.DialEarly(ctx, sudp.LocalAddr(), ctls, nil)
		if err != nil {
			return ttfbConn{}, err
		}
		s, err := c.OpenStreamSync(ctx) // at once with 0-RTT; after the handshake without
		if err != nil {
			c.CloseWithError(0, "")
			return ttfbConn{}, err
		}
		return ttfbConn{s, func() bool { return c.ConnectionState().Used0RTT }, c.HandshakeComplete(),
			func() { c.CloseWithError(0, "") }}, nil
	})
}

// ttfbQuicGo is ttfb0RTT for quic-go on both sides.
func ttfbQuicGo(k int) (time.Duration, int, error) {
	ctls, stls := perfTLS.client.Clone(), perfTLS.server
	cache := &ticketCache{tls.NewLRUClientSessionCache(4), make(chan struct{}, 16)}
	ctls.ClientSessionCache = cache
	sudp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, err
	}
	defer sudp.Close()
	str := &quicgo.Transport{Conn: sudp}
	defer str.Close()
	l, err := str.ListenEarly(stls, &quicgo.Config{Allow0RTT: true})
	if err != nil {
		return 0, 0, err
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				s, err := c.AcceptStream(ctx)
				if err == nil {
					ttfbServe(quicGoStream{s})
				}
			}()
		}
	}()
	cudp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, err
	}
	defer cudp.Close()
	ctr := &quicgo.Transport{Conn: cudp}
	defer ctr.Close()
	return ttfb0RTT(k, cache, func(ctx context.Context, early bool) (ttfbConn, error) {
		c, err := ctr.DialEarly(ctx, sudp.LocalAddr(), ctls, nil)
		if err != nil {
			return ttfbConn{}, err
		}
		s, err := c.OpenStreamSync(ctx) // at once with 0-RTT; after the handshake without
		if err != nil {
			c.CloseWithError(0, "")
			return ttfbConn{}, err
		}
		return ttfbConn{quicGoStream{s}, func() bool { return c.ConnectionState().Used0RTT }, c.HandshakeComplete(),
			func() { c.CloseWithError(0, "") }}, nil
	})
}

// perfTTFBRows adds the 0-RTT time-to-first-byte row: rounds of ours and
// quic-go interleaved, the median of the rounds' medians.
func perfTTFBRows(add func(perfRow)) error {
	var o, q []time.Duration
	var on, qn int
	for i := 0; i < *perfRuns; i++ {
		d, n, err := ttfbOurs(*perfTTFBConns)
		if err != nil {
			return fmt.Errorf("ours: %v", err)
		}
		o, on = append(o, d), on+n
		d, n, err = ttfbQuicGo(*perfTTFBConns)
		if err != nil {
			return fmt.Errorf("quic-go: %v", err)
		}
		q, qn = append(q, d), qn+n
	}
	slices.Sort(o)
	slices.Sort(q)
	mo, mq := o[len(o)/2], q[len(q)/2]
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	add(row6(fmt.Sprintf("0-RTT time to first byte, loopback (µs; %d and %d resumed connections)", on, qn),
		fmt.Sprintf("%.0f", us(mo)), fmt.Sprintf("%.0f", us(mq)), "—", ratio(us(mo), us(mq)), "—"))
	return nil
}
