package quic

import (
	"context"
	"time"

	"github.com/quicstack/quic/wire"
)

// StreamID identifies a stream within a connection (RFC 9000, Section 2.1).
type StreamID = wire.StreamID

// A Stream is a bidirectional QUIC stream. Read and Write may be called
// concurrently with each other and with the other methods; concurrent
// Reads (or concurrent Writes) are serialized.
//
// What ends a direction ends the calls blocked on it and fails later
// ones:
//   - CloseWrite, and Close: a Write blocked on the full send buffer
//     returns, with the count of bytes it buffered and an error matching
//     net.ErrClosed, as later Writes do; what was written, up to that
//     count, is delivered with a FIN;
//   - CancelWrite, or the peer's STOP_SENDING: Writes return a
//     *StreamError, and data not yet delivered is discarded;
//   - CancelRead, and Close: Reads return a *StreamError (not Remote),
//     unless everything up to the peer's FIN was read; the peer's
//     RESET_STREAM: Reads return a *StreamError with Remote set;
//   - a deadline (SetDeadline, SetReadDeadline, SetWriteDeadline) that
//     passes: the calls waiting return os.ErrDeadlineExceeded;
//   - the connection's end: every call returns the connection's error
//     (see Conn).
//
// None of these methods waits for the peer.
type Stream struct{ s *stream }

// A SendStream is the sending half of a stream: a unidirectional stream
// this endpoint opened. Closing it, cancelling it and its deadline end
// the Writes in progress as for a Stream.
type SendStream struct{ s *stream }

// A ReceiveStream is the receiving half of a stream: a unidirectional
// stream the peer opened. Cancelling it and its deadline end the Reads in
// progress as for a Stream.
type ReceiveStream struct{ s *stream }

// StreamID returns the stream's ID.
func (s *Stream) StreamID() StreamID { return s.s.id }

// Read reads data the peer sent, blocking until some is available. It
// returns io.EOF after the peer's FIN and all data are read, a *StreamError
// after the peer reset the stream (RESET_STREAM) or CancelRead was called,
// os.ErrDeadlineExceeded (a net.Error with Timeout() true) after the read
// deadline, and the connection's error once it closed.
func (s *Stream) Read(p []byte) (int, error) { return s.s.read(p) }

// Write writes data to the stream, blocking while the send buffer (1 MiB)
// is full. It returns a *StreamError after the peer asked to stop
// (STOP_SENDING) or CancelWrite was called, os.ErrDeadlineExceeded after
// the write deadline, and an error matching net.ErrClosed after CloseWrite
// or Close, which also end a Write blocked at the time.
func (s *Stream) Write(p []byte) (int, error) { return s.s.write(p) }

// CloseWrite ends the sending direction gracefully: the data written so
// far is delivered, followed by a FIN. It does not block.
func (s *Stream) CloseWrite() error { return s.s.closeWrite() }

// CancelWrite abandons the sending direction: data not yet delivered is
// discarded and the peer gets a RESET_STREAM with code (RFC 9000,
// Section 3.1).
func (s *Stream) CancelWrite(code StreamErrorCode) { s.s.cancelWrite(code) }

// CancelWriteAt is CancelWrite, except that the first reliableSize bytes
// written are still delivered, retransmitted as needed, before the peer
// learns of the reset: a RESET_STREAM_AT frame
// (draft-ietf-quic-reliable-stream-reset), when both sides enabled it
// (Config.EnableResetStreamAt, ConnectionState.SupportsResetStreamAt);
// otherwise a RESET_STREAM, as CancelWrite sends. Writes fail afterwards
// as after CancelWrite. A reliableSize above what was written means
// everything written.
func (s *Stream) CancelWriteAt(code StreamErrorCode, reliableSize uint64) {
	s.s.cancelWriteAt(code, reliableSize)
}

// CancelRead abandons the receiving direction: buffered data is discarded
// and, if more was expected, the peer gets a STOP_SENDING with code
// (RFC 9000, Section 3.5).
func (s *Stream) CancelRead(code StreamErrorCode) { s.s.cancelRead(code) }

// Close releases both directions, as users of io.Closer and net.Conn
// expect: it is CloseWrite (the written data and a FIN are still
// delivered) followed by CancelRead(0) unless the peer already finished
// sending, so that the peer stops sending data nobody will read. Reads
// then fail with a *StreamError saying that the stream was read after
// Close.
//
// This differs from quic-go, whose Stream.Close closes only the sending
// direction. To send a request and then read the response, use
// CloseWrite:
//
//	s.Write(request)
//	s.CloseWrite()              // FIN: the request is complete
//	resp, err := io.ReadAll(s)  // the peer's answer, up to its FIN
func (s *Stream) Close() error {
	s.s.closeBoth()
	return nil
}

// SetDeadline sets the read and write deadlines.
func (s *Stream) SetDeadline(t time.Time) error {
	s.s.setReadDeadline(t)
	s.s.setWriteDeadline(t)
	return nil
}

// SetReadDeadline sets the deadline for Read calls, current and future.
// The zero time means none.
func (s *Stream) SetReadDeadline(t time.Time) error { s.s.setReadDeadline(t); return nil }

// SetWriteDeadline sets the deadline for Write calls, current and future.
// The zero time means none.
func (s *Stream) SetWriteDeadline(t time.Time) error { s.s.setWriteDeadline(t); return nil }

// Context is cancelled when the stream is finished in both directions or
// the connection ends.
func (s *Stream) Context() context.Context { return s.s.context() }

// StreamID returns the stream's ID.
func (s *SendStream) StreamID() StreamID { return s.s.id }

// Write writes data; see Stream.Write.
func (s *SendStream) Write(p []byte) (int, error) { return s.s.write(p) }

// CloseWrite ends the stream gracefully with a FIN; see Stream.CloseWrite.
func (s *SendStream) CloseWrite() error { return s.s.closeWrite() }

// Close is CloseWrite, for io.Closer.
func (s *SendStream) Close() error { return s.s.closeWrite() }

// CancelWrite resets the stream; see Stream.CancelWrite.
func (s *SendStream) CancelWrite(code StreamErrorCode) { s.s.cancelWrite(code) }

// CancelWriteAt resets the stream but delivers its first reliableSize
// bytes; see Stream.CancelWriteAt.
func (s *SendStream) CancelWriteAt(code StreamErrorCode, reliableSize uint64) {
	s.s.cancelWriteAt(code, reliableSize)
}

// SetWriteDeadline sets the deadline for Write calls.
func (s *SendStream) SetWriteDeadline(t time.Time) error { s.s.setWriteDeadline(t); return nil }

// Context is cancelled when the stream is finished or the connection ends.
func (s *SendStream) Context() context.Context { return s.s.context() }

// StreamID returns the stream's ID.
func (s *ReceiveStream) StreamID() StreamID { return s.s.id }

// Read reads data; see Stream.Read.
func (s *ReceiveStream) Read(p []byte) (int, error) { return s.s.read(p) }

// CancelRead stops receiving; see Stream.CancelRead.
func (s *ReceiveStream) CancelRead(code StreamErrorCode) { s.s.cancelRead(code) }

// Close is CancelRead(0) unless all data was read, for io.Closer.
func (s *ReceiveStream) Close() error { s.s.cancelRead(0); return nil }

// SetReadDeadline sets the deadline for Read calls.
func (s *ReceiveStream) SetReadDeadline(t time.Time) error { s.s.setReadDeadline(t); return nil }

// Context is cancelled when the stream is finished or the connection ends.
func (s *ReceiveStream) Context() context.Context { return s.s.context() }

// ReceivedEarlyData reports whether some of the stream's data arrived in
// 0-RTT packets (see Config.Allow0RTT). Such data can be replayed by an
// attacker, who may record it and send it again in another connection: a
// server should act on it only if the request is idempotent, or else wait
// for Conn.HandshakeComplete before acting (RFC 9001, Section 9.2;
// RFC 8446, Section 8).
func (s *Stream) ReceivedEarlyData() bool { return s.s.receivedEarlyData() }

// ReceivedEarlyData is as for Stream.ReceivedEarlyData.
func (s *ReceiveStream) ReceivedEarlyData() bool { return s.s.receivedEarlyData() }

func (s *stream) receivedEarlyData() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recv0RTT
}
