package http3

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/quicstack/quic"
)

// A RequestStream is an HTTP/3 request stream that the application uses
// directly once the request and response headers have been exchanged: the
// stream of an extended CONNECT request (RFC 9220) such as WebTransport,
// WebSockets or MASQUE, with its HTTP datagrams (RFC 9297). A server
// handler gets it from its ResponseWriter (see HTTPStreamer), a client
// from Transport.OpenRequestStream.
//
// Read and Write carry the message content, as the payload of DATA frames
// (RFC 9114, Section 7.2.1); ReadCapsule and WriteCapsule frame it as
// capsules (RFC 9297, Section 3.2) for protocols that use the Capsule
// Protocol. SendDatagram and ReceiveDatagram exchange HTTP/3 datagrams
// associated with the stream (RFC 9297, Section 2.1), which needs
// datagrams enabled on both sides (Server.EnableDatagrams,
// Transport.EnableDatagrams).
//
// One goroutine may read (Read, ReadCapsule) while another writes (Write,
// WriteCapsule); datagrams may be sent and received from any goroutine.
type RequestStream struct {
	c    *connection
	str  *quic.Stream
	body *body
	dgq  *datagramQueue

	wmu        sync.Mutex
	hdr        [16]byte
	sendClosed bool // CloseWrite or CancelWrite was called

	cbr *bufio.Reader // ReadCapsule's buffer
}

func newRequestStream(c *connection, str *quic.Stream, b *body, dgq *datagramQueue) *RequestStream {
	b.closeCode = ErrCodeNoError
	return &RequestStream{c: c, str: str, body: b, dgq: dgq}
}

// HTTPStreamer is implemented by the http.ResponseWriter of this package's
// Server. HTTPStream sends the response header (status 200 unless the
// handler called WriteHeader with another) and hands the request stream
// to the handler, which then owns it: the stream stays open after the
// handler returns, until the handler's code closes it. Writes through the
// ResponseWriter fail with http.ErrHijacked afterwards, and the request
// Body must not be read any more. Like hijacked connections in net/http,
// such streams are not waited for by Server.Shutdown beyond a few
// seconds, and Server.Close ends them with their connection.
//
//	func(w http.ResponseWriter, r *http.Request) {
//		if r.Method != http.MethodConnect || r.Header.Get(":protocol") != "my-proto" {
//			w.WriteHeader(http.StatusNotImplemented)
//			return
//		}
//		str := w.(http3.HTTPStreamer).HTTPStream()
//		go serveMyProto(str)
//	}
type HTTPStreamer interface {
	HTTPStream() *RequestStream
}

var _ HTTPStreamer = (*responseWriter)(nil)

// HTTPStream implements HTTPStreamer.
func (w *responseWriter) HTTPStream() *RequestStream {
	if w.rs != nil {
		return w.rs
	}
	if !w.wroteHeader {
		w.setStatus(http.StatusOK)
	}
	w.commit()
	w.flush()
	if w.err == errSwitchingProtocols {
		w.sc.resetStream(w.str, ErrCodeInternalError)
	}
	w.streamed = true
	w.rs = newRequestStream(w.sc.connection, w.str, w.body, w.dgq)
	return w.rs
}

// StreamID returns the QUIC stream ID of the request stream.
func (s *RequestStream) StreamID() quic.StreamID { return s.str.StreamID() }

// Context is cancelled when the stream is finished in both directions or
// the connection ends.
func (s *RequestStream) Context() context.Context { return s.str.Context() }

// Read reads the peer's content (the payload of its DATA frames). It
// returns io.EOF when the peer ended the stream; a trailer section, if the
// peer sends one, ends the content too.
func (s *RequestStream) Read(p []byte) (int, error) {
	return s.body.Read(p)
}

// Write sends p as one DATA frame.
func (s *RequestStream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.str.Write(appendDataFrameHeader(s.hdr[:0], uint64(len(p)))); err != nil {
		return 0, err
	}
	if s.c.tr != nil {
		s.c.traceCreated(FrameInfo{StreamID: s.str.StreamID(), Type: frameData, Length: uint64(len(p))})
	}
	return s.str.Write(p)
}

// ReadCapsule reads the next capsule from the content, with a value of at
// most max bytes (DefaultMaxCapsuleSize if max is 0). It returns io.EOF at
// the end of the stream. A truncated or too large capsule makes the
// message malformed (RFC 9297, Section 3.3): the stream is reset with
// H3_MESSAGE_ERROR and the error returned. Capsules of unknown types are
// returned too; "Endpoints which receive a Capsule with an unknown Capsule
// Type MUST silently drop that Capsule" (Section 3.2) is the caller's to
// apply. Do not mix ReadCapsule with Read.
func (s *RequestStream) ReadCapsule(max int) (Capsule, error) {
	if s.cbr == nil {
		s.cbr = bufio.NewReaderSize(s, 4096)
	}
	c, err := ReadCapsule(s.cbr, max)
	if err == ErrCapsuleTruncated || err == ErrCapsuleTooLarge {
		s.c.resetStream(s.str, ErrCodeMessageError)
	}
	return c, err
}

// WriteCapsule sends a capsule of type typ with value, in one DATA frame.
func (s *RequestStream) WriteCapsule(typ uint64, value []byte) error {
	_, err := s.Write(AppendCapsule(make([]byte, 0, 16+len(value)), typ, value))
	return err
}

// SendDatagram sends p as an HTTP/3 datagram of this stream, unreliably
// (RFC 9297, Section 2.1). It fails with ErrDatagramsNotSupported unless
// both sides negotiated HTTP/3 datagrams, and after CloseWrite: "HTTP/3
// Datagrams MUST NOT be sent unless the corresponding stream's send side
// is open".
func (s *RequestStream) SendDatagram(p []byte) error {
	if s.dgq == nil {
		return ErrDatagramsNotSupported
	}
	s.wmu.Lock()
	closed := s.sendClosed
	s.wmu.Unlock()
	if closed {
		return errors.New("http3: send side of the request stream closed")
	}
	return s.c.sendDatagram(s.str.StreamID(), p)
}

// ReceiveDatagram returns the next HTTP/3 datagram of this stream, waiting
// until one arrives, ctx is done or the stream ends. At most 64 wait to
// be received; older ones are dropped first.
func (s *RequestStream) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	if s.dgq == nil {
		return nil, ErrDatagramsNotSupported
	}
	return s.dgq.pop(ctx, s.str.Context().Done())
}

// CloseWrite ends the content with a FIN; reading is not affected.
func (s *RequestStream) CloseWrite() error {
	s.wmu.Lock()
	s.sendClosed = true
	s.wmu.Unlock()
	return s.str.CloseWrite()
}

// Close ends the content with a FIN and stops reading: if the peer is
// still sending, it is asked to stop with H3_NO_ERROR.
func (s *RequestStream) Close() error {
	err := s.CloseWrite()
	s.body.Close()
	return err
}

// CancelRead stops reading, asking the peer to stop sending with code.
func (s *RequestStream) CancelRead(code ErrCode) {
	s.c.stopReading(s.str, code)
}

// CancelWrite abandons sending with code (RFC 9220, Section 3: a reset
// of the stream is "a stream error ... of type H3_REQUEST_CANCELLED",
// the way a TCP RST is signalled).
func (s *RequestStream) CancelWrite(code ErrCode) {
	s.wmu.Lock()
	s.sendClosed = true
	s.wmu.Unlock()
	s.str.CancelWrite(quic.StreamErrorCode(code))
}
