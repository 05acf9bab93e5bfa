package webtransport

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/quicstack/quic"
)

// A Stream is a bidirectional WebTransport stream. Read and Write may be
// called concurrently with each other and with the other methods. Errors
// of a stream that was reset are *StreamError values carrying the
// WebTransport application error code (draft-ietf-webtrans-http3,
// Section 4.4).
type Stream struct {
	str      *quic.Stream
	sess     *Session
	r        io.Reader // the stream after its header
	hdrLen   uint64    // the header this endpoint wrote, 0 for a stream the peer opened
	incoming bool      // the peer opened it
	wd       writeDeadline
	rc       recvCredit
	sc       uint64 // session data credit taken by Writes (s.sess.mu)
}

// A SendStream is a unidirectional WebTransport stream this endpoint
// opened.
type SendStream struct {
	str    *quic.SendStream
	sess   *Session
	hdrLen uint64
	wd     writeDeadline
	sc     uint64 // session data credit taken by Writes (s.sess.mu)
}

// A ReceiveStream is a unidirectional WebTransport stream the peer
// opened.
type ReceiveStream struct {
	str  *quic.ReceiveStream
	sess *Session
	r    io.Reader
	rc   recvCredit
}

// writeDeadline keeps the write deadline of a stream, which a Write
// waiting for the session's data credit (WT_MAX_DATA) honours too.
type writeDeadline struct {
	mu sync.Mutex
	t  time.Time
}

func (d *writeDeadline) set(t time.Time) {
	d.mu.Lock()
	d.t = t
	d.mu.Unlock()
}

func (d *writeDeadline) get() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.t
}

// StreamID returns the QUIC stream ID.
func (s *Stream) StreamID() quic.StreamID { return s.str.StreamID() }

// Read reads the peer's data.
func (s *Stream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.sess.onRead(&s.rc, n)
	return n, mapError(err)
}

// Write writes data, blocking while QUIC's flow control or the session's
// (WT_MAX_DATA) holds it back.
func (s *Stream) Write(p []byte) (int, error) {
	n, err := s.sess.write(s.str, s.str.Context(), &s.wd, &s.sc, p)
	return n, mapError(err)
}

// CloseWrite ends the sending direction with a FIN.
func (s *Stream) CloseWrite() error { return s.str.CloseWrite() }

// Close is CloseWrite followed by CancelRead(0) unless the peer already
// finished sending, as for a quic.Stream.
func (s *Stream) Close() error {
	s.str.CloseWrite()
	s.str.CancelRead(quic.StreamErrorCode(httpCode(0)))
	return nil
}

// CancelWrite resets the sending direction with an application error
// code.
func (s *Stream) CancelWrite(code StreamErrorCode) { resetSend(s.str, httpCode(code), s.hdrLen) }

// CancelRead asks the peer to stop sending, with an application error
// code.
func (s *Stream) CancelRead(code StreamErrorCode) {
	s.str.CancelRead(quic.StreamErrorCode(httpCode(code)))
}

// SetDeadline sets the read and write deadlines.
func (s *Stream) SetDeadline(t time.Time) error {
	s.SetReadDeadline(t)
	return s.SetWriteDeadline(t)
}

// SetReadDeadline sets the deadline of Read calls.
func (s *Stream) SetReadDeadline(t time.Time) error { return s.str.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline of Write calls.
func (s *Stream) SetWriteDeadline(t time.Time) error {
	s.wd.set(t)
	return s.str.SetWriteDeadline(t)
}

// Context is cancelled when the stream is finished in both directions,
// or its connection ends.
func (s *Stream) Context() context.Context { return s.str.Context() }

func (s *Stream) sessionGone() {
	resetSend(s.str, codeSessionGone, s.hdrLen)
	s.str.CancelRead(codeSessionGone)
}

// StreamID returns the QUIC stream ID.
func (s *SendStream) StreamID() quic.StreamID { return s.str.StreamID() }

// Write writes data; see Stream.Write.
func (s *SendStream) Write(p []byte) (int, error) {
	n, err := s.sess.write(s.str, s.str.Context(), &s.wd, &s.sc, p)
	return n, mapError(err)
}

// Close ends the stream with a FIN.
func (s *SendStream) Close() error { return s.str.CloseWrite() }

// CancelWrite resets the stream with an application error code.
func (s *SendStream) CancelWrite(code StreamErrorCode) { resetSend(s.str, httpCode(code), s.hdrLen) }

// SetWriteDeadline sets the deadline of Write calls.
func (s *SendStream) SetWriteDeadline(t time.Time) error {
	s.wd.set(t)
	return s.str.SetWriteDeadline(t)
}

// Context is cancelled when the stream is finished or its connection
// ends.
func (s *SendStream) Context() context.Context { return s.str.Context() }

func (s *SendStream) sessionGone() { resetSend(s.str, codeSessionGone, s.hdrLen) }

// StreamID returns the QUIC stream ID.
func (s *ReceiveStream) StreamID() quic.StreamID { return s.str.StreamID() }

// Read reads the peer's data.
func (s *ReceiveStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.sess.onRead(&s.rc, n)
	return n, mapError(err)
}

// CancelRead asks the peer to stop sending, with an application error
// code.
func (s *ReceiveStream) CancelRead(code StreamErrorCode) {
	s.str.CancelRead(quic.StreamErrorCode(httpCode(code)))
}

// Close is CancelRead(0) unless all data was read.
func (s *ReceiveStream) Close() error {
	s.str.CancelRead(quic.StreamErrorCode(httpCode(0)))
	return nil
}

// SetReadDeadline sets the deadline of Read calls.
func (s *ReceiveStream) SetReadDeadline(t time.Time) error { return s.str.SetReadDeadline(t) }

// Context is cancelled when the stream is finished or its connection
// ends.
func (s *ReceiveStream) Context() context.Context { return s.str.Context() }

func (s *ReceiveStream) sessionGone() { s.str.CancelRead(codeSessionGone) }

func (s *Stream) sendCredit() (*uint64, uint64)     { return &s.sc, s.hdrLen }
func (s *Stream) sentFinalSize() (uint64, bool)     { return s.str.SentFinalSize() }
func (s *SendStream) sendCredit() (*uint64, uint64) { return &s.sc, s.hdrLen }
func (s *SendStream) sentFinalSize() (uint64, bool) { return s.str.SentFinalSize() }
func (s *Stream) credit() *recvCredit               { return &s.rc }
func (s *Stream) finalSize() (uint64, bool)         { return s.str.FinalSize() }
func (s *ReceiveStream) credit() *recvCredit        { return &s.rc }
func (s *ReceiveStream) finalSize() (uint64, bool)  { return s.str.FinalSize() }

// mapError turns the QUIC stream errors of a WebTransport stream into
// *StreamError values with the application's code.
func mapError(err error) error {
	var se *quic.StreamError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	h := uint64(se.Code)
	if h == codeSessionGone {
		return &StreamError{SessionGone: true, Remote: se.Remote}
	}
	code, ok := appCode(h)
	return &StreamError{ErrorCode: code, HasCode: ok, Remote: se.Remote}
}

// write writes p on a stream of the session, within the session's data
// credit when flow control is in force.
func (s *Session) write(w io.Writer, ctx context.Context, wd *writeDeadline, taken *uint64, p []byte) (int, error) {
	if !s.fc.enabled {
		return w.Write(p)
	}
	written := 0
	for written < len(p) {
		s.mu.Lock()
		g, blocked := s.fc.takeData(uint64(len(p) - written))
		*taken += g
		ch, err := s.creditCh, s.err
		s.mu.Unlock()
		if err != nil {
			return written, err
		}
		if g > 0 {
			n, err := w.Write(p[written : written+int(g)])
			written += n
			if err != nil {
				return written, err
			}
			continue
		}
		if blocked != 0 {
			// "A sender SHOULD send a WT_DATA_BLOCKED capsule ... when it
			// wishes to send data but is unable to do so due to
			// WebTransport session-level flow control" (Section 5.6.4).
			s.writeCapsule(capsuleDataBlocked, appendVarint(nil, blocked-1))
		}
		var timeout <-chan time.Time
		if t := wd.get(); !t.IsZero() {
			d := time.Until(t)
			if d <= 0 {
				return written, os.ErrDeadlineExceeded
			}
			tm := time.NewTimer(d)
			timeout = tm.C
			defer tm.Stop()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			// The stream ended: its error (a reset the peer asked for
			// with STOP_SENDING, the connection's end) says why.
			if _, err := w.Write(nil); err != nil {
				return written, err
			}
			return written, context.Cause(ctx)
		case <-timeout:
			return written, os.ErrDeadlineExceeded
		}
	}
	return written, nil
}

// resetSend resets the sending direction of a WebTransport stream with
// the HTTP/3 error code h. "WebTransport implementations MUST use the
// RESET_STREAM_AT frame ... with a Reliable Size set to at least the size
// of the WebTransport header when resetting a WebTransport data stream"
// (Section 4.4), where the connection negotiated it.
func resetSend(str interface {
	CancelWriteAt(quic.StreamErrorCode, uint64)
}, h, hdrLen uint64) {
	str.CancelWriteAt(quic.StreamErrorCode(h), hdrLen)
}
