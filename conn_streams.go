package quic

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/flowcontrol"
	"github.com/quicstack/quic/wire"
)

// streamsMap is a connection's set of streams. Its mutex guards only the
// map, the stream-count limits, the accept queues, the list of streams
// that need the connection's attention and the read and wait counters
// below; it is never held while a stream's own mutex is taken, so there
// is no lock order to get wrong. The sendable queue and the lookup cache
// belong to the connection goroutine alone and need no lock: profiles of
// bulk transfers showed a dozen lock/unlock pairs per packet, a tenth of
// the sender's CPU.
//
// Concurrency discipline: the connection goroutine owns the protocol
// state; application goroutines touch only what mu guards, plus one
// atomic wake flag. Every field is in exactly one of three classes:
//
//	class                      fields                           who may touch them
//	connection goroutine only  c, retiredSizes, sched,          the goroutine running connState
//	                           sendableCopy, parked,            (handleDatagram, pollTransmit, ...)
//	                           lastStream, attentionSpare,
//	                           openBlockedSeen, readersWaiting
//	guarded by mu              everything from mu to the        any goroutine, mu held; never
//	                           flag, closed, wake, peerParams   held while taking stream.mu or
//	                                                            calling out (wake is non-blocking)
//	the atomic wake flag       attentionPending                 set under mu by whoever changes
//	                                                            what the goroutine must look at
//
// attentionPending lets the connection goroutine skip mu on every packet
// when no application goroutine left it anything: whoever changes a
// field under mu that the goroutine acts on (the attention list, an
// opener blocked on the peer's limit, a reader that starts or stops
// waiting) sets it before unlocking; the goroutine clears it under mu as
// it takes the list and refreshes its own copies (openBlockedSeen,
// readersWaiting, each stream's appPrio) in processAttention, at the
// start of every pollTransmit. Two handshakes decide who wakes whom,
// both under mu, so that of a reader and the goroutine acting at the
// same moment one sees the other's change: addRead (in noteRead) against
// publishReadWakeAt, readerWaits against publishStarved.
// TestStreamsMapWakeHandshakes stresses both under -race. The goroutine
// takes mu for them only when what it publishes changed (the readers
// compared against the unchanged value under mu): at most one lock per
// loop iteration while data is read, and a reader's count rides on the
// lock it takes anyway to queue its stream. Measured against the six
// atomics this replaced (interleaved A/B, CPU time of 8 runs each, load
// 12-17 on 2 cores): BenchmarkBulkTransferUDP 0.96x, BenchmarkDirectTransfer
// 0.95x, allocations per op unchanged.
type streamsMap struct {
	c    *connState // touched by the connection goroutine only
	role wire.Role

	mu sync.Mutex
	// streams is made when the first stream opens and dropped when a
	// quiet connection has none (releaseIdle).
	streams map[wire.StreamID]*stream
	// Streams this endpoint opens: how many it opened of each kind and
	// how many the peer allows (RFC 9000, Section 4.6).
	openedBidi, openedUni   uint64
	peerMaxBidi, peerMaxUni uint64
	blockedBidi, blockedUni bool // an opener waits: send STREAMS_BLOCKED
	// The limit the last STREAMS_BLOCKED of each kind carried, plus
	// one; 0 when none is outstanding (none sent, or it was lost).
	streamsBlockedSentBidi uint64
	streamsBlockedSentUni  uint64
	openWait               chan struct{} // made for a waiter, closed and cleared when limits rise
	// Streams the peer opens: the highest count seen, how many closed,
	// and the limit advertised.
	peerOpenedBidi, peerOpenedUni uint64
	peerClosedBidi, peerClosedUni uint64
	maxBidi, maxUni               uint64 // our advertised limits
	maxBidiSent, maxUniSent       uint64
	maxBidiLost, maxUniLost       bool // a MAX_STREAMS frame was lost
	// The largest limit the peer said in STREAMS_BLOCKED it has used,
	// up to the limit advertised: streams it opened whose frames have
	// not arrived count as opened.
	peerBlockedBidi, peerBlockedUni uint64
	acceptBidi, acceptUni           []*stream
	// acceptWaitBidi and acceptWaitUni are made for a waiter, closed
	// and cleared when streams of their type arrive: one per type, so
	// that a new request stream does not wake the goroutine accepting
	// unidirectional streams too (HTTP/3 has one of each, and the
	// spurious wakeup was one of the few per request).
	acceptWaitBidi, acceptWaitUni chan struct{}
	// attention holds streams whose application side changed (data
	// written or read, close, cancel, priority).
	attention []*stream
	// readPending counts the bytes applications read on the streams in
	// attention (noteRead adds both together), which the connection
	// goroutine has not counted yet, and readWakeAt how many of them make
	// a MAX_DATA due, as that goroutine last published it
	// (publishReadWakeAt): a read that reaches it wakes the goroutine
	// (stream.readNow). processAttention clears readPending as it takes
	// the list: every byte in it then belongs to a listed stream's
	// readConsumed. It may count a read twice (the goroutine took a
	// stream's readConsumed before the reader counted it here): that
	// costs a spurious wakeup at worst, never a lost one.
	readPending int64
	readWakeAt  int64 // written by the connection goroutine only, mu held
	// waitingReaders counts the application goroutines blocked in a Read
	// or an Accept, which wait for the peer's stream data, and
	// connStarved is set by the connection goroutine while the
	// connection's receive window is starved and may grow
	// (flowcontrol: CanGrowForWaitingReader): a reader that starts
	// waiting then wakes the goroutine, which grows the window
	// (connState.growWindowForReaders).
	waitingReaders int64
	connStarved    bool // written by the connection goroutine only, mu held
	// ackOwed is set by the connection goroutine while it owes the peer
	// an ACK in the application space (publishAckOwed): it runs again by
	// that ACK's deadline at the latest, and takes the attention list
	// then. A reader that finishes a stream whose retirement needs no
	// wakeup of its own (stream.retireWakes) relies on that run, and
	// wakes the goroutine when no ACK is owed: the ACK for the stream's
	// last packet may have gone before the application read it.
	ackOwed bool // written by the connection goroutine only, mu held
	// attentionPending is the one atomic: set under mu whenever the
	// connection goroutine has something to look at under mu (see the
	// type comment), cleared by it under mu in processAttention.
	attentionPending atomic.Bool

	// Storage reused so that steady sending allocates nothing: the
	// attention list processAttention handled last time.
	attentionSpare []*stream

	closed error // set when the connection ends
	wake   func()
	// peerParams are the peer's transport parameters once known, for the
	// initial send credit of new streams.
	peerParams *wire.TransportParameters

	// The connection goroutine's alone, without m.mu: retiredSizes
	// remembers the final sizes of the streams retired last. sched holds
	// the streams with frames to send, in the order of their priorities
	// (stream_scheduler.go), and sendableCopy is storage for a copy of
	// them to walk. parked holds the streams whose data waits for stream
	// credit only (stream.creditWait), out of the queue; markSendable
	// takes them back. lastStream caches the stream lookup found last
	// (acknowledgments of one stream come in runs).
	retiredSizes *retiredFinalSizes
	sched        *streamScheduler // made by q, dropped when idle
	sendableCopy []*stream
	parked       []*stream
	lastStream   *stream
	// The goroutine's copies of state under mu, taken in processAttention
	// (and handleMaxStreams, publishStarved): openBlockedSeen,
	// blockedBidi || blockedUni; readersWaiting, waitingReaders > 0.
	openBlockedSeen bool
	readersWaiting  bool
}

func newStreamsMap(c *connState) *streamsMap {
	m := &streamsMap{
		c: c, role: c.role,
		maxBidi: uint64(max(c.config.MaxIncomingStreams, 0)),
		maxUni:  uint64(max(c.config.MaxIncomingUniStreams, 0)),
		wake:    func() {},
	}
	m.maxBidiSent, m.maxUniSent = m.maxBidi, m.maxUni
	return m
}

// onPeerParams takes the peer's initial stream limits.
func (m *streamsMap) onPeerParams(p *wire.TransportParameters) {
	m.mu.Lock()
	m.peerParams = p
	m.raiseOpenLimits(p.InitialMaxStreamsBidi, p.InitialMaxStreamsUni)
	streams := make([]*stream, 0, len(m.streams))
	for _, s := range m.streams {
		streams = append(streams, s)
	}
	m.mu.Unlock()
	// Streams opened in 0-RTT or before the parameters arrived get their
	// initial send credit now.
	for _, s := range streams {
		s.mu.Lock()
		s.initSendCredit(p)
		want := s.wantsToSend()
		s.mu.Unlock()
		if want {
			// A stream that waits for credit is parked outside the send
			// queue (requeue): whoever raises its credit queues it. A
			// client has not sent STREAM_DATA_BLOCKED, a 1-RTT frame here,
			// under the limits remembered for 0-RTT when the server's
			// arrive, so none is parked yet; this keeps it so.
			m.markSendable(s)
		}
	}
}

// raiseOpenLimits raises the limits on streams this endpoint may open.
// m.mu must be held.
func (m *streamsMap) raiseOpenLimits(bidi, uni uint64) {
	raised := false
	if bidi > m.peerMaxBidi {
		m.peerMaxBidi, raised = bidi, true
	}
	if uni > m.peerMaxUni {
		m.peerMaxUni, raised = uni, true
	}
	if raised {
		notifyWaiters(&m.openWait)
	}
}

// waitChannel returns *ch, making it if nobody waits yet. The mutex that
// guards *ch must be held.
func waitChannel(ch *chan struct{}) <-chan struct{} {
	if *ch == nil {
		*ch = make(chan struct{})
	}
	return *ch
}

// notifyWaiters wakes those who wait on *ch by closing it; the next
// waiter gets a new one. The mutex that guards *ch must be held.
func notifyWaiters(ch *chan struct{}) {
	if *ch != nil {
		close(*ch)
		*ch = nil
	}
}

// addStream puts s in the map, making the map first if needed. m.mu must
// be held.
func (m *streamsMap) addStream(s *stream) {
	if m.streams == nil {
		m.streams = make(map[wire.StreamID]*stream)
	}
	m.streams[s.id] = s
}

// releaseIdle drops the map of a quiet connection that has no stream: a
// map keeps its storage when emptied. It drops the copy of the sendable
// queue too, which holds the streams it was last made of, finished ones
// with their buffers among them (connection goroutine). The streams that
// stay give back the chunk tables of their empty buffers (their chunks
// went back as data was read or acknowledged): a quiet connection keeps
// no buffer memory but for data still unread or unacknowledged.
func (m *streamsMap) releaseIdle() {
	m.mu.Lock()
	if len(m.streams) == 0 {
		m.streams = nil
	}
	var streams []*stream
	if len(m.streams) > 0 {
		streams = make([]*stream, 0, len(m.streams)) // once per quiet period
		for _, s := range m.streams {
			streams = append(streams, s)
		}
	}
	m.mu.Unlock()
	for _, s := range streams {
		s.mu.Lock() // never while holding m.mu
		s.recv.shrink()
		s.send.shrink()
		s.mu.Unlock()
	}
	m.sendableCopy = nil
	m.retiredSizes = nil
	if m.sched != nil && m.sched.empty() {
		m.sched = nil // a few hundred bytes an idle connection does not keep
	}
}

// openStream opens a stream of this endpoint if the peer's limit allows:
// "An endpoint that receives a frame with a stream ID exceeding the limit
// it has sent MUST treat this as a connection error of type
// STREAM_LIMIT_ERROR" (RFC 9000, Section 4.6), so it must not open more.
// It returns nil and a channel that is closed when limits rise otherwise.
func (m *streamsMap) openStream(bidi bool) (*stream, <-chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed != nil {
		return nil, nil, m.closed
	}
	opened, limit, blocked := &m.openedBidi, m.peerMaxBidi, &m.blockedBidi
	if !bidi {
		opened, limit, blocked = &m.openedUni, m.peerMaxUni, &m.blockedUni
	}
	if *opened >= limit {
		*blocked = true
		m.attentionPending.Store(true) // processAttention sees blocked
		m.wake()
		return nil, waitChannel(&m.openWait), nil
	}
	*opened++
	id := wire.NthStreamID(m.role, bidi, *opened)
	s := newStream(m, id)
	if m.peerParams != nil {
		s.initSendCredit(m.peerParams) // s is not shared yet: no lock needed
	}
	m.addStream(s)
	return s, nil, nil
}

// acceptStream returns the next stream the peer opened, or a channel that
// is closed when one arrives.
func (m *streamsMap) acceptStream(bidi bool) (*stream, <-chan struct{}, error) {
	m.mu.Lock()
	q := &m.acceptBidi
	if !bidi {
		q = &m.acceptUni
	}
	if len(*q) > 0 {
		s := (*q)[0]
		(*q)[0] = nil
		*q = (*q)[1:]
		// The stream may have finished already; now that the
		// application holds it, the connection may retire it.
		s.accepted = true
		if !s.inAttention {
			s.inAttention = true
			m.attention = append(m.attention, s)
		}
		m.attentionPending.Store(true)
		m.mu.Unlock()
		// The connection goroutine needs waking only for a stream that is
		// done already (the peer reset it, say): one still open retires
		// later, when what ends it wakes the goroutine anyway. A request
		// stream just accepted is open: no wakeup per request.
		s.mu.Lock()
		done := s.isDone()
		s.mu.Unlock()
		if done {
			m.wake()
		}
		return s, nil, nil
	}
	defer m.mu.Unlock()
	if m.closed != nil {
		return nil, nil, m.closed
	}
	if !bidi {
		return nil, waitChannel(&m.acceptWaitUni), nil
	}
	return nil, waitChannel(&m.acceptWaitBidi), nil
}

// waitAccept waits for the peer to open a stream (see acceptStream), or
// for ctx to be done. While it waits it counts as a reader waiting for
// the peer's data (readerWaits): a new stream's first byte needs
// connection credit like any other, and an application that accepted
// streams and leaves them unread while it waits for the next one would
// otherwise wait forever once that data used the connection window up.
// net/http2 does not meet this: HEADERS, which open a stream, are not
// flow controlled; in QUIC the request is stream data.
func (m *streamsMap) waitAccept(ctx context.Context, bidi bool) (*stream, error) {
	counted := false
	s, err := waitForStream(ctx, func(bidi bool) (*stream, <-chan struct{}, error) {
		s, wait, err := m.acceptStream(bidi)
		if wait != nil && !counted {
			counted = true
			if m.readerWaits(1) {
				m.wake()
			}
		}
		return s, wait, err
	}, bidi)
	if counted {
		m.readerWaits(-1)
	}
	return s, err
}

// getOrOpenPeerStream returns the stream a frame refers to, creating it and
// every lower-numbered stream of its type when the peer opens it: "Before a
// stream is created, all streams of the same type with lower-numbered
// stream IDs MUST be created" (RFC 9000, Section 3.2). It returns nil,
// without error, for a stream that is already closed. forSend says whether
// the frame concerns our sending part (MAX_STREAM_DATA, STOP_SENDING).
func (m *streamsMap) getOrOpenPeerStream(id wire.StreamID, ft wire.FrameType, forSend bool) (*stream, error) {
	local := id.Initiator() == m.role
	if !id.IsBidi() && local != forSend {
		// A receive-only stream for us cannot get MAX_STREAM_DATA or
		// STOP_SENDING; a send-only one cannot get STREAM or RESET_STREAM:
		// "An endpoint MUST terminate the connection with error
		// STREAM_STATE_ERROR" (RFC 9000, Sections 19.5, 19.8, 19.10).
		return nil, &wire.TransportError{Code: wire.StreamStateError, FrameType: ft, Reason: "frame for a unidirectional stream in the wrong direction"}
	}
	if s := m.lastStream; s != nil && s.id == id {
		return s, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.streams[id]; ok {
		m.lastStream = s
		return s, nil
	}
	num := id.Num()
	if local {
		opened := m.openedBidi
		if !id.IsBidi() {
			opened = m.openedUni
		}
		if num > opened {
			// "An endpoint MUST terminate the connection with error
			// STREAM_STATE_ERROR if it receives a STREAM frame for a
			// locally initiated stream that has not yet been created"
			return nil, &wire.TransportError{Code: wire.StreamStateError, FrameType: ft, Reason: "frame for a stream not yet opened"}
		}
		return nil, nil // closed already
	}
	peerOpened, limit, q := &m.peerOpenedBidi, m.maxBidi, &m.acceptBidi
	if !id.IsBidi() {
		peerOpened, limit, q = &m.peerOpenedUni, m.maxUni, &m.acceptUni
	}
	if num <= *peerOpened {
		return nil, nil // closed already
	}
	if num > limit {
		return nil, &wire.TransportError{Code: wire.StreamLimitError, FrameType: ft, Reason: "stream limit exceeded"}
	}
	var s *stream
	for n := *peerOpened + 1; n <= num; n++ {
		sid := wire.NthStreamID(m.role.Peer(), id.IsBidi(), n)
		s = newStream(m, sid)
		if m.peerParams != nil {
			s.initSendCredit(m.peerParams)
		}
		m.addStream(s)
		*q = append(*q, s)
	}
	*peerOpened = num
	if id.IsBidi() {
		notifyWaiters(&m.acceptWaitBidi)
	} else {
		notifyWaiters(&m.acceptWaitUni)
	}
	return s, nil
}

func (m *streamsMap) handleStreamFrame(now time.Time, f wire.StreamFrame) error {
	s, err := m.getOrOpenPeerStream(f.StreamID, wire.FrameTypeStream, false)
	if err != nil {
		return err
	}
	if s == nil {
		// The stream is closed already, so its receiving part ended: all
		// data up to the final size was read, or the peer reset it, or
		// the application abandoned it (CancelRead). The frame carries
		// nothing anyone will read; only its final size is checked.
		return m.checkRetired(f.StreamID, f.Offset+uint64(len(f.Data)), f.Fin, wire.FrameTypeStream)
	}
	if m.c.rxPacketType == wire.PacketType0RTT {
		s.mu.Lock()
		s.recv0RTT = true
		s.mu.Unlock()
	}
	if err := s.handleStreamFrame(now, f); err != nil {
		return err
	}
	if f.Fin {
		m.maybeRetire(s) // the final size may finish a canceled receiving part
	}
	return nil
}

func (m *streamsMap) handleResetStream(now time.Time, id wire.StreamID, code, finalSize uint64) error {
	s, err := m.getOrOpenPeerStream(id, wire.FrameTypeResetStream, false)
	if err != nil {
		return err
	}
	if s == nil {
		return m.checkRetired(id, finalSize, true, wire.FrameTypeResetStream)
	}
	if err := s.handleResetStream(now, code, finalSize); err != nil {
		return err
	}
	// "Reset Recvd" ends the receiving part (RFC 9000, Section 3.2).
	m.maybeRetire(s)
	return nil
}

func (m *streamsMap) handleStopSending(now time.Time, f wire.StopSendingFrame) error {
	s, err := m.getOrOpenPeerStream(f.StreamID, wire.FrameTypeStopSending, true)
	if s == nil || err != nil {
		return err
	}
	s.handleStopSending(f.ErrorCode)
	return nil
}

func (m *streamsMap) handleMaxStreamData(f wire.MaxStreamDataFrame) error {
	s, err := m.getOrOpenPeerStream(f.StreamID, wire.FrameTypeMaxStreamData, true)
	if s == nil || err != nil {
		return err
	}
	s.mu.Lock()
	raised := s.sendFC.OnMaxData(f.MaximumStreamData)
	s.mu.Unlock()
	if raised {
		m.markSendable(s) // from the parked streams, often
	}
	return nil
}

func (m *streamsMap) handleStreamDataBlocked(f wire.StreamDataBlockedFrame) error {
	s, err := m.getOrOpenPeerStream(f.StreamID, wire.FrameTypeStreamDataBlocked, false)
	if s == nil || err != nil {
		return err
	}
	s.mu.Lock()
	s.recvFC.OnBlockedReceived(f.MaximumStreamData)
	s.mu.Unlock()
	return nil
}

// handleMaxStreams raises the number of streams this endpoint may open.
// "MAX_STREAMS frames that do not increase the stream limit MUST be
// ignored." (RFC 9000, Section 19.11)
func (m *streamsMap) handleMaxStreams(f wire.MaxStreamsFrame) {
	m.mu.Lock()
	if f.Bidi {
		m.raiseOpenLimits(f.MaximumStreams, 0)
		if f.MaximumStreams > m.openedBidi {
			m.blockedBidi = false
		}
	} else {
		m.raiseOpenLimits(0, f.MaximumStreams)
		if f.MaximumStreams > m.openedUni {
			m.blockedUni = false
		}
	}
	m.openBlockedSeen = m.blockedBidi || m.blockedUni
	m.mu.Unlock()
}

// markAttention queues s for the connection goroutine and wakes it. It is
// called by application goroutines, without s.mu held.
func (m *streamsMap) markAttention(s *stream) { m.noteRead(s, true, 0) }

// noteRead queues s for the connection goroutine after a read of n bytes
// (0 for other changes) and wakes it if wake is set or the bytes read
// and not yet counted make a MAX_DATA due (addRead); otherwise the
// stream waits until the goroutine runs for another reason. Counted
// with the stream queued, under the same lock: a goroutine that finds
// the count at its mark finds the stream to take it from.
func (m *streamsMap) noteRead(s *stream, wake bool, n int) { m.noteReadEnd(s, wake, false, n) }

// noteReadEnd is noteRead for a read that may have finished s, whose
// retirement then waits for the goroutine's next run (lazyRetire): that
// run must come, so the goroutine is woken unless it owes an ACK
// (ackOwed), checked under the same lock as publishAckOwed sets it.
func (m *streamsMap) noteReadEnd(s *stream, wake, lazyRetire bool, n int) {
	m.mu.Lock()
	if lazyRetire && !m.ackOwed {
		wake = true
	}
	if !s.inAttention {
		s.inAttention = true
		m.attention = append(m.attention, s)
	}
	m.attentionPending.Store(true)
	if n > 0 && m.addRead(n) {
		wake = true
	}
	m.mu.Unlock()
	if wake {
		m.wake()
	}
}

// markSendable queues s for sending, taking it from the parked streams.
// Connection goroutine only.
func (m *streamsMap) markSendable(s *stream) {
	if s.held {
		return // beyond the peer's stream limit (releaseHeld)
	}
	m.unpark(s)
	if !s.inSendable {
		s.inSendable = true
		s.sched.prio = decodePriority(s.appPrio)
		m.q().push(s)
	}
	if s.controlDue() {
		m.q().control.pushBack(s)
	}
}

// requeue puts s, which left the send queue or found nothing to send,
// among the parked streams if its data waits for stream credit only
// (wantsToSend set creditWait), so that keep-alives still repeat its
// STREAM_DATA_BLOCKED (rearmBlocked) while it costs nothing per packet.
// Connection goroutine only.
func (m *streamsMap) requeue(s *stream) {
	if s.creditWait && !s.inSendable && s.parkedAt == 0 {
		m.parked = append(m.parked, s)
		s.parkedAt = len(m.parked)
	}
}

// unpark takes s from the parked streams, if it is there.
func (m *streamsMap) unpark(s *stream) {
	i := s.parkedAt - 1
	if i < 0 {
		return
	}
	last := len(m.parked) - 1
	m.parked[i] = m.parked[last]
	m.parked[i].parkedAt = i + 1
	m.parked[last] = nil
	m.parked = m.parked[:last]
	s.parkedAt = 0
}

// copySendable returns a copy of the sendable queue in storage reused by
// the connection goroutine, its only caller.
func (m *streamsMap) copySendable() []*stream {
	m.sendableCopy = m.sched.appendAll(m.sendableCopy[:0])
	return m.sendableCopy
}

// processAttention applies what application goroutines did to streams:
// data read (flow-control credit to return), data written, closes and
// cancellations. Called by the connection goroutine before sending.
func (m *streamsMap) processAttention(now time.Time) {
	if !m.attentionPending.Load() {
		return
	}
	m.mu.Lock()
	list := m.attention
	m.attentionPending.Store(false)
	m.readPending = 0 // counted below, from the listed streams' readConsumed
	m.openBlockedSeen = m.blockedBidi || m.blockedUni
	m.readersWaiting = m.waitingReaders > 0
	if len(list) == 0 {
		m.mu.Unlock()
		return
	}
	m.attention = m.attentionSpare[:0]
	for _, s := range list {
		s.inAttention = false
		s.appPrio = s.prio
	}
	m.mu.Unlock()
	for _, s := range list {
		m.applyPriority(s)
		if s.applyAppChanges(now) {
			m.markSendable(s)
		} else {
			m.requeue(s)
		}
		m.maybeRetire(s)
	}
	// Only this goroutine swaps the lists, so list is no longer shared.
	clear(list)
	m.attentionSpare = list[:0]
}

// addRead counts n bytes an application read, once their stream is
// queued for attention, and reports whether the connection goroutine
// must learn of them now for a MAX_DATA to go out: otherwise a reader
// that stops halfway through one stream to wait for another could leave
// the peer waiting for the credit its reads freed. m.mu held.
func (m *streamsMap) addRead(n int) bool {
	m.readPending += int64(n)
	return m.readPending >= m.readWakeAt
}

// publishReadWakeAt tells readers after how many more bytes read the
// connection's MAX_DATA is due (flowcontrol.ReceiveWindow's
// ConsumedBeforeUpdate), and reports whether the reads not yet counted
// reach it already: a reader may have compared them with the value
// before, and the connection goroutine must then look at them again.
// An unchanged value needs no lock: every reader since compared with it
// under m.mu. Connection goroutine only.
func (m *streamsMap) publishReadWakeAt(n uint64) bool {
	at := int64(min(n, math.MaxInt64))
	if at == m.readWakeAt {
		return false
	}
	m.mu.Lock()
	m.readWakeAt = at
	p := m.readPending
	m.mu.Unlock()
	return p > 0 && p >= at
}

// publishAckOwed tells readers whether the goroutine owes the peer an ACK
// in the application space (ackOwed), and reports whether streams were
// queued meanwhile by readers that compared against the previous value,
// true, and did not wake it: it must then look at them now. An unchanged
// value needs no lock, as for publishReadWakeAt. Connection goroutine
// only.
func (m *streamsMap) publishAckOwed(owed bool) bool {
	if owed == m.ackOwed {
		return false
	}
	m.mu.Lock()
	m.ackOwed = owed
	queued := len(m.attention) > 0
	m.mu.Unlock()
	return !owed && queued
}

// publishStarved tells readers whether the connection's receive window is
// starved, and reports whether a reader waits meanwhile, so that the
// window should grow now. An unchanged value needs no lock, as for
// publishReadWakeAt. Connection goroutine only.
func (m *streamsMap) publishStarved(starved bool) bool {
	if starved == m.connStarved {
		return false
	}
	m.mu.Lock()
	m.connStarved = starved
	m.readersWaiting = m.waitingReaders > 0
	m.mu.Unlock()
	return starved && m.readersWaiting
}

// readerWaits counts a Read that starts to wait (+1) or stops (-1), and
// reports on +1 whether the connection's window is starved, so that the
// connection goroutine must run to grow it. When readers start or stop
// waiting at all, the goroutine refreshes its copy (readersWaiting) at
// its next processAttention.
func (m *streamsMap) readerWaits(d int64) bool {
	m.mu.Lock()
	before := m.waitingReaders > 0
	m.waitingReaders += d
	if before != (m.waitingReaders > 0) {
		m.attentionPending.Store(true)
	}
	starved := m.connStarved
	m.mu.Unlock()
	return d > 0 && starved
}

// hasDataToSend reports whether some stream has STREAM frames to send.
func (m *streamsMap) hasDataToSend() bool {
	return m.sched != nil && (m.sched.len() > 0 || m.sched.retransmit.n > 0)
}

// hasDataWaiting reports whether some stream has data to send, with or
// without the credit to send it.
func (m *streamsMap) hasDataWaiting() bool {
	return m.sched != nil && (m.sched.len() > 0 || m.sched.retransmit.n > 0) || len(m.parked) > 0
}

// rearmBlocked lets every stream waiting to send repeat its
// STREAM_DATA_BLOCKED frame (see connState.onKeepAlive), the parked ones
// too, which go back to the send queue for it.
func (m *streamsMap) rearmBlocked() {
	for _, s := range m.copySendable() {
		s.mu.Lock()
		s.sendFC.RearmBlocked()
		s.mu.Unlock()
		if s.controlDue() {
			m.q().control.pushBack(s)
		}
	}
	for len(m.parked) > 0 {
		s := m.parked[len(m.parked)-1]
		s.mu.Lock()
		s.sendFC.RearmBlocked()
		s.mu.Unlock()
		m.markSendable(s)
	}
}

// controlFramesPending reports whether stream-level control frames wait.
// The MAX_STREAMS state is the connection goroutine's; only the openers'
// blocked flags need m.mu.
func (m *streamsMap) controlFramesPending() bool {
	if m.sched != nil && m.sched.control.n > 0 || m.maxStreamsDue(true) || m.maxStreamsDue(false) {
		return true
	}
	if !m.openBlockedSeen {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.streamsBlockedDue(true) || m.streamsBlockedDue(false)
}

// maxStreamsDue reports whether a MAX_STREAMS frame should go out: when
// the one carrying the current limit was lost, or the limit rose (as
// streams closed) since the last one by a batch (half of the advertised
// unidirectional streams, an eighth of the bidirectional ones), or at
// all while the peer may open fewer than a batch more. The last rule
// keeps MaxIncomingStreams available to a peer that opens all it may
// ("Implementations might choose to increase limits as streams are
// closed, to keep the number of streams available to peers roughly
// consistent", RFC 9000, Section 4.6): a peer near its limit gets credit
// for each stream that closes, at once, while one far from it gets a
// frame per batch. Batching alone held back a peer with 95 of 100 streams
// open until 12 had closed. Request/response protocols (HTTP/3) keep many
// bidirectional streams in flight; waiting for half of them stalled about
// half of the new requests at 64 in flight against a limit of 100. A
// STREAMS_BLOCKED frame counts the streams it reports as opened
// (handleStreamsBlocked), but credit never waits for one: "An endpoint
// MUST NOT wait to receive this signal before advertising additional
// credit" (Section 4.6).
//
// Connection goroutine only; it writes all the state read here.
func (m *streamsMap) maxStreamsDue(bidi bool) bool {
	if bidi {
		return m.maxBidiLost || streamCreditDue(m.maxBidi, m.maxBidiSent, max(m.peerOpenedBidi, m.peerBlockedBidi),
			uint64(m.c.config.MaxIncomingStreams)/8)
	}
	return m.maxUniLost || streamCreditDue(m.maxUni, m.maxUniSent, max(m.peerOpenedUni, m.peerBlockedUni),
		uint64(m.c.config.MaxIncomingUniStreams)/2)
}

// streamCreditDue applies the rules of maxStreamsDue to a limit, the
// limit last sent, the streams the peer used and the batch size.
func streamCreditDue(limit, sent, used, batch uint64) bool {
	if limit <= sent {
		return false
	}
	batch = max(batch, 1)
	return limit-sent >= batch || sent-min(used, sent) < batch
}

// handleStreamsBlocked handles a STREAMS_BLOCKED frame: the peer wants to
// open a stream but has used the limit it carries. A limit below the one
// last sent means that the MAX_STREAMS carrying it was lost (or is late):
// it is sent again, with the current value. The streams the frame
// reports count as opened for maxStreamsDue, up to the limit sent (a
// larger value is a peer that lies, and changes nothing).
func (m *streamsMap) handleStreamsBlocked(f wire.StreamsBlockedFrame) {
	m.mu.Lock()
	defer m.mu.Unlock()
	blocked, sent, lost := &m.peerBlockedBidi, m.maxBidiSent, &m.maxBidiLost
	if !f.Bidi {
		blocked, sent, lost = &m.peerBlockedUni, m.maxUniSent, &m.maxUniLost
	}
	*blocked = max(*blocked, min(f.MaximumStreams, sent))
	if f.MaximumStreams < sent {
		*lost = true
	}
}

// streamsBlockedDue reports whether a STREAMS_BLOCKED frame should go
// out: an opener found the peer's limit reached, and no frame carrying
// that limit is outstanding. m.mu must be held.
func (m *streamsMap) streamsBlockedDue(bidi bool) bool {
	if bidi {
		return m.blockedBidi && m.streamsBlockedSentBidi != m.peerMaxBidi+1
	}
	return m.blockedUni && m.streamsBlockedSentUni != m.peerMaxUni+1
}

// appendControlFrames appends MAX_STREAMS, STREAMS_BLOCKED and each
// sendable stream's control frames (MAX_STREAM_DATA, STREAM_DATA_BLOCKED,
// RESET_STREAM, STOP_SENDING).
func (m *streamsMap) appendControlFrames(now time.Time, b []byte, end int) []byte {
	if m.maxStreamsDue(true) || m.maxStreamsDue(false) || m.openBlockedSeen {
		b = m.appendStreamsFrames(b, end)
	}
	return m.appendStreamControlFrames(now, b, end)
}

// appendStreamsFrames appends MAX_STREAMS and STREAMS_BLOCKED frames.
func (m *streamsMap) appendStreamsFrames(b []byte, end int) []byte {
	const space = ackhandler.SpaceApplication
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, bidi := range []bool{true, false} {
		if m.maxStreamsDue(bidi) {
			f := wire.MaxStreamsFrame{Bidi: bidi, MaximumStreams: m.maxUni}
			if bidi {
				f.MaximumStreams = m.maxBidi
			}
			// "If a max_streams transport parameter or a MAX_STREAMS frame
			// is received with a value greater than 2^60 ... the
			// connection MUST be closed" (RFC 9000, Section 4.6).
			f.MaximumStreams = min(f.MaximumStreams, wire.MaxStreamCount)
			if f.EncodedLen() <= end-len(b) {
				b = f.Append(b)
				if bidi {
					m.maxBidiSent, m.maxBidiLost = m.maxBidi, false
				} else {
					m.maxUniSent, m.maxUniLost = m.maxUni, false
				}
				m.c.sent.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeMaxStreamsBidi, Extra: boolToUint(bidi)})
			}
		}
		if m.streamsBlockedDue(bidi) {
			limit, sent := m.peerMaxBidi, &m.streamsBlockedSentBidi
			if !bidi {
				limit, sent = m.peerMaxUni, &m.streamsBlockedSentUni
			}
			// "A sender SHOULD send a STREAMS_BLOCKED frame when it wishes
			// to open a stream but is unable to do so due to the maximum
			// stream limit set by its peer" (RFC 9000, Section 19.14),
			// carrying "the maximum number of streams allowed at the time
			// the frame was sent".
			f := wire.StreamsBlockedFrame{Bidi: bidi, MaximumStreams: limit}
			if f.EncodedLen() <= end-len(b) {
				b = f.Append(b)
				*sent = limit + 1
				m.c.sent.AddFrame(space, ackhandler.FrameRecord{Type: wire.FrameTypeStreamsBlockedBidi, Extra: boolToUint(bidi), Offset: limit})
			}
		}
	}
	return b
}

// onFrameAcked and onFrameLost route the fate of stream frames to their
// stream (see connFrameHandler).
func (m *streamsMap) onFrameAcked(f *ackhandler.FrameRecord) {
	if s := m.lookup(wire.StreamID(f.StreamID)); s != nil {
		if s.onFrameAcked(f) {
			m.retire(s)
		}
	}
}

func (m *streamsMap) onFrameLost(f *ackhandler.FrameRecord) {
	switch f.Type {
	case wire.FrameTypeMaxStreamsBidi:
		m.mu.Lock()
		if f.Extra == 1 {
			m.maxBidiLost = true
		} else {
			m.maxUniLost = true
		}
		m.mu.Unlock()
		return
	case wire.FrameTypeStreamsBlockedBidi:
		// "A new frame is sent if a packet containing the most recent
		// frame for a scope is lost, but only while the endpoint is
		// blocked on the corresponding limit. These frames always include
		// the limit that is causing blocking at the time that they are
		// transmitted." (RFC 9000, Section 13.3) streamsBlockedDue checks
		// that an opener is still blocked when the frame is built.
		m.mu.Lock()
		sent := &m.streamsBlockedSentBidi
		if f.Extra == 0 {
			sent = &m.streamsBlockedSentUni
		}
		if *sent == f.Offset+1 {
			*sent = 0
		}
		m.mu.Unlock()
		return
	}
	if s := m.lookup(wire.StreamID(f.StreamID)); s != nil {
		if s.onFrameLost(f) {
			if f.Type.IsStream() {
				m.noteLost(s)
			}
			m.markSendable(s)
		} else {
			m.requeue(s)
		}
	}
}

// lookup returns the stream with id, or nil if it is not open.
// Connection goroutine only.
func (m *streamsMap) lookup(id wire.StreamID) *stream {
	if s := m.lastStream; s != nil && s.id == id {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[id]
	if s != nil {
		m.lastStream = s
	}
	return s
}

// maybeRetire forgets a stream whose both directions are finished, and
// gives the peer credit for another stream if it opened it: the limit
// rises "as streams are closed" (RFC 9000, Section 4.6). A stream the peer
// opened is retired only once the application accepted it: until then it
// waits in the accept queue, and giving its credit back would let the
// peer fill that queue without bound.
func (m *streamsMap) maybeRetire(s *stream) {
	s.mu.Lock()
	done := s.isDone()
	s.mu.Unlock()
	if done {
		m.retire(s)
	}
}

// retire is maybeRetire for a stream found done.
func (m *streamsMap) retire(s *stream) {
	retired := false
	defer func() { // after m.mu is released: the tracer may write a file
		if retired {
			s.cancelContext() // "Context is cancelled when the stream is finished in both directions"; takes s.mu
			m.rememberFinalSize(s)
			// Both buffers are empty now; the application may keep the
			// Stream for a while, but not their chunk tables.
			s.mu.Lock()
			s.recv.shrink()
			s.send.shrink()
			s.mu.Unlock()
			m.c.traceStreamClosed(s.id)
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.streams[s.id]; !ok || (s.id.Initiator() != m.role && !s.accepted) {
		return
	}
	delete(m.streams, s.id)
	if m.lastStream == s {
		m.lastStream = nil
	}
	m.unpark(s)
	m.unschedule(s)
	retired = true
	if s.id.Initiator() != m.role {
		if s.id.IsBidi() {
			m.peerClosedBidi++
			m.maxBidi++
		} else {
			m.peerClosedUni++
			m.maxUni++
		}
	}
}

// closeAll ends every stream with err when the connection ends.
func (m *streamsMap) closeAll(err error) {
	m.mu.Lock()
	if m.closed != nil {
		m.mu.Unlock()
		return
	}
	m.closed = err
	list := make([]*stream, 0, len(m.streams))
	for _, s := range m.streams {
		list = append(list, s)
	}
	notifyWaiters(&m.openWait)
	notifyWaiters(&m.acceptWaitBidi)
	notifyWaiters(&m.acceptWaitUni)
	m.mu.Unlock()
	for _, s := range list {
		s.closeWithConnError(err)
	}
}

// initStreamReceiver sets up a stream's receive-side flow control in r.
func (c *connState) initStreamReceiver(r *flowcontrol.StreamReceiver) {
	r.Init(flowcontrol.ReceiveConfig{
		InitialWindow: c.config.InitialStreamReceiveWindow, MaxWindow: c.config.MaxStreamReceiveWindow,
	}, c.connRecv)
}

func boolToUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// openCount returns the number of streams not yet retired.
func (m *streamsMap) openCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.streams)
}
