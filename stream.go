package quic

import (
	"context"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/flowcontrol"
	"github.com/quicstack/quic/wire"
)

// stream is the state of one stream, shared by the connection goroutine
// (frames in and out) and application goroutines (Read, Write, Close),
// which take turns under mu. Application goroutines never touch flow
// control or the connection: they record what they did and queue the
// stream for the connection goroutine (streamsMap.markAttention), which
// applies it with the current time.
//
// Concurrency discipline, one class per field:
//
//	class                      fields
//	immutable after newStream  id, m, ctx, cancel, hasRecv, hasSend
//	guarded by m.mu            inAttention, accepted, prio (the priority
//	                           the application set: priority.go)
//	connection goroutine only  inSendable, ctlPending, creditWait,
//	                           parkedAt, held, sched, appPrio (prio as
//	                           processAttention last copied it)
//	guarded by mu              every other field from mu on
//
// There is no atomic: the application's changes reach the connection
// goroutine through the attention list (streamsMap.noteRead) and its one
// wake flag.
//
// mu is never held while m.mu is taken or while blocking: a blocked Read
// or Write waits on readCh or writeCh (one pending signal each) with mu
// released.
type stream struct {
	id wire.StreamID
	m  *streamsMap
	// ctx is made on the first call of context (most streams' Contexts
	// are never asked for: a client's request streams); finished records
	// that it is cancelled, or is to be made cancelled. Both are guarded
	// by mu.
	ctx      context.Context
	cancel   context.CancelFunc
	finished bool

	// inAttention and accepted are guarded by m.mu, not mu; inSendable,
	// ctlPending, creditWait and parkedAt are the connection goroutine's.
	// ctlPending records stopPending || resetPending as that goroutine
	// last saw them (every change reaches it: the application's through
	// applyAppChanges), so that it can tell without mu that the stream
	// has no control frame to send; flow control is its own state.
	// creditWait records that wantsToSend last found only new data that
	// waits for stream credit, and parkedAt is the stream's index in
	// streamsMap.parked plus one, 0 when it is not there.
	inAttention, inSendable bool
	ctlPending              bool
	creditWait              bool
	parkedAt                int
	accepted                bool // the application accepted this peer-opened stream
	// held, the connection goroutine's: opened in rejected 0-RTT beyond
	// the server's real stream limit, the stream sends nothing until the
	// limit rises (conn_early.go).
	held bool
	// sched is the stream's place in the send order and appPrio the
	// priority it is sent with, the connection goroutine's; prio the
	// priority the application set (encodePriority), guarded by m.mu
	// (priority.go).
	sched   schedNode
	appPrio uint32 // encodePriority; 0 means DefaultPriority
	prio    uint32

	mu      sync.Mutex
	connErr error // the connection ended

	// Receiving part (RFC 9000, Section 3.2).
	hasRecv       bool
	recv          recvBuffer
	recvFC        flowcontrol.StreamReceiver
	resetRecvd    bool // RESET_STREAM arrived
	resetRecvCode uint64
	readCanceled  bool // CancelRead was called
	stopCode      uint64
	stopPending   bool // STOP_SENDING to send
	abandonDue    bool // connection credit of unread data to return
	eofRead       bool
	readConsumed  uint64 // read by the application, not yet given back
	readCh        chan struct{}
	readWaiters   int // readers that found nothing and wait on readCh (see passOn)
	readDeadline  time.Time
	recv0RTT      bool // some of the data arrived in 0-RTT packets
	closedBoth    bool // Stream.Close ended the reading (stream_close.go)

	// Sending part (RFC 9000, Section 3.1).
	hasSend       bool
	send          sendBuffer
	sendFC        flowcontrol.SendWindow
	creditKnown   bool
	sentEnd       uint64 // highest offset sent, the final size of a reset
	finQueued     bool   // CloseWrite was called
	finAcked      bool
	resetPending  bool // RESET_STREAM to send
	resetSent     bool
	resetAcked    bool
	resetCode     uint64
	writeErr      error
	writeCh       chan struct{}
	writeWaiters  int // writers that found the buffer full and wait on writeCh
	writeDeadline time.Time

	// Resets that deliver a prefix (RESET_STREAM_AT, stream_reset_at.go):
	// resetAtRecvd, one arrived, whose data below resetAtRecvSize is still
	// read before the reset is reported; resetAt, the reset this endpoint
	// sends delivers the first resetAtSize bytes.
	resetAtRecvd    bool
	resetAtRecvSize uint64
	resetAt         bool
	resetAtSize     uint64
}

func newStream(m *streamsMap, id wire.StreamID) *stream {
	s := &stream{id: id, m: m, readCh: make(chan struct{}, 1), writeCh: make(chan struct{}, 1)}
	local := id.Initiator() == m.role
	s.hasSend = id.IsBidi() || local
	s.hasRecv = id.IsBidi() || !local
	c := m.c
	if s.hasRecv {
		s.recv = newRecvBuffer(int(min(c.config.MaxStreamReceiveWindow, math.MaxInt)))
		c.initStreamReceiver(&s.recvFC)
	}
	if s.hasSend {
		s.send = newSendBuffer(defaultMaxStreamSendBuffered)
	}
	return s
}

// initSendCredit sets the initial send limit from the peer's transport
// parameters (RFC 9000, Section 18.2): initial_max_stream_data_bidi_remote
// for bidirectional streams this endpoint opened, _bidi_local for those
// the peer opened, _uni for unidirectional ones. It only ever raises the
// limit, so it applies the server's real parameters over the remembered
// ones a client used in 0-RTT (which the server may only have raised,
// RFC 9000, Section 7.4.1). A caller that raises the credit of a stream
// that may wait for it must queue it (streamsMap.markSendable): such a
// stream waits outside the send queue. s.mu must be held.
func (s *stream) initSendCredit(p *wire.TransportParameters) {
	if !s.hasSend {
		return
	}
	s.creditKnown = true
	switch {
	case !s.id.IsBidi():
		s.sendFC.OnMaxData(p.InitialMaxStreamDataUni)
	case s.id.Initiator() == s.m.role:
		s.sendFC.OnMaxData(p.InitialMaxStreamDataBidiRemote)
	default:
		s.sendFC.OnMaxData(p.InitialMaxStreamDataBidiLocal)
	}
}

// notify leaves a wakeup in ch, a channel of capacity 1, unless one is
// there already; it never blocks.
//
// A full channel already holds the wakeup, and its waiter re-checks the
// stream's state under s.mu after taking it: notify returns without the
// channel operation then. A bulk receiver's connection goroutine notified
// its waiting reader for each STREAM frame, about 720,000 times per GB at
// 1,452-byte packets, of which 32,000 found room; each locked the channel
// the reader's goroutine used (issue 28).
func notify(ch chan struct{}) {
	if len(ch) == cap(ch) {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// --- Connection goroutine side ---

func (s *stream) handleStreamFrame(now time.Time, f wire.StreamFrame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.recvFC.OnData(f.Offset, uint64(len(f.Data)), f.Fin); err != nil {
		return err
	}
	if s.resetRecvd || s.readCanceled {
		// Data nobody will read: the peer reset the stream, or the
		// application stopped reading (STOP_SENDING asks the peer to
		// stop). Discarding it drops nothing the application could get.
		return nil
	}
	// Acknowledged data is never dropped: push keeps all of the frame or
	// fails, and a failure closes the connection. Flow control (above)
	// keeps the data within the buffer's capacity, so only fragmentation
	// can fail (errRecvFragmented, RFC 9000, Section 21.7).
	if len(f.Data) > 0 {
		if _, err := s.recv.push(f.Offset, f.Data); err == errRecvFragmented {
			return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeStream,
				Reason: "stream data fragmented into more than 31 pieces within 3968 bytes (RFC 9000, Section 21.7)"}
		} else if err != nil {
			return &wire.TransportError{Code: wire.FlowControlError, FrameType: wire.FrameTypeStream, Reason: err.Error()}
		}
	}
	// A channel operation per packet showed in profiles: only a waiting
	// reader needs one.
	if s.readWaiters > 0 {
		notify(s.readCh)
	}
	return nil
}

// handleResetStream: "An endpoint ... in the Recv or Size Known state
// transitions to Reset Recvd" and the application is told (RFC 9000,
// Section 3.2); the unread data's connection credit is returned
// (Section 4.5).
func (s *stream) handleResetStream(now time.Time, code, finalSize uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.recvFC.OnReset(finalSize); err != nil {
		return err
	}
	if s.eofRead || s.resetRecvd {
		return nil
	}
	if s.resetAtRecvd && code != s.resetRecvCode {
		return errResetCodeChanged
	}
	s.resetRecvd, s.resetRecvCode = true, code
	s.recvFC.Abandon(now)
	s.recv.reset()
	notify(s.readCh)
	return nil
}

// handleStopSending: "An endpoint that receives a STOP_SENDING frame MUST
// send a RESET_STREAM frame if the stream is in the Ready or Send state"
// with the error code it carries (RFC 9000, Section 3.5).
func (s *stream) handleStopSending(code uint64) {
	s.mu.Lock()
	if s.resetPending || s.resetSent || (s.finQueued && s.send.allAcked()) {
		s.mu.Unlock()
		return
	}
	s.resetPending, s.resetCode = true, code
	s.ctlPending = true
	s.writeErr = &StreamError{StreamID: s.id, Code: StreamErrorCode(code), Remote: true}
	s.send.reset()
	notify(s.writeCh)
	s.mu.Unlock()
	s.m.markSendable(s)
}

// applyAppChanges applies what the application did since the last call
// and reports whether the stream has something to send.
func (s *stream) applyAppChanges(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hasRecv {
		if s.readConsumed > 0 {
			s.recvFC.OnConsumed(now, s.readConsumed)
			s.readConsumed = 0
		}
		if s.abandonDue {
			s.abandonDue = false
			s.recvFC.Abandon(now)
		}
	}
	return s.wantsToSend()
}

// wantsToSend reports whether the stream has frames to send. New data
// beyond the peer's stream limit is not something to send: once its
// STREAM_DATA_BLOCKED went out, such a stream waits for MAX_STREAM_DATA
// outside the send queue (creditWait; streamsMap.requeue), so that streams
// the receiver does not read cost nothing per packet. New data that only
// the connection's limit holds back keeps the stream queued: MAX_DATA
// resumes the queue. s.mu held, by the connection goroutine.
func (s *stream) wantsToSend() bool {
	s.ctlPending = s.stopPending || s.resetPending && !s.resetAtWaits()
	s.creditWait = false
	if s.ctlPending {
		return true
	}
	if s.hasRecv && !s.readCanceled && !s.resetRecvd && s.recvFC.ShouldSendUpdate() {
		return true
	}
	if !s.hasSend || !s.creditKnown || !s.send.hasData() {
		return false
	}
	// Retransmissions and a FIN after all data use no credit.
	if s.sendFC.Credit() > 0 || len(s.send.lost) > 0 || s.send.sentOffset() >= s.send.writeOffset() {
		return true
	}
	if _, due := s.sendFC.Blocked(); due {
		return true
	}
	s.creditWait = true
	return false
}

// appendControlFrames appends the stream's control frames.
func (s *stream) appendControlFrames(now time.Time, b []byte, end int) []byte {
	const space = ackhandler.SpaceApplication
	c := s.m.c
	// Called for every packet while the stream sends: mostly there is
	// nothing to do, which the lock-free state tells.
	if !s.ctlPending && !(s.hasRecv && s.recvFC.ShouldSendUpdate()) {
		if _, blocked := s.sendFC.Blocked(); !s.hasSend || !blocked {
			return b
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopPending {
		f := wire.StopSendingFrame{StreamID: s.id, ErrorCode: s.stopCode}
		if f.EncodedLen() <= end-len(b) {
			b = f.Append(b)
			s.stopPending = false
			c.sent.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeStopSending, StreamID: int64(s.id)})
		}
	}
	if s.resetPending && s.resetAt {
		b = s.appendResetStreamAt(b, end)
	}
	if s.resetPending && !s.resetAt {
		f := wire.ResetStreamFrame{StreamID: s.id, ErrorCode: s.resetCode, FinalSize: s.sentEnd}
		if f.EncodedLen() <= end-len(b) {
			b = f.Append(b)
			s.resetPending, s.resetSent = false, true
			c.sent.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeResetStream, StreamID: int64(s.id)})
		}
	}
	if s.hasRecv && !s.readCanceled && !s.resetRecvd && s.recvFC.ShouldSendUpdate() {
		limit := s.recvFC.NextLimit(now, c.rtt.Smoothed())
		f := wire.MaxStreamDataFrame{StreamID: s.id, MaximumStreamData: limit}
		if f.EncodedLen() <= end-len(b) {
			b = f.Append(b)
			s.recvFC.OnUpdateSent(limit)
			c.sent.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeMaxStreamData, StreamID: int64(s.id), Offset: limit})
		}
	}
	if s.hasSend && !s.resetSent && s.send.hasData() {
		if limit, ok := s.sendFC.Blocked(); ok && s.sentEnd >= limit {
			f := wire.StreamDataBlockedFrame{StreamID: s.id, MaximumStreamData: limit}
			if f.EncodedLen() <= end-len(b) {
				b = f.Append(b)
				s.sendFC.OnBlockedSent(limit)
				c.sent.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeStreamDataBlocked, StreamID: int64(s.id), Offset: limit})
			}
		}
	}
	s.ctlPending = s.stopPending || s.resetPending && !s.resetAtWaits()
	return b
}

// streamFrameOverhead is the most a STREAM frame header takes: type,
// 8-byte stream ID and offset, 2-byte length.
const streamFrameOverhead = 1 + 8 + 8 + 2

// appendStreamFrame appends one STREAM frame and reports whether the
// stream has more to send: data, or control frames that did not fit in
// this packet (appendControlFrames runs first), which must keep the
// stream queued too; and whether the stream is done (see isDone).
func (s *stream) appendStreamFrame(now time.Time, b []byte, end int) (_ []byte, more, done bool) {
	c := s.m.c
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hasSend || (s.resetPending || s.resetSent) && !s.resetAt || !s.creditKnown {
		return b, s.wantsToSend(), s.isDone()
	}
	maxData := end - len(b) - streamFrameOverhead
	if maxData < 0 {
		return b, s.wantsToSend(), s.isDone()
	}
	// New data needs stream and connection credit; retransmissions do not.
	newCredit := min(s.sendFC.Credit(), c.connSend.Credit())
	off, n, fin, ok := s.send.nextFrameLimit(maxData, s.send.sentOffset()+newCredit)
	if !ok {
		// Blocked by flow control: stay sendable while the connection's
		// limit blocks, so that MAX_DATA resumes the stream; wait for
		// MAX_STREAM_DATA outside the queue (see wantsToSend). A sender
		// blocked by flow control must always resume.
		return b, s.wantsToSend(), s.isDone()
	}
	if e := off + uint64(n); e > s.sentEnd {
		added := e - s.sentEnd
		s.sendFC.OnSent(added)
		c.connSend.OnSent(added)
		s.sentEnd = e
	}
	b = wire.StreamFrame{StreamID: s.id, Offset: off, Fin: fin, HasLength: true}.AppendHeader(b, n)
	b = s.send.appendData(b, off, n)
	c.sent.AddFrame(ackhandler.SpaceApplication, ackhandler.FrameRecord{
		Type: wire.FrameTypeStream, StreamID: int64(s.id), Offset: off, Length: uint64(n), Extra: boolToUint(fin),
	})
	return b, s.wantsToSend(), s.isDone()
}

// onFrameAcked records the acknowledgment of a frame the stream sent and
// reports whether the stream is done (see isDone).
func (s *stream) onFrameAcked(f *ackhandler.FrameRecord) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case f.Type.IsStream():
		s.send.onAcked(f.Offset, int(f.Length), f.Extra == 1)
		if s.finQueued && s.send.allAcked() {
			s.finAcked = true
		}
		if s.writeWaiters > 0 {
			notify(s.writeCh)
		}
	case f.Type == wire.FrameTypeResetStream, f.Type == wire.FrameTypeResetStreamAt:
		s.resetAcked = true
	}
	return s.isDone()
}

// onFrameLost marks what a lost frame carried for sending again and
// reports whether the stream now has something to send.
func (s *stream) onFrameLost(f *ackhandler.FrameRecord) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f.Type {
	case wire.FrameTypeStream:
		if !s.resetPending && !s.resetSent || s.resetAt {
			s.send.onLost(f.Offset, int(f.Length), f.Extra == 1)
		}
	case wire.FrameTypeResetStream, wire.FrameTypeResetStreamAt:
		s.resetPending = !s.resetAcked
	case wire.FrameTypeStopSending:
		s.stopPending = s.readCanceled && !s.resetRecvd && !s.eofRead
	case wire.FrameTypeMaxStreamData:
		if s.hasRecv {
			s.recvFC.OnUpdateLost(f.Offset)
		}
	case wire.FrameTypeStreamDataBlocked:
		s.sendFC.OnBlockedLost(f.Offset)
	default:
		if f.Type.IsStream() && (!s.resetPending && !s.resetSent || s.resetAt) {
			s.send.onLost(f.Offset, int(f.Length), f.Extra == 1)
		}
	}
	return s.wantsToSend()
}

// isDone reports whether both directions are finished, so the stream can
// be forgotten. s.mu held.
func (s *stream) isDone() bool {
	sendDone := !s.hasSend || s.finAcked || s.resetAcked && (!s.resetAt || s.send.reliableAcked())
	recvDone := !s.hasRecv || s.eofRead || s.resetRecvd
	if s.hasRecv && s.readCanceled {
		_, known := s.recvFC.FinalSize()
		recvDone = recvDone || known
	}
	return sendDone && recvDone
}

func (s *stream) closeWithConnError(err error) {
	s.mu.Lock()
	s.connErr = err
	s.mu.Unlock()
	notify(s.readCh)
	notify(s.writeCh)
	s.cancelContext()
}

// context returns the stream's context, made on the first call. Any
// goroutine may call it.
func (s *stream) context() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(context.Background())
		// Finished in both directions, and not retired yet: readNow
		// did not wake the goroutine for it (retireWakes).
		if s.finished || s.isDone() {
			s.cancel()
		}
	}
	return s.ctx
}

// retireWakes reports whether the stream's retirement, once it is done,
// is worth a wakeup of the connection goroutine: someone holds its
// Context, or the peer opened it and gets credit for a new stream
// (MAX_STREAMS). s.mu must be held.
func (s *stream) retireWakes() bool {
	return s.ctx != nil || s.id.Initiator() != s.m.role
}

// cancelContext cancels the stream's context, now if it was made, else
// when it is. Any goroutine may call it; s.mu must not be held.
func (s *stream) cancelContext() {
	s.mu.Lock()
	s.finished = true
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// --- Application side ---

func (s *stream) read(p []byte) (int, error) {
	waited := false
	for {
		n, err, deadline := s.readNow(p, waited)
		if n > 0 || err != nil {
			if waited {
				s.m.readerWaits(-1)
			}
			return n, err
		}
		if len(p) == 0 {
			return 0, nil
		}
		// A reader that waits while the connection's window is starved
		// by data nobody reads yet may wait forever: the connection
		// goroutine grows the window (connState.growWindowForReaders).
		if !waited && s.m.readerWaits(1) {
			s.m.wake()
		}
		if err := waitFor(s.readCh, deadline); err != nil {
			s.mu.Lock()
			s.readWaiters--
			s.passOn(s.readWaiters, s.readCh)
			s.mu.Unlock()
			s.m.readerWaits(-1)
			return 0, err
		}
		waited = true
	}
}

// passOn signals ch for the next of waiters goroutines that wait on it,
// when one that waited (or never did) returns. Several may wait
// (concurrent Reads or Writes) and the channel holds one signal: the one
// that woke the returning goroutine, a deadline changed, an error or data
// left may be for the others too. s.mu held.
func (s *stream) passOn(waiters int, ch chan struct{}) {
	if waiters > 0 {
		notify(ch)
	}
}

// readNow reads what is available without blocking and returns the read
// deadline. It queues the stream for the connection goroutine when that
// has something to do: return flow-control credit for the bytes read, or
// retire the stream once reading reached the end (the peer's limit on
// streams rises only then, RFC 9000, Section 4.6).
//
// The goroutine is woken only when the read emptied the buffer while the
// peer has sent up to the limit (it may be waiting for credit: nothing
// more arrives to wake it otherwise),
// a large part of the window was read since the credit was last counted,
// what was read since makes a MAX_STREAM_DATA or MAX_DATA due (the peer
// may wait for it while the application waits for something else), or
// the end was reached and the stream can retire; meanwhile it counts the
// credit whenever it runs (profiles: a wakeup per 8 KB read cost more
// than the read).
func (s *stream) readNow(p []byte, waited bool) (int, error, time.Time) {
	s.mu.Lock()
	if waited {
		s.readWaiters--
	}
	wasEOF, wasReset := s.eofRead, s.resetRecvd
	n, err := s.tryRead(p)
	deadline := s.readDeadline
	// The end of a RESET_STREAM_AT's data counts as the end too: the
	// stream may retire and the unread data's credit goes back.
	reachedEOF := s.eofRead && !wasEOF || s.resetRecvd && !wasReset
	// Once the final size is known the peer sends nothing more: no
	// reader's emptied buffer makes it wait for credit, and reaching the
	// end matters to the goroutine now only if the stream can retire (its
	// sending part is done too: the retirement cancels Context, and gives
	// the peer credit for a new stream if it opened it); otherwise the
	// stream, queued below, is seen when the goroutine next runs, and the
	// acknowledgment that ends the sending part retires it. So a request
	// read to its end (a FIN with the data) wakes nobody (issue 28). Nor
	// does a response read to its end on a stream this endpoint opened
	// whose Context nobody asked for: its retirement gives the peer
	// nothing, and a Context asked for later is made done (context); the
	// stream retires when the goroutine next runs, for the acknowledgment
	// the response's packet is owed, or woken for it if that ACK went
	// already (noteReadEnd: the application read the response late).
	_, finalKnown := s.recvFC.FinalSize()
	finished := s.eofRead && !wasEOF && s.isDone()
	lazyRetire := finished && !s.retireWakes()
	wake := s.resetRecvd && !wasReset || finished && !lazyRetire ||
		n > 0 && (s.recv.readable() == 0 && !finalKnown && s.recvFC.Highest() >= s.recvFC.Limit() || s.readConsumed >= s.recvFC.Window()/4 ||
			s.readConsumed >= s.recvFC.ConsumedBeforeUpdate())
	if n == 0 && err == nil && len(p) > 0 {
		s.readWaiters++
	} else {
		s.passOn(s.readWaiters, s.readCh)
	}
	s.mu.Unlock()
	if n > 0 || reachedEOF {
		s.m.noteReadEnd(s, wake, lazyRetire, n)
	}
	return n, err, deadline
}

// tryRead reads what is available. s.mu held.
func (s *stream) tryRead(p []byte) (int, error) {
	switch {
	case s.readCanceled:
		return 0, &StreamError{StreamID: s.id, Code: StreamErrorCode(s.stopCode), afterClose: s.closedBoth}
	case s.resetRecvd:
		return 0, &StreamError{StreamID: s.id, Code: StreamErrorCode(s.resetRecvCode), Remote: true}
	case s.resetAtRecvd:
		return s.readBeforeResetAt(p)
	}
	n := s.recv.read(p)
	s.readConsumed += uint64(n)
	if n == 0 {
		if size, known := s.recvFC.FinalSize(); known && s.recv.readOffset() == size {
			s.eofRead = true
			return 0, io.EOF
		}
		if s.connErr != nil {
			return 0, s.connErr
		}
	}
	return n, nil
}

func (s *stream) write(p []byte) (int, error) {
	written := 0
	waited := false
	for {
		s.mu.Lock()
		if waited {
			s.writeWaiters--
		}
		var err error
		switch {
		case s.writeErr != nil:
			err = s.writeErr
		case s.finQueued:
			err = errWriteAfterClose
		case s.connErr != nil:
			err = s.connErr
		}
		n := 0
		// Data waiting to be sent keeps the stream queued for sending:
		// the goroutine needs no wakeup for more (profiles: one per
		// Write cost as much as the copy).
		hadData := s.send.hasData()
		if err == nil {
			n = s.send.write(p[written:])
			written += n
		}
		if err == nil && written < len(p) {
			s.writeWaiters++
		} else {
			s.passOn(s.writeWaiters, s.writeCh)
		}
		deadline := s.writeDeadline
		s.mu.Unlock()
		if n > 0 {
			s.m.noteRead(s, !hadData, 0)
		}
		if err != nil || written == len(p) {
			return written, err
		}
		if err := waitFor(s.writeCh, deadline); err != nil {
			s.mu.Lock()
			s.writeWaiters--
			s.passOn(s.writeWaiters, s.writeCh)
			s.mu.Unlock()
			return written, err
		}
		waited = true
	}
}

// errWriteAfterClose is returned by Write after CloseWrite or Close, and
// by a Write they interrupt; it matches net.ErrClosed.
var errWriteAfterClose error = &closedError{"quic: write on a stream closed for writing"}

// waitFor blocks until ch is signalled or deadline passes.
func waitFor(ch chan struct{}, deadline time.Time) error {
	if deadline.IsZero() {
		<-ch
		return nil
	}
	d := time.Until(deadline)
	if d <= 0 {
		return os.ErrDeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return os.ErrDeadlineExceeded
	}
}

func (s *stream) closeWrite() error {
	s.mu.Lock()
	if s.finQueued || s.resetPending || s.resetSent {
		s.mu.Unlock()
		return nil
	}
	s.finQueued = true
	// As in write: data still waiting to be sent keeps the stream queued
	// for sending, and the FIN goes with its last frame; the goroutine
	// needs no wakeup (issue 28: a Write and CloseWrite in a row, a
	// request or a response, woke it twice).
	hadData := s.send.hasData()
	s.send.close()
	s.mu.Unlock()
	// A Write blocked on a full buffer returns errWriteAfterClose.
	notify(s.writeCh)
	s.m.noteRead(s, !hadData, 0)
	return nil
}

func (s *stream) cancelWrite(code StreamErrorCode) {
	s.mu.Lock()
	if s.resetPending || s.resetSent || s.finAcked {
		s.mu.Unlock()
		return
	}
	s.resetPending, s.resetCode = true, uint64(code)
	s.writeErr = &StreamError{StreamID: s.id, Code: code}
	s.send.reset()
	s.mu.Unlock()
	notify(s.writeCh)
	s.m.markAttention(s)
}

func (s *stream) cancelRead(code StreamErrorCode) {
	s.mu.Lock()
	if s.readCanceled || s.resetRecvd || s.eofRead {
		s.mu.Unlock()
		return
	}
	s.readCanceled, s.stopCode = true, uint64(code)
	size, known := s.recvFC.FinalSize()
	if allArrived := known && s.recv.readOffset()+uint64(s.recv.readable()) == size; !allArrived {
		// "STOP_SENDING SHOULD only be sent for a stream that has not
		// been reset by the peer. STOP_SENDING is most useful for streams
		// in the "Recv" or "Size Known" states." (RFC 9000, Section 3.5)
		// Once every byte up to the final size arrived ("Data Recvd"),
		// the peer has nothing left to stop sending.
		s.stopPending = true
	}
	s.abandonDue = true
	s.recv.reset()
	s.mu.Unlock()
	notify(s.readCh)
	s.m.markAttention(s)
}

func (s *stream) setReadDeadline(t time.Time) {
	s.mu.Lock()
	s.readDeadline = t
	s.mu.Unlock()
	notify(s.readCh)
}

func (s *stream) setWriteDeadline(t time.Time) {
	s.mu.Lock()
	s.writeDeadline = t
	s.mu.Unlock()
	notify(s.writeCh)
}
