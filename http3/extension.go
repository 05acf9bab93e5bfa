package http3

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/quicstack/quic"
)

// Extensions are the hooks through which a package outside http3 adds an
// HTTP/3 extension that needs more than extended CONNECT and datagrams:
// settings of its own, a unidirectional stream type, and bidirectional
// streams that start with a signal value instead of a frame, as
// WebTransport does (draft-ietf-webtrans-http3, Sections 4.2 and 4.3;
// package webtransport sets them up). Set them on a Server or Transport
// before it is used; they must not change afterwards.
//
// The handlers are called on a goroutine of their own per stream, and
// own the stream from then on. They must not block for long: the
// server's handler slots (Server.MaxConcurrentHandlers) count a
// bidirectional stream until its handler returns.
type Extensions struct {
	// Settings are sent in the SETTINGS frame after this package's own.
	// Identifiers that this package sends itself (1, 6, 7, 8 and 0x33),
	// the reserved HTTP/2 ones (0, 2 to 5) and repeated ones are left
	// out: "The same setting identifier MUST NOT occur more than once in
	// the SETTINGS frame" (RFC 9114, Section 7.2.4).
	Settings []Setting

	// UniStream, if not nil, is offered each unidirectional stream of a
	// type that HTTP/3 and QPACK do not define (RFC 9114, Section 6.2),
	// with r reading the stream after its type. It returns false if it
	// does not know the type either, and the stream's data are then
	// discarded: "Recipients of unknown stream types MUST either abort
	// reading of the stream or discard incoming data without further
	// processing."
	UniStream func(qc *quic.Conn, streamType uint64, str *quic.ReceiveStream, r io.Reader) bool

	// BidiStream, if not nil, is offered the bidirectional streams that
	// start with a value other than a HEADERS frame's type: on a server,
	// request streams (before Server.ReadHeaderTimeout runs out); on a
	// client, every stream the server opens. r reads the stream after
	// that first variable-length integer. It returns false if it does
	// not take the stream: a server then reads the stream as a request
	// (a frame of an unknown type is skipped, RFC 9114, Section 9), and a
	// client closes the connection with H3_STREAM_CREATION_ERROR, as
	// without the hook (Section 6.1).
	BidiStream func(qc *quic.Conn, signal uint64, str *quic.Stream, r io.Reader) bool

	// Goaway, if not nil, is called on the control stream's goroutine
	// each time the peer's GOAWAY frame arrives (RFC 9114, Section 5.2),
	// which for WebTransport "is also a signal to applications to
	// initiate shutdown for all WebTransport sessions"
	// (draft-ietf-webtrans-http3, Section 4.7). It must not block.
	Goaway func(qc *quic.Conn)
}

// ownSettings are the identifiers this package sends, or that RFC 9114
// reserves: Extensions.Settings leaves them out.
func ownSetting(id uint64) bool {
	switch id {
	case 0x0, 0x2, 0x3, 0x4, 0x5,
		settingQPACKMaxTableCapacity, settingMaxFieldSectionSize, settingQPACKBlockedStreams,
		settingEnableConnectProtocol, settingH3Datagram:
		return true
	}
	return false
}

// apply sets the extension up on a connection before it starts: its
// settings are appended to ours, leaving out those that ownSetting names
// and repeated identifiers.
func (e *Extensions) apply(c *connection) {
	if e == nil {
		return
	}
	c.uniStream = e.UniStream
	c.goaway = e.Goaway
	ours := &c.ours
	seen := make(map[uint64]bool, len(ours.Other)+len(e.Settings))
	for _, kv := range ours.Other {
		seen[kv[0]] = true
	}
	for _, s := range e.Settings {
		if ownSetting(s.ID) || seen[s.ID] || s.ID >= 1<<62 || s.Value >= 1<<62 {
			continue
		}
		seen[s.ID] = true
		ours.Other = append(ours.Other, [2]uint64{s.ID, s.Value})
	}
}

// waitPeerSettings returns the peer's SETTINGS once they arrived, or an
// error when ctx ends or the connection closes first.
func (c *connection) waitPeerSettings(ctx context.Context) ([]Setting, error) {
	select {
	case <-c.peerSettingsDone:
		return c.peerSettings.list(), nil
	case <-c.qc.Context().Done():
		return nil, context.Cause(c.qc.Context())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// An ExtendedConnectWriter is implemented by the http.ResponseWriter of
// this package's Server, for the handlers of extended CONNECT protocols
// (RFC 9220) that look at the connection before they accept a request:
// WebTransport needs the client's SETTINGS ("the server MUST NOT process
// any incoming WebTransport requests until the client's SETTINGS have
// been received", draft-ietf-webtrans-http3, Section 3.1) and opens
// streams on the QUIC connection.
type ExtendedConnectWriter interface {
	HTTPStreamer
	// QUICConn returns the QUIC connection the request came on.
	QUICConn() *quic.Conn
	// PeerSettings returns every setting of the client's SETTINGS frame,
	// waiting for it until ctx ends or the connection closes.
	PeerSettings(ctx context.Context) ([]Setting, error)
}

var _ ExtendedConnectWriter = (*responseWriter)(nil)

// QUICConn implements ExtendedConnectWriter.
func (w *responseWriter) QUICConn() *quic.Conn { return w.sc.qc }

// PeerSettings implements ExtendedConnectWriter.
func (w *responseWriter) PeerSettings(ctx context.Context) ([]Setting, error) {
	return w.sc.waitPeerSettings(ctx)
}

// QUICConn returns the QUIC connection the stream belongs to.
func (s *RequestStream) QUICConn() *quic.Conn { return s.c.qc }

// PeerSettings returns every setting of the peer's SETTINGS frame,
// waiting for it until ctx ends or the connection closes.
func (s *RequestStream) PeerSettings(ctx context.Context) ([]Setting, error) {
	return s.c.waitPeerSettings(ctx)
}

// OpenRequestStreamIf is OpenRequestStream with a condition on the
// server's SETTINGS: once they arrived, and before the request is sent,
// accept is called with the QUIC connection and every setting the
// server sent; an error it returns is returned, and nothing is sent.
// accept may still change req's header (its :protocol too). An extension uses it to honour a rule
// such as "Clients MUST NOT attempt to establish WebTransport sessions
// ... until they have received the setting indicating WebTransport
// support from the server" (draft-ietf-webtrans-http3, Section 3.1).
func (t *Transport) OpenRequestStreamIf(req *http.Request, accept func(qc *quic.Conn, peer []Setting) error) (*http.Response, *RequestStream, error) {
	return t.openRequestStream(req, accept)
}

// offerBidiStream offers a request stream that does not start with a
// HEADERS frame to the server's Extensions.BidiStream, and reports
// whether it took the stream. br, reset to str, is left as it was if
// not: the first value is only peeked at.
func (sc *serverConn) offerBidiStream(str *quic.Stream, br *bufio.Reader) bool {
	ext := sc.srv.Extensions
	if ext == nil || ext.BidiStream == nil {
		return false
	}
	if d := sc.srv.readHeaderTimeout(); d > 0 {
		str.SetReadDeadline(time.Now().Add(d))
		defer str.SetReadDeadline(time.Time{})
	}
	signal, n, ok := peekVarint(br)
	if !ok || signal == frameHeaders {
		return false
	}
	// The hook gets a reader of its own: br goes back to the pool.
	br.Discard(n)
	rest := make([]byte, br.Buffered())
	br.Read(rest)
	return ext.BidiStream(sc.qc, signal, str, io.MultiReader(bytes.NewReader(rest), str))
}

// peekVarint returns the variable-length integer at the start of br
// and its length, without consuming it; false if the stream ended or
// failed first.
func peekVarint(br *bufio.Reader) (v uint64, n int, ok bool) {
	b, err := br.Peek(1)
	if err != nil {
		return 0, 0, false
	}
	n = 1 << (b[0] >> 6)
	b, err = br.Peek(n)
	if err != nil {
		return 0, 0, false
	}
	v, _, err = parseVarint(b)
	return v, n, err == nil
}

// acceptServerStreams hands the bidirectional streams a server opens to
// the Transport's Extensions.BidiStream; a stream it does not take closes
// the connection: "Clients MUST treat receipt of a server-initiated
// bidirectional stream as a connection error of type
// H3_STREAM_CREATION_ERROR unless such an extension has been negotiated"
// (RFC 9114, Section 6.1).
func (cc *clientConn) acceptServerStreams(take func(qc *quic.Conn, signal uint64, str *quic.Stream, r io.Reader) bool) {
	for {
		str, err := cc.qc.AcceptStream(cc.qc.Context())
		if err != nil {
			return
		}
		go func() {
			br := bufio.NewReader(str)
			signal, err := readVarint(br)
			if err != nil {
				return // reset or closed before its first value
			}
			if !take(cc.qc, signal, str, br) {
				cc.closeWithError(ErrCodeStreamCreationError, "server-initiated bidirectional stream")
			}
		}()
	}
}
