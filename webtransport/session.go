package webtransport

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
)

// A Session is a WebTransport session (draft-ietf-webtrans-http3): the
// streams and datagrams that share the CONNECT stream that established
// it, on an HTTP/3 connection that may carry other sessions and requests.
// A Server's Upgrade returns one, and so does a Dialer's Dial. All its
// methods may be called concurrently.
//
// The session ends when either side closes it (CloseWithError, or the
// peer's WT_CLOSE_SESSION capsule), when its CONNECT stream ends or is
// reset, or when the connection closes; then its streams are reset with
// WT_SESSION_GONE, blocked calls return, and Context is cancelled with
// the reason, a *SessionError when the session was closed by either
// side.
type Session struct {
	id    uint64
	cs    *connState
	rs    *http3.RequestStream
	resp  *http.Response // Dial's response; nil on the server
	proto string         // the upgrade token in use

	ctx    context.Context
	cancel context.CancelCauseFunc

	wmu sync.Mutex // orders capsule writes on the CONNECT stream

	mu        sync.Mutex
	err       error // why the session ended; nil while it is open
	streams   map[streamResetter]struct{}
	bidiQ     []*Stream
	uniQ      []*ReceiveStream
	acceptCh  chan struct{} // closed and replaced when bidiQ or uniQ grows or the session ends
	draining  chan struct{}
	drainOnce sync.Once
	fc        flowControl
	creditCh  chan struct{} // closed and replaced when the peer raises a limit
}

// streamResetter is a stream of the session, reset when it ends.
type streamResetter interface{ sessionGone() }

// newSession makes the session of CONNECT stream rs, before it is added
// to cs: the streams that came before it may end it at once (Section
// 5.6.1), which must reset rs.
func newSession(rs *http3.RequestStream, cs *connState, proto string, fc flowControl) *Session {
	s := &Session{
		id:       uint64(rs.StreamID()),
		rs:       rs,
		cs:       cs,
		proto:    proto,
		streams:  make(map[streamResetter]struct{}),
		acceptCh: make(chan struct{}),
		draining: make(chan struct{}),
		fc:       fc,
		creditCh: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	return s
}

// start runs the session on its CONNECT stream once it is established.
func (s *Session) start() {
	// The reader ends the session when the CONNECT stream ends: "the
	// CONNECT stream is closed, either cleanly or abruptly, on either
	// side" (Section 6), and when the connection closes, after the
	// capsules that arrived before, such as a WT_CLOSE_SESSION sent just
	// before the peer closed the connection.
	go s.readCapsules()
}

// Context returns a context that is cancelled when the session ends;
// context.Cause tells why.
func (s *Session) Context() context.Context { return s.ctx }

// SessionID returns the session ID: the stream ID of the CONNECT stream
// (Section 4).
func (s *Session) SessionID() uint64 { return s.id }

// Response returns the server's response to the CONNECT request of a
// session made by Dial, nil for one a Server accepted.
func (s *Session) Response() *http.Response { return s.resp }

// LocalAddr returns the local address of the QUIC connection.
func (s *Session) LocalAddr() interface{ String() string } { return s.cs.qc.LocalAddr() }

// RemoteAddr returns the peer's address.
func (s *Session) RemoteAddr() interface{ String() string } { return s.cs.qc.RemoteAddr() }

// Draining returns a channel that is closed when the peer asked for the
// session to end soon, with a WT_DRAIN_SESSION capsule or an HTTP/3
// GOAWAY frame (Section 4.7):
// the application is "expected to attempt to gracefully terminate the
// session as soon as possible".
func (s *Session) Draining() <-chan struct{} { return s.draining }

// Drain sends a WT_DRAIN_SESSION capsule, asking the peer to end the
// session soon; the session goes on meanwhile (Section 4.7).
func (s *Session) Drain() error {
	if err := s.closedErr(); err != nil {
		return err
	}
	return s.writeCapsule(capsuleDrainSession, nil)
}

// CloseWithError ends the session with an error code and message for the
// peer, in a WT_CLOSE_SESSION capsule followed by the end of the CONNECT
// stream (Section 6); a message longer than 1024 bytes is cut at a UTF-8
// character boundary. The session's streams are reset with
// WT_SESSION_GONE. Closing a closed session does nothing.
func (s *Session) CloseWithError(code SessionErrorCode, msg string) error {
	if s.closedErr() != nil {
		return nil
	}
	msg = truncateUTF8(msg, maxCloseMessage)
	v := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(msg)), uint32(code))
	v = append(v, msg...)
	err := s.writeCapsule(capsuleCloseSession, v)
	// "An endpoint that sends a WT_CLOSE_SESSION capsule MUST immediately
	// send a FIN on the CONNECT Stream." (Section 6)
	s.rs.CloseWrite()
	s.terminate(&SessionError{ErrorCode: code, Message: msg}, 0)
	return err
}

// truncateUTF8 cuts s to at most n bytes at a UTF-8 character boundary:
// "Senders that truncate an application-supplied message MUST do so at a
// UTF-8 character boundary" (Section 6).
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// writeCapsule writes one capsule on the CONNECT stream.
func (s *Session) writeCapsule(typ uint64, v []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.rs.WriteCapsule(typ, v)
}

// closedErr returns why the session ended, or nil.
func (s *Session) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// terminate ends the session with err once: "Upon learning that the
// session has been terminated, the endpoint MUST reset the send side and
// abort reading on the receive side of all unidirectional and
// bidirectional streams associated with the session ... using the
// WT_SESSION_GONE error code; it MUST NOT send any new datagrams or open
// any new streams." (Section 6) A non-zero reset also resets the CONNECT
// stream with that code, both ways; err is the session's error before
// the stream's reader sees the reset.
func (s *Session) terminate(err error, reset uint64) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.err = err
	streams := s.streams
	s.streams = nil
	bidi, uni := s.bidiQ, s.uniQ
	s.bidiQ, s.uniQ = nil, nil
	close(s.creditCh)
	s.mu.Unlock()
	s.cs.remove(s.id)
	for st := range streams {
		st.sessionGone()
	}
	for _, st := range bidi {
		st.sessionGone()
	}
	for _, st := range uni {
		st.sessionGone()
	}
	if s.rs != nil {
		if reset != 0 {
			s.rs.CancelWrite(http3.ErrCode(reset))
			s.rs.CancelRead(http3.ErrCode(reset))
		}
		// "The endpoint MAY also send a STOP_SENDING with error code
		// WT_SESSION_GONE to indicate it is no longer reading from the
		// CONNECT stream." (Section 6)
		s.rs.CancelRead(codeSessionGone)
	}
	s.mu.Lock()
	s.wakeAcceptors()
	s.mu.Unlock()
	s.cancel(err)
}

// wakeAcceptors wakes the AcceptStream and AcceptUniStream calls
// waiting. s.mu held.
func (s *Session) wakeAcceptors() {
	close(s.acceptCh)
	s.acceptCh = make(chan struct{})
}

// readCapsules reads the capsules of the CONNECT stream until it ends
// (Sections 4.7, 5.6 and 6).
func (s *Session) readCapsules() {
	for {
		c, err := s.rs.ReadCapsule(maxCapsuleValue)
		if err == io.EOF {
			// "Cleanly terminating a CONNECT stream without a
			// WT_CLOSE_SESSION capsule SHALL be semantically equivalent to
			// terminating it with a WT_CLOSE_SESSION capsule that has an
			// error code of 0 and an empty error string." (Section 6)
			s.rs.CloseWrite()
			s.terminate(&SessionError{Remote: true}, 0)
			return
		}
		if err != nil {
			s.terminate(err, codeSessionGone)
			return
		}
		switch c.Type {
		case capsuleCloseSession:
			s.handleClose(c.Value)
			return
		case capsuleDrainSession:
			s.drainOnce.Do(func() { close(s.draining) })
		case capsuleMaxStreamData, capsuleStreamDataBlocked:
			// "Endpoints MUST treat receipt of a WT_MAX_STREAM_DATA or a
			// WT_STREAM_DATA_BLOCKED capsule as a session error."
			// (Section 5.4)
			s.flowControlError()
			return
		case capsuleMaxData, capsuleMaxStreamsBidi, capsuleMaxStreamsUni,
			capsuleDataBlocked, capsuleStreamsBlockedBidi, capsuleStreamsBlockedUni:
			if !s.handleFlowControlCapsule(c) {
				s.flowControlError()
				return
			}
		}
		// "Endpoints which receive a Capsule with an unknown Capsule Type
		// MUST silently drop that Capsule" (RFC 9297, Section 3.2).
	}
}

// maxCapsuleValue bounds the capsules read on the CONNECT stream: a
// WT_CLOSE_SESSION capsule's value is at most 4+1024 bytes and the flow
// control ones are smaller; unknown ones (GREASE) up to this size are
// dropped, larger ones reset the stream (http3.RequestStream.ReadCapsule).
const maxCapsuleValue = 64 << 10

// handleClose handles the peer's WT_CLOSE_SESSION capsule (Section 6).
func (s *Session) handleClose(v []byte) {
	if len(v) < 4 || len(v)-4 > maxCloseMessage || !utf8.Valid(v[4:]) {
		// "If the Application Error Message exceeds 1024 bytes or is not
		// valid UTF-8, the receiver MUST reset the stream with code
		// H3_MESSAGE_ERROR."
		s.terminate(errors.New("webtransport: malformed WT_CLOSE_SESSION capsule"), uint64(http3.ErrCodeMessageError))
		return
	}
	// "The recipient MUST either close or reset the stream in response."
	s.rs.CloseWrite()
	s.terminate(&SessionError{ErrorCode: SessionErrorCode(binary.BigEndian.Uint32(v)), Message: string(v[4:]), Remote: true}, 0)
}

// flowControlError closes the session for a flow control violation:
// "it MUST close the WebTransport session with a WT_FLOW_CONTROL_ERROR
// error code" (Section 5.6).
func (s *Session) flowControlError() {
	// The error first, so that the CONNECT stream's reader, which sees
	// the reset, does not end the session with an error of its own.
	s.terminate(errors.New("webtransport: flow control error (WT_FLOW_CONTROL_ERROR)"), codeFlowControlError)
}

// deliver hands a stream the peer opened to the application.
func (s *Session) deliver(in *incoming) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		in.reject(codeSessionGone)
		return
	}
	if !s.fc.countIncoming(in.bidi != nil) {
		s.mu.Unlock()
		in.reject(codeFlowControlError)
		s.flowControlError()
		return
	}
	if in.bidi != nil {
		st := &Stream{str: in.bidi, sess: s, r: in.r, incoming: true, rc: recvCredit{hdr: in.hdr}}
		s.streams[st] = struct{}{}
		s.bidiQ = append(s.bidiQ, st)
		s.watch(st, in.bidi.Context(), true)
	} else {
		st := &ReceiveStream{str: in.uni, sess: s, r: in.r, rc: recvCredit{hdr: in.hdr}}
		s.streams[st] = struct{}{}
		s.uniQ = append(s.uniQ, st)
		s.watch(st, in.uni.Context(), false)
	}
	s.wakeAcceptors()
	s.mu.Unlock()
}

// watch forgets a stream once it is finished and, for one the peer
// opened, lets the peer open another (WT_MAX_STREAMS). s.mu held.
func (s *Session) watch(st streamResetter, ctx context.Context, bidi bool) {
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		if s.streams != nil {
			delete(s.streams, st)
		}
		_, incoming := st.(*ReceiveStream)
		if b, ok := st.(*Stream); ok {
			incoming = b.incoming
		}
		var update uint64
		var typ uint64
		if incoming && s.err == nil {
			update, typ = s.fc.incomingDone(bidi)
		}
		var dataUpdate uint64
		if r, ok := st.(receiver); ok && s.err == nil {
			dataUpdate = s.settle(r)
		}
		if w, ok := st.(sender); ok && s.err == nil && s.settleSend(w) {
			close(s.creditCh) // wake the writers waiting for credit
			s.creditCh = make(chan struct{})
		}
		s.mu.Unlock()
		if typ != 0 {
			s.writeCapsule(typ, appendVarint(nil, update))
		}
		if dataUpdate != 0 {
			s.writeCapsule(capsuleMaxData, appendVarint(nil, dataUpdate))
		}
	})
}

// AcceptStream returns the next bidirectional stream the peer opened,
// waiting until one arrives, ctx is done or the session ends.
func (s *Session) AcceptStream(ctx context.Context) (*Stream, error) {
	for {
		s.mu.Lock()
		if len(s.bidiQ) > 0 {
			st := s.bidiQ[0]
			s.bidiQ = s.bidiQ[1:]
			s.mu.Unlock()
			return st, nil
		}
		err, ch := s.err, s.acceptCh
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// AcceptUniStream returns the next unidirectional stream the peer
// opened, waiting until one arrives, ctx is done or the session ends.
func (s *Session) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	for {
		s.mu.Lock()
		if len(s.uniQ) > 0 {
			st := s.uniQ[0]
			s.uniQ = s.uniQ[1:]
			s.mu.Unlock()
			return st, nil
		}
		err, ch := s.err, s.acceptCh
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// OpenStream opens a bidirectional stream without waiting: it fails if
// the peer's limits (WT_MAX_STREAMS, or QUIC's MAX_STREAMS) allow no more
// streams now.
func (s *Session) OpenStream() (*Stream, error) { return s.openBidi(nil) }

// OpenStreamSync opens a bidirectional stream, waiting for the peer's
// limits to allow it until ctx is done or the session ends.
func (s *Session) OpenStreamSync(ctx context.Context) (*Stream, error) { return s.openBidi(ctx) }

// OpenUniStream opens a unidirectional stream without waiting; see
// OpenStream.
func (s *Session) OpenUniStream() (*SendStream, error) { return s.openUni(nil) }

// OpenUniStreamSync opens a unidirectional stream, waiting for the peer's
// limits; see OpenStreamSync.
func (s *Session) OpenUniStreamSync(ctx context.Context) (*SendStream, error) { return s.openUni(ctx) }

// reserve takes one of the peer's WT_MAX_STREAMS credits, waiting for
// one if ctx is not nil.
func (s *Session) reserve(ctx context.Context, bidi bool) error {
	for {
		s.mu.Lock()
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		ok, blocked := s.fc.takeOutgoing(bidi)
		ch := s.creditCh
		s.mu.Unlock()
		if ok {
			return nil
		}
		if blocked != 0 {
			// "A sender SHOULD send a WT_STREAMS_BLOCKED capsule ... when
			// it wishes to open a stream but is unable to do so due to the
			// maximum stream limit set by its peer" (Section 5.6.2).
			typ := uint64(capsuleStreamsBlockedUni)
			if bidi {
				typ = capsuleStreamsBlockedBidi
			}
			s.writeCapsule(typ, appendVarint(nil, blocked-1))
		}
		if ctx == nil {
			return errTooManyStreams
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// unreserve gives back a credit taken for a stream that was not opened.
func (s *Session) unreserve(bidi bool) {
	s.mu.Lock()
	s.fc.untakeOutgoing(bidi)
	s.mu.Unlock()
}

func (s *Session) openBidi(ctx context.Context) (*Stream, error) {
	if err := s.reserve(ctx, true); err != nil {
		return nil, err
	}
	var str *quic.Stream
	var err error
	if ctx == nil {
		str, err = s.cs.qc.OpenStream()
	} else {
		mctx, cancel := mergeCtx(ctx, s.ctx)
		str, err = s.cs.qc.OpenStreamSync(mctx)
		cancel()
	}
	if err != nil {
		s.unreserve(true)
		return nil, s.orClosed(err)
	}
	hdr := appendVarint(appendVarint(make([]byte, 0, 16), bidiSignal), s.id)
	str.Write(hdr)
	st := &Stream{str: str, sess: s, r: str, hdrLen: uint64(len(hdr))}
	if !s.add(st, str.Context(), true) {
		return nil, s.closedErr()
	}
	return st, nil
}

func (s *Session) openUni(ctx context.Context) (*SendStream, error) {
	if err := s.reserve(ctx, false); err != nil {
		return nil, err
	}
	var str *quic.SendStream
	var err error
	if ctx == nil {
		str, err = s.cs.qc.OpenUniStream()
	} else {
		mctx, cancel := mergeCtx(ctx, s.ctx)
		str, err = s.cs.qc.OpenUniStreamSync(mctx)
		cancel()
	}
	if err != nil {
		s.unreserve(false)
		return nil, s.orClosed(err)
	}
	hdr := appendVarint(appendVarint(make([]byte, 0, 16), uniStreamType), s.id)
	str.Write(hdr)
	st := &SendStream{str: str, sess: s, hdrLen: uint64(len(hdr))}
	if !s.add(st, str.Context(), false) {
		return nil, s.closedErr()
	}
	return st, nil
}

// add records a stream this endpoint opened; false if the session ended
// meanwhile, and the stream is reset.
func (s *Session) add(st streamResetter, ctx context.Context, bidi bool) bool {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		st.sessionGone()
		return false
	}
	s.streams[st] = struct{}{}
	s.watch(st, ctx, bidi)
	s.mu.Unlock()
	return true
}

// orClosed returns the session's error if it ended, else err.
func (s *Session) orClosed(err error) error {
	if e := s.closedErr(); e != nil {
		return e
	}
	return err
}

// mergeCtx returns a context done when either a or b is, and the
// function that releases it.
func mergeCtx(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(a)
	stop := context.AfterFunc(b, func() { cancel(context.Cause(b)) })
	return ctx, func() { stop(); cancel(nil) }
}

// SendDatagram sends p as a datagram of the session, unreliably, in an
// HTTP/3 datagram (Section 4.5). It fails after the session ended; a
// datagram too large for a QUIC packet is dropped, as are the oldest when
// more than 32 wait to be sent (quic.Conn.SendDatagram).
func (s *Session) SendDatagram(p []byte) error {
	if err := s.closedErr(); err != nil {
		return err
	}
	return s.rs.SendDatagram(p)
}

// ReceiveDatagram returns the next datagram of the session, waiting until
// one arrives, ctx is done or the session ends. At most 64 wait to be
// received; older ones are dropped first.
func (s *Session) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	if err := s.closedErr(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	p, err := s.rs.ReceiveDatagram(ctx)
	if err != nil {
		if e := s.closedErr(); e != nil {
			return nil, e
		}
	}
	return p, err
}
