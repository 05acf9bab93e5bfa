package quic

import (
	"errors"
	"fmt"

	"github.com/quicstack/quic/wire"
)

// TransportErrorCode is a QUIC transport error code (RFC 9000, Section 20.1).
type TransportErrorCode = wire.TransportErrorCode

// ApplicationErrorCode is an application protocol's error code, carried in
// CONNECTION_CLOSE frames of type 0x1d, RESET_STREAM and STOP_SENDING
// (RFC 9000, Section 20.2).
type ApplicationErrorCode uint64

// StreamErrorCode is an application error code for one stream.
type StreamErrorCode = ApplicationErrorCode

// TransportError is a connection closed with a transport error code, by
// this endpoint or by the peer (Remote).
type TransportError struct {
	Code TransportErrorCode
	// FrameType is the frame that triggered the error, if known.
	FrameType wire.FrameType
	Reason    string
	// Remote reports that the peer closed the connection.
	Remote bool
}

func (e *TransportError) Error() string {
	side := "local"
	if e.Remote {
		side = "remote"
	}
	s := fmt.Sprintf("quic: %s transport error %v", side, e.Code)
	if e.FrameType != 0 {
		s += " (frame " + e.FrameType.String() + ")"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Is makes errors.Is(err, &TransportError{Code: c}) match any transport
// error with code c.
func (e *TransportError) Is(target error) bool {
	t, ok := target.(*TransportError)
	return ok && t.Code == e.Code
}

// ApplicationError is a connection closed by an application with its own
// error code, locally (CloseWithError) or by the peer (Remote).
type ApplicationError struct {
	Code   ApplicationErrorCode
	Reason string
	Remote bool
}

func (e *ApplicationError) Error() string {
	side := "local"
	if e.Remote {
		side = "remote"
	}
	return fmt.Sprintf("quic: %s application error %#x: %s", side, uint64(e.Code), e.Reason)
}

// Is makes errors.Is(err, &ApplicationError{Code: c}) match any application
// error with code c.
func (e *ApplicationError) Is(target error) bool {
	t, ok := target.(*ApplicationError)
	return ok && t.Code == e.Code
}

// IdleTimeoutError is returned when the connection closed because nothing
// was received for the idle timeout (RFC 9000, Section 10.1). It is a
// net.Error whose Timeout method returns true.
type IdleTimeoutError struct{}

func (*IdleTimeoutError) Error() string   { return "quic: idle timeout" }
func (*IdleTimeoutError) Timeout() bool   { return true }
func (*IdleTimeoutError) Temporary() bool { return false }

// HandshakeTimeoutError is returned when the handshake did not complete
// within Config.HandshakeIdleTimeout of inactivity. It is a net.Error whose
// Timeout method returns true.
type HandshakeTimeoutError struct{}

func (*HandshakeTimeoutError) Error() string   { return "quic: handshake timeout" }
func (*HandshakeTimeoutError) Timeout() bool   { return true }
func (*HandshakeTimeoutError) Temporary() bool { return false }

// StatelessResetError is returned when the peer reset the connection with a
// stateless reset (RFC 9000, Section 10.3): it lost the connection's state.
type StatelessResetError struct{}

func (*StatelessResetError) Error() string { return "quic: received a stateless reset" }

// VersionNegotiationError is returned by a client when the server supports
// none of the versions it offered (RFC 9000, Section 6).
type VersionNegotiationError struct {
	Ours   []wire.Version
	Theirs []wire.Version
}

func (e *VersionNegotiationError) Error() string {
	return fmt.Sprintf("quic: no common version (ours %v, theirs %v)", e.Ours, e.Theirs)
}

// StreamError is returned by stream operations after the stream was reset
// (RESET_STREAM) or reading was stopped (STOP_SENDING).
type StreamError struct {
	StreamID wire.StreamID
	Code     StreamErrorCode
	// Remote reports that the peer reset or stopped the stream.
	Remote bool

	afterClose bool // a Read after Stream.Close (stream_close.go)
}

func (e *StreamError) Error() string {
	if e.afterClose {
		return readAfterCloseMessage(e.StreamID)
	}
	side := "local"
	if e.Remote {
		side = "remote"
	}
	return fmt.Sprintf("quic: stream %d canceled by %s with code %#x", e.StreamID, side, uint64(e.Code))
}

// errClosed is returned by operations on a connection that closed without
// a more specific cause; it matches net.ErrClosed.
var errClosed error = &closedError{"quic: connection closed"}

// transportErrorFrom turns an internal error into the *TransportError the
// connection closes with: wire and handshake errors keep their code, and
// anything else is an INTERNAL_ERROR.
func transportErrorFrom(err error) *TransportError {
	var te *wire.TransportError
	if errors.As(err, &te) {
		return &TransportError{Code: te.Code, FrameType: te.FrameType, Reason: te.Reason}
	}
	var pe *TransportError
	if errors.As(err, &pe) {
		return pe
	}
	return &TransportError{Code: wire.InternalError, Reason: err.Error()}
}
