package webtransport

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
)

const (
	// maxPendingStreams bounds the streams of one connection kept for
	// sessions not established yet: "endpoints MUST limit the number of
	// buffered streams and datagrams. When the number of buffered streams
	// is exceeded, a stream MUST be closed by sending a RESET_STREAM
	// and/or STOP_SENDING with the WT_BUFFERED_STREAM_REJECTED error
	// code" (draft-ietf-webtrans-http3, Section 4.6). Datagrams are
	// buffered by package http3 (32 per connection).
	maxPendingStreams = 16
	// h3IDError is H3_ID_ERROR (RFC 9114, Section 8.1).
	h3IDError = 0x108
	// maxClosedSessions bounds the IDs of ended sessions a connection
	// remembers, whose late streams are reset at once with
	// WT_SESSION_GONE (Section 6); the streams of a session forgotten
	// since wait among the buffered ones and are rejected when
	// pendingStreamTimeout runs out.
	maxClosedSessions = 128
)

// pendingStreamTimeout is how long a stream waits for its session
// before it is rejected with WT_BUFFERED_STREAM_REJECTED (tests change it
// per Server with conns.pendingTimeout).
const pendingStreamTimeout = 5 * time.Second

// connState is the WebTransport state of one HTTP/3 connection: its
// sessions by session ID, and the streams that arrived before their
// session. Its methods may be called from any goroutine.
type connState struct {
	qc *quic.Conn

	mu       sync.Mutex
	sessions map[uint64]*Session
	closed   map[uint64]bool // sessions that ended: their streams are reset
	// closedOrder holds the keys of closed, oldest first: at most
	// maxClosedSessions are kept.
	closedOrder []uint64
	pending     []*pendingStream
	opening     int // sessions reserved (reserve) and not added yet

	pendingTimeout time.Duration // how long a pending stream waits
}

// pendingStream is a stream that arrived before its session.
type pendingStream struct {
	session uint64
	str     *incoming
	timer   *time.Timer
}

// incoming is a stream the peer opened, its header read.
type incoming struct {
	bidi *quic.Stream
	uni  *quic.ReceiveStream
	r    io.Reader // the stream after its header
	hdr  uint64    // the header's length
}

// reject resets a stream that cannot be delivered with code.
func (in *incoming) reject(code uint64) {
	if in.bidi != nil {
		in.bidi.CancelRead(quic.StreamErrorCode(code))
		in.bidi.CancelWrite(quic.StreamErrorCode(code))
	} else {
		in.uni.CancelRead(quic.StreamErrorCode(code))
	}
}

// conns maps QUIC connections to their WebTransport state, for a Server
// or a Dialer; an entry goes when its connection ends.
type conns struct {
	mu sync.Mutex
	m  map[*quic.Conn]*connState

	pendingTimeout time.Duration // zero means pendingStreamTimeout; for tests
}

func (c *conns) get(qc *quic.Conn) *connState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs := c.m[qc]; cs != nil {
		return cs
	}
	if c.m == nil {
		c.m = make(map[*quic.Conn]*connState)
	}
	cs := &connState{qc: qc, sessions: make(map[uint64]*Session), closed: make(map[uint64]bool), pendingTimeout: c.pendingTimeout}
	if cs.pendingTimeout == 0 {
		cs.pendingTimeout = pendingStreamTimeout
	}
	c.m[qc] = cs
	context.AfterFunc(qc.Context(), func() {
		c.mu.Lock()
		delete(c.m, qc)
		c.mu.Unlock()
		cs.connClosed()
	})
	return cs
}

// snapshot returns the state of every connection.
func (c *conns) snapshot() []*connState {
	c.mu.Lock()
	defer c.mu.Unlock()
	css := make([]*connState, 0, len(c.m))
	for _, cs := range c.m {
		css = append(css, cs)
	}
	return css
}

// sessions returns the sessions established on all connections.
func (c *conns) sessions() []*Session {
	css := c.snapshot()
	var ss []*Session
	for _, cs := range css {
		cs.mu.Lock()
		for _, s := range cs.sessions {
			ss = append(ss, s)
		}
		cs.mu.Unlock()
	}
	return ss
}

// extensions returns the http3 hooks that hand WebTransport streams to
// their sessions, with settings.
func (c *conns) extensions(settings []http3.Setting) *http3.Extensions {
	return &http3.Extensions{
		Settings: settings,
		UniStream: func(qc *quic.Conn, typ uint64, str *quic.ReceiveStream, r io.Reader) bool {
			if typ != uniStreamType {
				return false
			}
			c.get(qc).handleStream(&incoming{uni: str, r: r})
			return true
		},
		BidiStream: func(qc *quic.Conn, signal uint64, str *quic.Stream, r io.Reader) bool {
			if signal != bidiSignal {
				return false
			}
			c.get(qc).handleStream(&incoming{bidi: str, r: r})
			return true
		},
		Goaway: func(qc *quic.Conn) { c.get(qc).goaway() },
	}
}

// handleStream reads the session ID of a stream the peer opened and
// hands it to its session, keeps it for a session yet to come, or rejects
// it.
func (cs *connState) handleStream(in *incoming) {
	id, idLen, err := readVarint(in.r)
	// The stream's header: the stream type or signal value, which http3
	// read (two bytes, minimally encoded), and the session ID.
	in.hdr = 2 + uint64(idLen)
	if err != nil {
		in.reject(codeSessionGone) // reset before its header was complete
		return
	}
	// "Session IDs ... MUST always correspond to a client-initiated
	// bidirectional stream ... If an endpoint receives a session ID on a
	// unidirectional stream, bidirectional stream, or datagram that does
	// not correspond to a client-initiated bidirectional stream ID, the
	// endpoint MUST close the connection with an H3_ID_ERROR error code."
	// (Section 4)
	if id%4 != 0 {
		cs.qc.CloseWithError(h3IDError, "WebTransport session ID of a stream that is not a client-initiated bidirectional one")
		return
	}
	cs.mu.Lock()
	if s := cs.sessions[id]; s != nil {
		cs.mu.Unlock()
		s.deliver(in)
		return
	}
	if cs.closed[id] {
		cs.mu.Unlock()
		// "Upon learning that the session has been terminated, the
		// endpoint MUST reset the send side and abort reading on the
		// receive side of all ... streams associated with the session"
		// (Section 6).
		in.reject(codeSessionGone)
		return
	}
	if len(cs.pending) == maxPendingStreams {
		oldest := cs.pending[0]
		cs.pending = cs.pending[1:]
		oldest.timer.Stop()
		defer oldest.str.reject(codeBufferedStreamRejected)
	}
	p := &pendingStream{session: id, str: in}
	p.timer = time.AfterFunc(cs.pendingTimeout, func() { cs.expire(p) })
	cs.pending = append(cs.pending, p)
	cs.mu.Unlock()
}

// expire rejects a stream whose session did not come in time.
func (cs *connState) expire(p *pendingStream) {
	cs.mu.Lock()
	for i, q := range cs.pending {
		if q == p {
			cs.pending = append(cs.pending[:i], cs.pending[i+1:]...)
			cs.mu.Unlock()
			p.str.reject(codeBufferedStreamRejected)
			return
		}
	}
	cs.mu.Unlock()
}

// reserve counts a session about to be established, so that the check
// of the one-session rule and the session's add are one step for
// concurrent CONNECT requests: single (flow control is not in force)
// refuses when the connection carries or is establishing a session. "If
// flow control is not enabled, clients MUST NOT attempt to establish more
// than one simultaneous WebTransport session. A server that receives more
// than one session on an underlying transport connection when flow
// control is not enabled MUST reset the excessive CONNECT streams"
// (Section 5.1). A true result is followed by add or unreserve.
func (cs *connState) reserve(single bool) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if single && len(cs.sessions)+cs.opening > 0 {
		return false
	}
	cs.opening++
	return true
}

// unreserve gives back a reservation of a session that was not
// established.
func (cs *connState) unreserve() {
	cs.mu.Lock()
	cs.opening--
	cs.mu.Unlock()
}

// add registers a session reserved before and hands it the streams that
// came before it. It returns false if the connection ended.
func (cs *connState) add(s *Session) bool {
	cs.mu.Lock()
	cs.opening--
	if cs.qc.Context().Err() != nil {
		cs.mu.Unlock()
		return false
	}
	cs.sessions[s.id] = s
	var early []*incoming
	kept := cs.pending[:0]
	for _, p := range cs.pending {
		if p.session == s.id {
			p.timer.Stop()
			early = append(early, p.str)
		} else {
			kept = append(kept, p)
		}
	}
	clear(cs.pending[len(kept):])
	cs.pending = kept
	cs.mu.Unlock()
	for _, in := range early {
		s.deliver(in)
	}
	return true
}

// goaway tells the sessions of a connection whose peer sent GOAWAY to
// drain (Session.Draining): "An HTTP/3 GOAWAY frame is also a signal to
// applications to initiate shutdown for all WebTransport sessions"
// (Section 4.7).
func (cs *connState) goaway() {
	cs.mu.Lock()
	ss := make([]*Session, 0, len(cs.sessions))
	for _, s := range cs.sessions {
		ss = append(ss, s)
	}
	cs.mu.Unlock()
	for _, s := range ss {
		s.drainOnce.Do(func() { close(s.draining) })
	}
}

// remove forgets a session that ended; its later streams are reset.
func (cs *connState) remove(id uint64) {
	cs.mu.Lock()
	delete(cs.sessions, id)
	if !cs.closed[id] {
		cs.closed[id] = true
		cs.closedOrder = append(cs.closedOrder, id)
		// A peer can open and end sessions for as long as the
		// connection lasts: the oldest are forgotten.
		if len(cs.closedOrder) > maxClosedSessions {
			delete(cs.closed, cs.closedOrder[0])
			cs.closedOrder = cs.closedOrder[1:]
		}
	}
	cs.mu.Unlock()
}

// connClosed drops the streams kept for sessions of a connection that
// ended. Its sessions end by themselves: their CONNECT streams fail
// (Session.readCapsules).
func (cs *connState) connClosed() {
	cs.mu.Lock()
	for _, p := range cs.pending {
		p.timer.Stop()
	}
	cs.pending = nil
	cs.mu.Unlock()
}
