package webtransport

import (
	"errors"
	"fmt"
)

// A StreamErrorCode is a WebTransport application error code for
// resetting a stream: "WebTransport application errors for streams are
// limited to an unsigned 32-bit integer" (draft-ietf-webtrans-http3,
// Section 4.4). On the wire it is mapped into the HTTP/3 error code range
// WT_APPLICATION_ERROR.
type StreamErrorCode uint32

// A SessionErrorCode is the application error code of a WT_CLOSE_SESSION
// capsule (Section 6).
type SessionErrorCode uint32

// A StreamError is returned by the Read and Write methods of a stream
// that was reset, by the peer (RESET_STREAM, STOP_SENDING; Remote) or by
// this endpoint (CancelRead, CancelWrite).
type StreamError struct {
	// ErrorCode is the application's error code; it is zero when
	// HasCode is false.
	ErrorCode StreamErrorCode
	// HasCode is false when the reset carried an HTTP/3 error code
	// outside the WebTransport application range, such as
	// WT_SESSION_GONE: "the stream is still considered reset, but the
	// error code is not mapped to a WebTransport application error code"
	// (Section 4.4).
	HasCode bool
	// SessionGone is set when the peer reset the stream because its
	// session ended (WT_SESSION_GONE, Section 6).
	SessionGone bool
	// Remote is set when the peer reset the stream.
	Remote bool
}

func (e *StreamError) Error() string {
	by := "locally"
	if e.Remote {
		by = "by the peer"
	}
	switch {
	case e.SessionGone:
		return "webtransport: stream reset " + by + ": session gone"
	case !e.HasCode:
		return "webtransport: stream reset " + by + " without an application error code"
	}
	return fmt.Sprintf("webtransport: stream reset %s with code %d", by, e.ErrorCode)
}

// A SessionError is the error of a session that ended with a
// WT_CLOSE_SESSION capsule, or with the clean end of its CONNECT stream,
// "semantically equivalent to terminating it with a WT_CLOSE_SESSION
// capsule that has an error code of 0 and an empty error string"
// (Section 6). Remote tells which side closed it.
type SessionError struct {
	ErrorCode SessionErrorCode
	Message   string
	Remote    bool
}

func (e *SessionError) Error() string {
	by := "locally"
	if e.Remote {
		by = "by the peer"
	}
	if e.Message == "" {
		return fmt.Sprintf("webtransport: session closed %s with code %d", by, e.ErrorCode)
	}
	return fmt.Sprintf("webtransport: session closed %s with code %d: %s", by, e.ErrorCode, e.Message)
}

// ErrSessionGone is returned by the operations of a stream whose session
// ended: its streams are reset with WT_SESSION_GONE (Section 6).
var ErrSessionGone = errors.New("webtransport: session gone")

// errTooManyStreams is returned by OpenStream and OpenUniStream when the
// peer's WT_MAX_STREAMS limit (or QUIC's) is reached.
var errTooManyStreams = errors.New("webtransport: too many open streams")

// ErrNotSupported is returned by Dial when the server does not offer
// WebTransport, or lacks what it needs: extended CONNECT, HTTP/3
// datagrams or QUIC datagrams (Section 3.1).
var ErrNotSupported = errors.New("webtransport: server does not support WebTransport over HTTP/3")
