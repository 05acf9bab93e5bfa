package http3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/quicstack/quic"
)

// requestStream is the quic.Stream methods the message layer uses.
type requestStream interface {
	io.ReadWriter
	StreamID() quic.StreamID
	CancelRead(quic.StreamErrorCode)
	CancelWrite(quic.StreamErrorCode)
	CloseWrite() error
}

// streamResetError is a request stream reset by the peer (RESET_STREAM
// or STOP_SENDING) or by this endpoint, whose message names the HTTP/3
// code. It unwraps to the *quic.StreamError.
type streamResetError struct{ err *quic.StreamError }

func (e *streamResetError) Error() string {
	by := "this endpoint"
	if e.err.Remote {
		by = "the peer"
	}
	return fmt.Sprintf("http3: stream %d reset by %s with %v", e.err.StreamID, by, ErrCode(e.err.Code))
}

func (e *streamResetError) Unwrap() error { return e.err }

// connClosedError is a connection closed with an application error code
// (CONNECTION_CLOSE of type 0x1d), whose message names the HTTP/3 code
// ("H3_INTERNAL_ERROR", not 0x102). It unwraps to the
// *quic.ApplicationError.
type connClosedError struct{ err *quic.ApplicationError }

func (e *connClosedError) Error() string {
	by := "this endpoint"
	if e.err.Remote {
		by = "the peer"
	}
	s := fmt.Sprintf("http3: connection closed by %s with %v", by, ErrCode(e.err.Code))
	if e.err.Reason != "" {
		s += ": " + e.err.Reason
	}
	return s
}

func (e *connClosedError) Unwrap() error { return e.err }

// withCodeName returns err, or, for a *quic.StreamError or a
// *quic.ApplicationError, an error naming its HTTP/3 code that unwraps to
// it.
func withCodeName(err error) error {
	switch e := err.(type) {
	case *quic.StreamError:
		return &streamResetError{e}
	case *quic.ApplicationError:
		return &connClosedError{e}
	}
	return err
}

// resetStream abandons both directions of a request stream with code.
func resetStream(s requestStream, code ErrCode) {
	s.CancelRead(quic.StreamErrorCode(code))
	s.CancelWrite(quic.StreamErrorCode(code))
}

// readHeadersFrame reads the next HEADERS frame of a request stream,
// skipping unknown frames; any other frame is a connection error.
// A HEADERS frame whose payload could not decode within our
// SETTINGS_MAX_FIELD_SECTION_SIZE is errHeadersTooLarge before any of its
// payload is read.
func readHeadersFrame(c *connection, br *bufio.Reader) (frame, error) {
	f, err := readFrameWithin(br, maxEncodedFieldSection(c.ours.MaxFieldSectionSize))
	if err != nil {
		return f, err
	}
	if f.Type == frameHeaders {
		return f, nil
	}
	return f, unexpectedOnRequestStream(c, f.Type)
}

// unexpectedOnRequestStream is the error for a frame of type typ out of
// place on a request stream (RFC 9114, Section 4.1 and 7.2).
func unexpectedOnRequestStream(c *connection, typ uint64) error {
	if typ == framePushPromise && !c.isServer {
		// No MAX_PUSH_ID was sent, so any push ID exceeds it (Section
		// 7.2.5).
		return connError(ErrCodeIDError, "PUSH_PROMISE without MAX_PUSH_ID")
	}
	return connError(ErrCodeFrameUnexpected, "frame %#x on a request stream", typ)
}

// body streams the DATA frames of a message (RFC 9114, Section 4.1) and
// then reads the trailer section, if any.
type body struct {
	c             *connection
	ctx           context.Context
	str           requestStream
	br            *bufio.Reader
	remaining     uint64 // payload left in the current DATA frame
	contentLength int64  // -1 if unknown
	n             int64
	trailer       *http.Header
	closeCode     ErrCode // STOP_SENDING code of an early Close; 0 for the default
	pooledBR      bool    // br came from readerPool and goes back when done
	onFirstRead   func()  // the server's 100 Continue; run by the first Read
	// req is the client's request whose response this is: a clean end
	// of the message ends the request's content, its content's failure
	// is reported instead of the reset it caused, and Close ends it.
	req *clientRequest
	// ended is set on a server's request whose stream ended right after
	// its header (probeEnd): the reading is complete, not abandoned, so
	// Close sends neither STOP_SENDING nor a QPACK Stream Cancellation
	// (RFC 9204, Section 2.2.2.2: every section on it was processed).
	ended bool

	rmu      sync.Mutex // serializes Read
	mu       sync.Mutex // guards the fields below
	err      error      // sticky
	closed   bool
	eofCheck bool // the message ended cleanly
}

// errBodyClosed is returned by Read after Close.
var errBodyClosed = errors.New("http3: read on closed body")

// Read reads the message content.
func (b *body) Read(p []byte) (int, error) {
	b.rmu.Lock()
	defer b.rmu.Unlock()
	if fn := b.onFirstRead; fn != nil {
		b.onFirstRead = nil
		fn()
	}
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := b.read(p)
	err = withCodeName(err)
	if err != nil && err != io.EOF && !b.c.isServer {
		if b.ctx.Err() != nil {
			// The request was cancelled: report that rather than the
			// reset it caused, as net/http does.
			err = b.ctx.Err()
		} else if b.req != nil {
			if serr := b.req.rb.error(); serr != nil {
				err = serr
			}
		}
	}
	if err != nil {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return n, errBodyClosed
		}
		if err != io.EOF {
			var he *Error
			if errors.As(err, &he) {
				if he.Stream {
					b.c.resetStream(b.str, he.Code)
				} else {
					b.c.fail(err)
				}
			}
		} else {
			b.eofCheck = true
		}
		b.err = err
		b.putReader() // no Read touches br after a sticky error
		b.mu.Unlock()
		if err == io.EOF && b.req != nil {
			b.req.rb.close()
		}
	}
	return n, err
}

// putReader returns a pooled br to the pool. b.rmu held.
func (b *body) putReader() {
	if b.pooledBR && b.br != nil {
		b.br.Reset(nil)
		readerPool.Put(b.br)
		b.br = nil
	}
}

func (b *body) read(p []byte) (int, error) {
	for b.remaining == 0 {
		// A trailer section is bounded as the header section is (RFC
		// 9114, Section 4.2.2).
		f, err := readFrameWithin(b.br, maxEncodedFieldSection(b.c.ours.MaxFieldSectionSize))
		if err == io.EOF {
			// "A request or response that is defined as having content
			// when it contains a Content-Length header field is malformed
			// if the value of the Content-Length header field does not
			// equal the sum of the DATA frame lengths received." (Section
			// 4.1.2)
			if b.contentLength >= 0 && b.n != b.contentLength {
				return 0, streamError(ErrCodeMessageError, "content-length %d, received %d", b.contentLength, b.n)
			}
			return 0, io.EOF
		}
		if err != nil {
			return 0, truncated(err)
		}
		b.c.traceFrame(b.str.StreamID(), &f)
		switch f.Type {
		case frameData:
			// The frame header already tells whether the content goes
			// past its Content-Length: refuse it before any of its bytes
			// reach the reader, since "intermediaries ... MUST NOT
			// forward a malformed request or response" and "Clients
			// MUST NOT accept a malformed response" (Section 4.1.2).
			if b.contentLength >= 0 && f.Length > uint64(b.contentLength-b.n) {
				return 0, streamError(ErrCodeMessageError, "DATA frame of %d bytes after %d of content-length %d", f.Length, b.n, b.contentLength)
			}
			b.remaining = f.Length
		case frameHeaders:
			return 0, b.readTrailers(f.Payload)
		default:
			return 0, unexpectedOnRequestStream(b.c, f.Type)
		}
	}
	if uint64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.br.Read(p)
	b.remaining -= uint64(n)
	b.n += int64(n)
	if err == io.EOF {
		if b.remaining > 0 {
			return n, truncated(err)
		}
		err = nil
	}
	return n, err
}

// readTrailers decodes the trailer section, after which the stream must
// end: "Receipt of an invalid sequence of frames MUST be treated as a
// connection error of type H3_FRAME_UNEXPECTED." (Section 4.1)
func (b *body) readTrailers(block []byte) error {
	fields, err := b.c.decodeHeaders(b.ctx, b.str.StreamID(), block, nil)
	if err != nil {
		return err
	}
	_, h, err := splitFields(fields)
	if err != nil {
		return err
	}
	if f, err := readFrame(b.br); err != io.EOF {
		if err != nil {
			return truncated(err)
		}
		return unexpectedOnRequestStream(b.c, f.Type)
	}
	if b.contentLength >= 0 && b.n != b.contentLength {
		return streamError(ErrCodeMessageError, "content-length %d, received %d", b.contentLength, b.n)
	}
	if b.trailer != nil {
		if *b.trailer == nil {
			*b.trailer = make(http.Header)
		}
		for k, vs := range h {
			(*b.trailer)[k] = vs
		}
	}
	return io.EOF
}

// Close stops reading: if the message did not end, the peer is asked to
// stop sending with H3_REQUEST_CANCELLED (client) or H3_NO_ERROR (server,
// whose response is complete or being sent).
func (b *body) Close() error {
	b.mu.Lock()
	done := b.eofCheck || b.ended
	first := !b.closed
	b.closed = true
	if b.err == nil {
		b.err = errBodyClosed
	}
	b.mu.Unlock()
	if !first {
		return nil
	}
	if !done {
		code := ErrCodeRequestCancelled
		if b.c.isServer {
			code = ErrCodeNoError
		}
		if b.closeCode != 0 {
			code = b.closeCode
		}
		b.c.stopReading(b.str, code)
	}
	if b.req != nil {
		b.req.stop() // counts the request done
	}
	if b.pooledBR && b.rmu.TryLock() {
		// No Read in progress, and any later one stops at b.err.
		b.putReader()
		b.rmu.Unlock()
	}
	return nil
}
