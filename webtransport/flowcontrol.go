package webtransport

import "github.com/quicstack/quic/http3"

// flowControl is a session's WebTransport flow control
// (draft-ietf-webtrans-http3, Section 5): the number of streams each side
// may open (WT_MAX_STREAMS) and the stream data each side may send
// (WT_MAX_DATA). "Flow control is enabled when both endpoints declare
// their intent to use flow control" by sending a non-zero initial limit
// in SETTINGS (Section 5.1); otherwise nothing is limited here (QUIC's
// own flow control still is) and a connection carries one session at a
// time. Its fields are guarded by the session's mutex.
//
// Stream data is counted as the application reads it (and as it writes
// it), and when a stream ends, up to its final size, which QUIC reports
// (quic.Stream.FinalSize, SentFinalSize): the data of a stream reset or
// abandoned before it was read counts on both sides, and the data a
// reset discarded before it was sent counts on neither (settle,
// settleSend).
type flowControl struct {
	enabled bool

	// Streams the peer may open: the cumulative limit advertised, those
	// it opened and those of them finished; window is how many may be
	// open at once.
	maxInBidi, inBidi, doneBidi, windowBidi uint64
	maxInUni, inUni, doneUni, windowUni     uint64
	// Streams this endpoint may open, and the limit plus one at which
	// WT_STREAMS_BLOCKED was sent (0: never).
	peerMaxBidi, outBidi, blockedBidi uint64
	peerMaxUni, outUni, blockedUni    uint64
	// Stream data: the peer's limit, what was sent, and the limit plus
	// one at which WT_DATA_BLOCKED was sent; the limit advertised, what
	// the application read, and the window.
	peerMaxData, sentData, blockedData uint64
	maxInData, readData, windowData    uint64
}

// newFlowControl sets flow control up from the limits this endpoint
// advertised and the peer's SETTINGS.
func newFlowControl(c *Config, peer []http3.Setting) flowControl {
	var fc flowControl
	local := c.initialSettings()
	if len(local) == 0 {
		return fc
	}
	for _, s := range peer {
		switch s.ID {
		case settingWTInitialMaxStreamsBidi:
			fc.peerMaxBidi = min(s.Value, maxStreamsLimit)
		case settingWTInitialMaxStreamsUni:
			fc.peerMaxUni = min(s.Value, maxStreamsLimit)
		case settingWTInitialMaxData:
			fc.peerMaxData = s.Value
		}
	}
	if fc.peerMaxBidi == 0 && fc.peerMaxUni == 0 && fc.peerMaxData == 0 {
		return flowControl{}
	}
	fc.enabled = true
	fc.maxInBidi, fc.windowBidi = c.maxIncomingStreams(), c.maxIncomingStreams()
	fc.maxInUni, fc.windowUni = c.maxIncomingUniStreams(), c.maxIncomingUniStreams()
	fc.maxInData, fc.windowData = c.maxIncomingData(), c.maxIncomingData()
	return fc
}

// countIncoming counts a stream the peer opened; false if it exceeds the
// limit: "If an endpoint receives an incoming stream for a session that
// would exceed the advertised Maximum Streams value, it MUST close the
// WebTransport session with a WT_FLOW_CONTROL_ERROR error code" (Section
// 5.6.1).
func (fc *flowControl) countIncoming(bidi bool) bool {
	if !fc.enabled {
		return true
	}
	if bidi {
		fc.inBidi++
		return fc.inBidi <= fc.maxInBidi
	}
	fc.inUni++
	return fc.inUni <= fc.maxInUni
}

// incomingDone counts a finished stream the peer opened and returns the
// WT_MAX_STREAMS capsule to send, if its limit should rise: "Endpoints
// SHOULD send WT_MAX_DATA and WT_MAX_STREAMS capsules as they consume
// data or close streams" (Section 5.6), here once half the window is
// free again.
func (fc *flowControl) incomingDone(bidi bool) (limit, capsuleType uint64) {
	if !fc.enabled {
		return 0, 0
	}
	done, max, window, typ := &fc.doneUni, &fc.maxInUni, fc.windowUni, uint64(capsuleMaxStreamsUni)
	if bidi {
		done, max, window, typ = &fc.doneBidi, &fc.maxInBidi, fc.windowBidi, capsuleMaxStreamsBidi
	}
	*done++
	if next := min(*done+window, maxStreamsLimit); window > 0 && next > *max && next-*max >= (window+1)/2 {
		*max = next
		return next, typ
	}
	return 0, 0
}

// takeOutgoing takes a credit for a stream this endpoint opens. When
// there is none it returns the limit plus one for a WT_STREAMS_BLOCKED
// capsule the first time, 0 after.
func (fc *flowControl) takeOutgoing(bidi bool) (ok bool, blocked uint64) {
	if !fc.enabled {
		return true, 0
	}
	out, max, sent := &fc.outUni, fc.peerMaxUni, &fc.blockedUni
	if bidi {
		out, max, sent = &fc.outBidi, fc.peerMaxBidi, &fc.blockedBidi
	}
	// "An endpoint MUST NOT open more streams than permitted by the
	// current stream limit set by its peer." (Section 5.6.1)
	if *out < max {
		*out++
		return true, 0
	}
	if *sent != max+1 {
		*sent = max + 1
		return false, max + 1
	}
	return false, 0
}

// untakeOutgoing returns a credit taken for a stream that was not opened.
func (fc *flowControl) untakeOutgoing(bidi bool) {
	if !fc.enabled {
		return
	}
	if bidi {
		fc.outBidi--
	} else {
		fc.outUni--
	}
}

// takeData takes up to n bytes of the peer's data credit. When there is
// none it returns the limit plus one for a WT_DATA_BLOCKED capsule the
// first time, 0 after.
func (fc *flowControl) takeData(n uint64) (granted, blocked uint64) {
	if !fc.enabled {
		return n, 0
	}
	// "The sum of the lengths of Stream Body data sent on all streams
	// associated with this session MUST NOT exceed the Maximum Data value
	// advertised by a receiver." (Section 5.6.3)
	g := min(n, fc.peerMaxData-fc.sentData)
	fc.sentData += g
	if g == 0 && fc.blockedData != fc.peerMaxData+1 {
		fc.blockedData = fc.peerMaxData + 1
		return 0, fc.peerMaxData + 1
	}
	return g, 0
}

// onRead counts n bytes the application read and returns the new limit
// to send in WT_MAX_DATA, if it should rise, or false if the peer sent
// more than it was allowed: "If an endpoint receives Stream Body data in
// excess of this limit, it MUST close the WebTransport session with a
// WT_FLOW_CONTROL_ERROR error code" (Section 5.6.3).
func (fc *flowControl) onRead(n uint64) (update uint64, ok bool) {
	if !fc.enabled {
		return 0, true
	}
	fc.readData += n
	if fc.readData > fc.maxInData {
		return 0, false
	}
	if next := min(fc.readData+fc.windowData, maxVarint); next > fc.maxInData && next-fc.maxInData >= fc.windowData/2 {
		fc.maxInData = next
		return next, true
	}
	return 0, true
}

// onCapsule applies a flow control capsule from the peer; false for a
// violation that closes the session with WT_FLOW_CONTROL_ERROR. raised
// reports a higher limit for this endpoint.
func (fc *flowControl) onCapsule(typ uint64, v []byte) (raised, ok bool) {
	n, l, okv := parseVarint(v)
	if !okv || l != len(v) {
		return false, false
	}
	if !fc.enabled {
		// "if flow control is not enabled, an endpoint MUST ignore
		// receipt of any flow control capsules" (Section 5.1).
		return false, true
	}
	switch typ {
	case capsuleMaxStreamsBidi, capsuleMaxStreamsUni:
		max := &fc.peerMaxUni
		if typ == capsuleMaxStreamsBidi {
			max = &fc.peerMaxBidi
		}
		// "Recipients of a capsule with a Maximum Streams value larger
		// than this limit MUST close the WebTransport session with a
		// WT_FLOW_CONTROL_ERROR error code." "If an endpoint receives a
		// WT_MAX_STREAMS capsule that does not increase the Maximum
		// Streams value previously received, it MUST close the
		// WebTransport session with a WT_FLOW_CONTROL_ERROR error code."
		// (Section 5.6.1)
		if n > maxStreamsLimit || n <= *max {
			return false, false
		}
		*max = n
		return true, true
	case capsuleMaxData:
		// "If an endpoint receives a WT_MAX_DATA capsule with a Maximum
		// Data value that does not increase the Maximum Data value
		// previously received, it MUST close the WebTransport session
		// with a WT_FLOW_CONTROL_ERROR error code." (Section 5.6.3)
		if n <= fc.peerMaxData {
			return false, false
		}
		fc.peerMaxData = n
		return true, true
	case capsuleStreamsBlockedBidi, capsuleStreamsBlockedUni:
		// "Recipients of a capsule with a Maximum Streams value larger
		// than this limit MUST close the WebTransport session"
		// (Section 5.6.2).
		return false, n <= maxStreamsLimit
	}
	return false, true // WT_DATA_BLOCKED: information only
}

// handleFlowControlCapsule applies a flow control capsule and wakes the
// openers and writers waiting for credit; false for a violation.
func (s *Session) handleFlowControlCapsule(c http3.Capsule) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	raised, ok := s.fc.onCapsule(c.Type, c.Value)
	if raised && s.err == nil {
		close(s.creditCh)
		s.creditCh = make(chan struct{})
	}
	return ok
}

// recvCredit is what a stream the peer sends on has counted in the
// session's data flow control: the bytes the application read, and,
// once the stream ended, the rest up to its final size. Guarded by the
// session's mutex.
type recvCredit struct {
	hdr     uint64 // the peer's WebTransport header on the stream, not counted
	read    uint64 // counted as the application read them
	settled bool   // the final size was counted: later reads are not
}

// receiver is a stream with a receiving direction.
type receiver interface {
	credit() *recvCredit
	finalSize() (uint64, bool)
}

// onRead counts n bytes the application read on a stream of the session.
func (s *Session) onRead(rc *recvCredit, n int) {
	if !s.fc.enabled || n == 0 {
		return
	}
	s.mu.Lock()
	if rc.settled {
		s.mu.Unlock()
		return
	}
	rc.read += uint64(n)
	update, ok := s.fc.onRead(uint64(n))
	s.mu.Unlock()
	if !ok {
		s.flowControlError()
		return
	}
	if update != 0 {
		s.writeCapsule(capsuleMaxData, appendVarint(nil, update))
	}
}

// settle counts the data of a stream that ended which the application
// did not read, from its final size: "For streams that were reset,
// implementing WT_MAX_DATA requires that the QUIC stack provide the
// WebTransport implementation with information about the final size of
// streams ... This guarantees that both endpoints agree on how much
// WebTransport session flow control credit was consumed by the sender on
// that stream." (Section 5.6.3) Without it, a sender whose streams end
// unread would run out of credit for good. It returns the WT_MAX_DATA
// limit to send, if it rises. Data beyond the limit is not an error
// here: it was discarded, not buffered, and the header's length is
// assumed minimal. s.mu held.
func (s *Session) settle(r receiver) uint64 {
	rc := r.credit()
	if !s.fc.enabled || rc.settled {
		return 0
	}
	size, known := r.finalSize()
	if !known {
		return 0 // the connection ended
	}
	rc.settled = true
	if size <= rc.hdr+rc.read {
		return 0
	}
	update, _ := s.fc.onRead(size - rc.hdr - rc.read)
	return update
}

// sender is a stream with a sending direction.
type sender interface {
	sendCredit() (taken *uint64, hdr uint64)
	sentFinalSize() (uint64, bool)
}

// settleSend takes back the session data credit that Writes on a stream
// took for data its reset discarded: the peer counts the stream's final
// size (settle), so this endpoint counts the same (Section 5.6.3). It
// reports whether credit came back. s.mu held.
func (s *Session) settleSend(w sender) bool {
	if !s.fc.enabled {
		return false
	}
	taken, hdr := w.sendCredit()
	size, reset := w.sentFinalSize()
	if !reset || size < hdr || *taken <= size-hdr {
		return false
	}
	back := *taken - (size - hdr)
	*taken = size - hdr
	s.fc.sentData -= min(back, s.fc.sentData)
	return true
}
