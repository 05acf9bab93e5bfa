package http3

import (
	"context"
	"errors"
	"sync"

	"github.com/quicstack/quic"
)

const (
	// maxDatagramQueue bounds the datagrams waiting for ReceiveDatagram on
	// one request stream; older ones are dropped first.
	maxDatagramQueue = 64
	// maxEarlyDatagrams bounds the datagrams kept for request streams
	// not seen yet (RFC 9297, Section 2.1: "drop that datagram silently
	// or buffer it temporarily").
	maxEarlyDatagrams = 32
	// maxQuarterStreamID is the largest valid Quarter Stream ID: "Receipt
	// of an HTTP/3 Datagram that includes a larger value MUST be treated
	// as an HTTP/3 connection error of type H3_DATAGRAM_ERROR" (RFC 9297,
	// Section 2.1).
	maxQuarterStreamID = 1<<60 - 1
)

// ErrDatagramsNotSupported is returned by RequestStream.SendDatagram when
// HTTP/3 datagrams were not negotiated on the connection: both sides must
// send SETTINGS_H3_DATAGRAM=1 and enable QUIC datagrams (RFC 9297,
// Section 2.1.1).
var ErrDatagramsNotSupported = errors.New("http3: HTTP/3 datagrams not negotiated")

// datagramQueue holds the received datagrams of one request stream.
type datagramQueue struct {
	mu     sync.Mutex
	q      [][]byte
	closed bool
	ready  chan struct{} // signalled when q grows
}

func newDatagramQueue() *datagramQueue {
	return &datagramQueue{ready: make(chan struct{}, 1)}
}

func (d *datagramQueue) push(p []byte) {
	d.mu.Lock()
	if !d.closed {
		if len(d.q) == maxDatagramQueue {
			d.q = d.q[1:]
		}
		d.q = append(d.q, p)
	}
	d.mu.Unlock()
	select {
	case d.ready <- struct{}{}:
	default:
	}
}

// pop waits for a datagram until ctx or done ends.
func (d *datagramQueue) pop(ctx context.Context, done <-chan struct{}) ([]byte, error) {
	for {
		d.mu.Lock()
		if len(d.q) > 0 {
			p := d.q[0]
			d.q[0] = nil
			d.q = d.q[1:]
			d.mu.Unlock()
			return p, nil
		}
		d.mu.Unlock()
		select {
		case <-d.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			return nil, errors.New("http3: request stream closed")
		}
	}
}

// datagrams demultiplexes the connection's HTTP/3 datagrams to request
// streams by Quarter Stream ID.
type datagrams struct {
	mu      sync.Mutex
	streams map[uint64]*datagramQueue
	early   []earlyDatagram
}

type earlyDatagram struct {
	quarter uint64
	payload []byte
}

// datagramsNegotiated waits for the handshake and reports whether both
// sides enabled QUIC datagrams (RFC 9221), without which
// SETTINGS_H3_DATAGRAM is not sent: RFC 9297, Section 2.1.1 makes a peer
// that receives it on a connection without QUIC datagrams close the
// connection with H3_SETTINGS_ERROR.
func datagramsNegotiated(qc *quic.Conn) bool {
	select {
	case <-qc.HandshakeComplete():
	case <-qc.Context().Done():
		return false
	}
	return qc.ConnectionState().SupportsDatagrams
}

// datagramsEnabled reports whether HTTP/3 datagrams may be sent: "QUIC
// DATAGRAM frames MUST NOT be sent until the SETTINGS_H3_DATAGRAM setting
// has been both sent and received with a value of 1" (RFC 9297, Section
// 2.1.1).
func (c *connection) datagramsEnabled() bool {
	peer, ok := c.peerSettingsKnown()
	return ok && c.ours.H3Datagram && peer.H3Datagram && c.qc.ConnectionState().SupportsDatagrams
}

// registerDatagrams returns the queue of request stream id, taking the
// datagrams that arrived before it. The queue is dropped when the stream
// ends.
func (c *connection) registerDatagrams(str *quic.Stream) *datagramQueue {
	q := newDatagramQueue()
	quarter := uint64(str.StreamID()) / 4
	c.dg.mu.Lock()
	if c.dg.streams == nil {
		c.dg.streams = make(map[uint64]*datagramQueue)
	}
	c.dg.streams[quarter] = q
	kept := c.dg.early[:0]
	for _, e := range c.dg.early {
		if e.quarter == quarter {
			q.push(e.payload)
		} else {
			kept = append(kept, e)
		}
	}
	c.dg.early = kept
	c.dg.mu.Unlock()
	context.AfterFunc(str.Context(), func() {
		c.dg.mu.Lock()
		delete(c.dg.streams, quarter)
		c.dg.mu.Unlock()
	})
	return q
}

// receiveDatagrams reads the connection's QUIC datagrams and hands each
// to its request stream until the connection ends.
func (c *connection) receiveDatagrams() {
	ctx := c.qc.Context()
	for {
		b, err := c.qc.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		quarter, n, err := parseVarint(b)
		if err != nil || quarter > maxQuarterStreamID {
			// RFC 9297, Section 2.1: a payload "too short to allow parsing
			// the Quarter Stream ID field" or a too large value is a
			// connection error of type H3_DATAGRAM_ERROR.
			c.closeWithError(ErrCodeDatagramError, "malformed HTTP/3 datagram")
			return
		}
		payload := b[n:]
		c.dg.mu.Lock()
		q := c.dg.streams[quarter]
		if q == nil {
			// A stream not seen yet, or one already closed: keep a few
			// for a while, dropping the oldest.
			if len(c.dg.early) == maxEarlyDatagrams {
				c.dg.early = c.dg.early[1:]
			}
			c.dg.early = append(c.dg.early, earlyDatagram{quarter, payload})
		}
		c.dg.mu.Unlock()
		if q != nil {
			q.push(payload)
		}
	}
}

// sendDatagram sends p as an HTTP/3 datagram of request stream id.
func (c *connection) sendDatagram(id quic.StreamID, p []byte) error {
	if !c.datagramsEnabled() {
		return ErrDatagramsNotSupported
	}
	b := make([]byte, 0, 8+len(p))
	b = appendVarint(b, uint64(id)/4)
	return c.qc.SendDatagram(append(b, p...))
}
