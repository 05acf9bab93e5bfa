package quic

import (
	"slices"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// connIDPeerEntry is an active connection ID the peer issued.
type connIDPeerEntry struct {
	seq      uint64
	cid      ConnectionID
	token    wire.StatelessResetToken
	hasToken bool // the server's handshake ID may come without a token
	used     bool // it was the destination of packets we sent
}

// connIDRetireEntry is a connection ID this endpoint retired whose
// RETIRE_CONNECTION_ID frame is not acknowledged yet.
type connIDRetireEntry struct {
	seq      uint64
	cid      ConnectionID // to detect its reuse with another sequence number
	inFlight bool         // sent, neither acknowledged nor lost
}

// peerConnIDs tracks the connection IDs the peer issued to this endpoint,
// which it uses as Destination Connection ID (RFC 9000, Section 5.1.2): the
// active ones with their stateless reset tokens, the one in use, and the
// RETIRE_CONNECTION_ID frames that retire the others.
//
// Limits against a peer: at most active_connection_id_limit active IDs (the
// value this endpoint advertised) and at most four times that many
// retirements waiting for acknowledgment (RFC 9000, Section 5.1.2 asks for at
// least twice); beyond either, the connection fails with
// CONNECTION_ID_LIMIT_ERROR. Four times leaves room for what a compliant
// peer can cause while acknowledgments are slow: the retirements of two
// Retire Prior To updates (the peer waits for our RETIRE_CONNECTION_ID
// frames, not for their acknowledgment, before the next one), late copies
// of NEW_CONNECTION_ID frames below Retire Prior To, and this endpoint's own
// retirements, which useNext keeps below the limit.
//
// Duplicates of retired IDs are recognized without remembering them all:
// every sequence number below doneBelow was seen or lies below a Retire
// Prior To value, and the few retired above it (after a gap in the peer's
// sequence numbers) are listed in retiredAbove, at most limit of them. A
// late copy of a frame below an older Retire Prior To cannot be told from a
// frame never seen, so its ID is retired (again, harmlessly) unless its
// retirement is still pending.
//
// The active ID is always one that is not retired. Nothing here reads the
// clock; the connection goroutine owns it.
type peerConnIDs struct {
	// ids are the active IDs by ascending sequence number; never empty.
	ids     []connIDPeerEntry
	cur     ConnectionID // the ID in use, one of ids
	zeroLen bool
	curSeq  uint64

	limit        uint64 // our active_connection_id_limit
	maxRPT       uint64 // largest Retire Prior To received
	doneBelow    uint64 // sequence numbers below it were seen or are below maxRPT
	retiredAbove []uint64
	retiring     []connIDRetireEntry
}

// init starts with the peer's handshake connection ID (sequence number 0)
// in use, and limit, the active_connection_id_limit this endpoint
// advertises (at least 2). A client passes the Destination Connection ID of
// its first Initial and replaces it with setInitial as the handshake goes on.
func (s *peerConnIDs) init(initial ConnectionID, limit uint64) {
	limit = max(limit, 2)
	n := min(limit, 16)
	// retiring and retiredAbove grow when the peer retires IDs: an idle
	// connection holds neither.
	*s = peerConnIDs{
		ids:   make([]connIDPeerEntry, 0, n+1),
		limit: limit,
	}
	s.ids = append(s.ids, connIDPeerEntry{cid: initial, used: true})
	s.cur = initial
	s.doneBelow = 1
	s.zeroLen = initial.Len() == 0
}

// setInitial replaces the connection ID with sequence number 0 during the
// handshake: a client first sends to a random Destination Connection ID,
// then to the Source Connection ID of a Retry, then to that of the server's
// Initial, which gets sequence number 0. "The connection ID that a client
// selects for the first Destination Connection ID field it sends and any
// connection ID provided by a Retry packet are not assigned sequence
// numbers." (RFC 9000, Section 5.1.1)
func (s *peerConnIDs) setInitial(cid ConnectionID) {
	if len(s.ids) == 0 || s.ids[0].seq != 0 {
		return
	}
	s.ids[0].cid = cid
	if s.curSeq == 0 {
		s.cur = cid
	}
	s.zeroLen = cid.Len() == 0
}

// setInitialResetToken sets the stateless reset token of the handshake ID,
// from the server's stateless_reset_token transport parameter: "Servers can
// also issue a stateless_reset_token transport parameter during the
// handshake that applies to the connection ID that it selected during the
// handshake." (RFC 9000, Section 10.3)
func (s *peerConnIDs) setInitialResetToken(token wire.StatelessResetToken) {
	if len(s.ids) > 0 && s.ids[0].seq == 0 {
		s.ids[0].token, s.ids[0].hasToken = token, true
	}
}

// addPreferredAddress adds the connection ID of the server's
// preferred_address transport parameter: "If the preferred_address
// transport parameter is sent, the sequence number of the supplied
// connection ID is 1." (RFC 9000, Section 5.1.1). It is not used until the
// connection moves to it (useNext). Errors are TRANSPORT_PARAMETER_ERRORs.
func (s *peerConnIDs) addPreferredAddress(cid ConnectionID, token wire.StatelessResetToken) error {
	// "A server that chooses a zero-length connection ID MUST NOT provide
	// a preferred address. Similarly, a server MUST NOT include a
	// zero-length connection ID in this transport parameter. A client MUST
	// treat a violation of these requirements as a connection error of
	// type TRANSPORT_PARAMETER_ERROR." (RFC 9000, Section 18.2)
	if s.zeroLen || cid.Len() == 0 {
		return connIDError(wire.TransportParameterError, 0, "preferred address with a zero-length connection ID")
	}
	if s.doneBelow > 1 || len(s.ids) != 1 {
		return connIDError(wire.TransportParameterError, 0, "preferred address after other connection IDs")
	}
	// "the same connection ID MUST NOT be issued more than once on the same
	// connection" (RFC 9000, Section 5.1)
	if s.ids[0].cid == cid {
		return connIDError(wire.TransportParameterError, 0, "preferred address repeats the handshake connection ID")
	}
	s.ids = append(s.ids, connIDPeerEntry{seq: 1, cid: cid, token: token, hasToken: true})
	s.advanceDone()
	return nil
}

// active returns the connection ID to send to.
func (s *peerConnIDs) active() ConnectionID { return s.cur }

// activeCount returns the number of active (not retired) peer IDs.
func (s *peerConnIDs) activeCount() int { return len(s.ids) }

// findSeq returns the index in ids of sequence number seq and whether it
// is there.
func (s *peerConnIDs) findSeq(seq uint64) (int, bool) {
	return slices.BinarySearchFunc(s.ids, seq, func(e connIDPeerEntry, seq uint64) int {
		switch {
		case e.seq < seq:
			return -1
		case e.seq > seq:
			return 1
		}
		return 0
	})
}

// onNewConnectionID handles a NEW_CONNECTION_ID frame (RFC 9000,
// Sections 5.1.2 and 19.15), which the wire parser has checked for encoding
// (a connection ID of 1 to 20 bytes, Retire Prior To not above Sequence
// Number). Errors are *wire.TransportError values; on error nothing
// changes.
func (s *peerConnIDs) onNewConnectionID(f wire.NewConnectionIDFrame) error {
	const ft = wire.FrameTypeNewConnectionID
	// "An endpoint that is sending packets with a zero-length Destination
	// Connection ID MUST treat receipt of a NEW_CONNECTION_ID frame as a
	// connection error of type PROTOCOL_VIOLATION." (RFC 9000,
	// Section 19.15)
	if s.zeroLen {
		return connIDError(wire.ProtocolViolation, ft, "new connection ID while using zero-length connection IDs")
	}
	// The parser's checks, repeated for frames built by hand.
	if f.ConnectionID.Len() == 0 || f.RetirePriorTo > f.SequenceNumber {
		return connIDError(wire.FrameEncodingError, ft, "invalid connection ID length or retire prior to")
	}
	seq, cid := f.SequenceNumber, f.ConnectionID

	// "Receipt of the same frame multiple times MUST NOT be treated as a
	// connection error." ... "If an endpoint receives a NEW_CONNECTION_ID
	// frame that repeats a previously issued connection ID with a different
	// Stateless Reset Token field value or a different Sequence Number
	// field value, or if a sequence number is used for different connection
	// IDs, the endpoint MAY treat that receipt as a connection error of
	// type PROTOCOL_VIOLATION." (RFC 9000, Section 19.15)
	// The checks cover the IDs still remembered: active and retiring ones.
	i, isActive := s.findSeq(seq)
	if isActive {
		e := &s.ids[i]
		if e.cid != cid || !e.hasToken || e.token != f.StatelessResetToken {
			return connIDError(wire.ProtocolViolation, ft, "sequence number reused with a different connection ID or token")
		}
	}
	isRetiring := false
	for j := range s.retiring {
		r := &s.retiring[j]
		if r.seq == seq {
			if r.cid != cid {
				return connIDError(wire.ProtocolViolation, ft, "sequence number reused with a different connection ID")
			}
			isRetiring = true
		} else if r.cid == cid {
			return connIDError(wire.ProtocolViolation, ft, "connection ID reused with a different sequence number")
		}
	}
	for j := range s.ids {
		if s.ids[j].seq != seq && s.ids[j].cid == cid {
			return connIDError(wire.ProtocolViolation, ft, "connection ID reused with a different sequence number")
		}
	}

	// "Once a sender indicates a Retire Prior To value, smaller values sent
	// in subsequent NEW_CONNECTION_ID frames have no effect. A receiver
	// MUST ignore any Retire Prior To fields that do not increase the
	// largest received Retire Prior To value." (RFC 9000, Section 19.15)
	rpt := max(s.maxRPT, f.RetirePriorTo)

	// What to do with the frame's own ID.
	seen := seq < s.doneBelow || s.isRetiredAbove(seq)
	var add, retireNew bool
	switch {
	case isActive || isRetiring:
		// A duplicate of an ID we hold or are retiring.
	case seen && seq >= s.maxRPT:
		// An ID we retired ourselves, whose retirement was acknowledged:
		// retired already, nothing to send again.
	case seen || seq < rpt:
		// "An endpoint that receives a NEW_CONNECTION_ID frame with a
		// sequence number smaller than the Retire Prior To field of a
		// previously received NEW_CONNECTION_ID frame MUST send a
		// corresponding RETIRE_CONNECTION_ID frame that retires the newly
		// received connection ID, unless it has already done so for that
		// sequence number." (RFC 9000, Section 19.15) Below an older Retire
		// Prior To, an ID seen and retired before cannot be told from one
		// never seen; retiring it again is harmless.
		retireNew = true
	default:
		add = true
	}

	// "Upon receipt of an increased Retire Prior To field, the peer MUST
	// stop using the corresponding connection IDs and retire them with
	// RETIRE_CONNECTION_ID frames before adding the newly provided
	// connection ID to the set of active connection IDs." (RFC 9000,
	// Section 5.1.2)
	var below int
	for j := range s.ids {
		if s.ids[j].seq < rpt {
			below++
		}
	}
	active := len(s.ids) - below
	if add {
		active++
	}
	// "After processing a NEW_CONNECTION_ID frame and adding and retiring
	// active connection IDs, if the number of active connection IDs exceeds
	// the value advertised in its active_connection_id_limit transport
	// parameter, an endpoint MUST close the connection with an error of
	// type CONNECTION_ID_LIMIT_ERROR." (RFC 9000, Section 5.1.1)
	if uint64(active) > s.limit {
		return connIDError(wire.ConnectionIDLimitError, ft, "more active connection IDs than active_connection_id_limit")
	}
	// "An endpoint SHOULD limit the number of connection IDs it has retired
	// locally for which RETIRE_CONNECTION_ID frames have not yet been
	// acknowledged. An endpoint SHOULD allow for sending and tracking a
	// number of RETIRE_CONNECTION_ID frames of at least twice the value of
	// the active_connection_id_limit transport parameter. An endpoint MUST
	// NOT forget a connection ID without retiring it, though it MAY choose
	// to treat having connection IDs in need of retirement that exceed this
	// limit as a connection error of type CONNECTION_ID_LIMIT_ERROR."
	// (RFC 9000, Section 5.1.2)
	retire := below
	if retireNew {
		retire++
	}
	if uint64(len(s.retiring)+retire) > s.maxRetiring() {
		return connIDError(wire.ConnectionIDLimitError, ft, "too many connection IDs waiting for retirement")
	}
	// A compliant peer's frame that raises Retire Prior To carries a new ID
	// at or above it, so this happens only when a sequence number is
	// reused with another Retire Prior To.
	if active == 0 {
		return connIDError(wire.ProtocolViolation, ft, "retire prior to leaves no connection ID")
	}

	// Apply.
	s.maxRPT = rpt
	if below > 0 {
		j := 0
		for _, e := range s.ids {
			if e.seq < rpt {
				s.retiring = append(s.retiring, connIDRetireEntry{seq: e.seq, cid: e.cid})
				continue
			}
			s.ids[j] = e
			j++
		}
		clear(s.ids[j:])
		s.ids = s.ids[:j]
	}
	if retireNew {
		s.retiring = append(s.retiring, connIDRetireEntry{seq: seq, cid: cid})
	}
	if add {
		i, _ := s.findSeq(seq)
		s.ids = slices.Insert(s.ids, i, connIDPeerEntry{seq: seq, cid: cid, token: f.StatelessResetToken, hasToken: true})
	}
	if s.curSeq < rpt {
		// The one in use was retired: move to the oldest unused one, not
		// to one another path sends to: "An endpoint MUST NOT reuse a
		// connection ID when sending from more than one local address"
		// (RFC 9000, Section 9.5). With none unused, the oldest; the
		// connection takes it from the path that holds it
		// (connState.handleNewConnectionID).
		s.switchTo(s.oldestUnused())
	}
	s.advanceDone()
	return nil
}

// maxRetiring is the bound on unacknowledged retirements: four times the
// limit.
func (s *peerConnIDs) maxRetiring() uint64 { return 4 * s.limit }

// isRetiredAbove reports whether seq is in retiredAbove.
func (s *peerConnIDs) isRetiredAbove(seq uint64) bool {
	_, ok := slices.BinarySearch(s.retiredAbove, seq)
	return ok
}

// advanceDone moves doneBelow up to maxRPT and then past every sequence
// number seen, dropping retiredAbove entries it passes.
func (s *peerConnIDs) advanceDone() {
	s.doneBelow = max(s.doneBelow, s.maxRPT)
	k := 0
	for k < len(s.retiredAbove) && s.retiredAbove[k] < s.doneBelow {
		k++
	}
	for {
		if k < len(s.retiredAbove) && s.retiredAbove[k] == s.doneBelow {
			k++
		} else if _, ok := s.findSeq(s.doneBelow); !ok {
			break
		}
		s.doneBelow++
	}
	if k > 0 {
		n := copy(s.retiredAbove, s.retiredAbove[k:])
		s.retiredAbove = s.retiredAbove[:n]
	}
}

// oldestUnused returns the index in ids of the oldest ID never used, or 0
// if every one was.
func (s *peerConnIDs) oldestUnused() int {
	for i := range s.ids {
		if !s.ids[i].used {
			return i
		}
	}
	return 0
}

// switchTo makes ids[i] the ID in use.
func (s *peerConnIDs) switchTo(i int) {
	s.ids[i].used = true
	s.cur, s.curSeq = s.ids[i].cid, s.ids[i].seq
}

// useNext switches to an unused active ID, the oldest, and retires the one
// in use, for example when migrating to a new path: "An endpoint can change
// the connection ID it uses for a peer to another available one at any time
// during the connection." ... "When the endpoint wishes to remove a
// connection ID from use, it sends a RETIRE_CONNECTION_ID frame to its
// peer." (RFC 9000, Section 5.1.2). It reports false, changing nothing, if
// there is no unused ID, the peer uses zero-length IDs, or limit
// retirements are already waiting for acknowledgment: the rest of the bound
// on them is kept for those the peer asks for.
func (s *peerConnIDs) useNext() bool {
	if s.zeroLen {
		return false
	}
	next := -1
	for i := range s.ids {
		if !s.ids[i].used {
			next = i
			break
		}
	}
	if next < 0 || uint64(len(s.retiring)) >= s.limit {
		return false
	}
	old, ok := s.findSeq(s.curSeq)
	if !ok {
		return false // not reached: the ID in use is always active
	}
	oldSeq := s.curSeq
	if oldSeq >= s.doneBelow && uint64(len(s.retiredAbove)) >= s.limit {
		return false
	}
	s.retiring = append(s.retiring, connIDRetireEntry{seq: oldSeq, cid: s.cur})
	s.switchTo(next)
	s.ids = slices.Delete(s.ids, old, old+1)
	if oldSeq >= s.doneBelow {
		i, _ := slices.BinarySearch(s.retiredAbove, oldSeq)
		s.retiredAbove = slices.Insert(s.retiredAbove, i, oldSeq)
	}
	s.advanceDone()
	return true
}

// isStatelessReset reports whether datagram ends with the stateless reset
// token of an active peer ID that was used, each compared in constant time
// (handshake.IsStatelessReset). "An endpoint MUST NOT check for any
// stateless reset tokens associated with connection IDs it has not used or
// for connection IDs that have been retired." (RFC 9000, Section 10.3.1).
// Every eligible token is compared, whether or not one matched.
func (s *peerConnIDs) isStatelessReset(datagram []byte) bool {
	match := false
	for i := range s.ids {
		e := &s.ids[i]
		if e.hasToken && e.used {
			match = handshake.IsStatelessReset(datagram, e.token) || match
		}
	}
	return match
}

// nextFrame returns the RETIRE_CONNECTION_ID frame to send next and whether
// there is one; it changes nothing. The caller that puts the frame in a
// packet calls frameSent. That packet must not be sent to the connection ID
// being retired: "The sequence number specified in a RETIRE_CONNECTION_ID
// frame MUST NOT refer to the Destination Connection ID field of the packet
// in which the frame is contained." (RFC 9000, Section 19.16); active()
// never returns a retired ID.
func (s *peerConnIDs) nextFrame() (wire.RetireConnectionIDFrame, bool) {
	for i := range s.retiring {
		if !s.retiring[i].inFlight {
			return wire.RetireConnectionIDFrame{SequenceNumber: s.retiring[i].seq}, true
		}
	}
	return wire.RetireConnectionIDFrame{}, false
}

// hasFrames reports whether a RETIRE_CONNECTION_ID frame is waiting to be
// sent.
func (s *peerConnIDs) hasFrames() bool {
	_, ok := s.nextFrame()
	return ok
}

// frameSent records that the RETIRE_CONNECTION_ID frame for seq was put in a
// packet; its fate is reported with onFrameAcked or onFrameLost.
func (s *peerConnIDs) frameSent(seq uint64) {
	if i := s.findRetiring(seq); i >= 0 {
		s.retiring[i].inFlight = true
	}
}

// appendFrames appends pending RETIRE_CONNECTION_ID frames to b while
// len(b) stays within limit, marks them sent, and appends their sequence
// numbers to sent. It does not allocate if b and sent have room.
func (s *peerConnIDs) appendFrames(b []byte, limit int, sent []uint64) ([]byte, []uint64) {
	for {
		f, ok := s.nextFrame()
		if !ok || len(b)+f.EncodedLen() > limit {
			return b, sent
		}
		b = f.Append(b)
		s.frameSent(f.SequenceNumber)
		sent = append(sent, f.SequenceNumber)
	}
}

// onFrameAcked records the acknowledgment of the RETIRE_CONNECTION_ID frame
// for seq: the retirement is complete and no longer tracked.
func (s *peerConnIDs) onFrameAcked(seq uint64) {
	if i := s.findRetiring(seq); i >= 0 {
		s.retiring = slices.Delete(s.retiring, i, i+1)
	}
}

// onFrameLost records the loss of the RETIRE_CONNECTION_ID frame for seq:
// it is sent again.
func (s *peerConnIDs) onFrameLost(seq uint64) {
	if i := s.findRetiring(seq); i >= 0 {
		s.retiring[i].inFlight = false
	}
}

// findRetiring returns the index in retiring of seq, or -1.
func (s *peerConnIDs) findRetiring(seq uint64) int {
	for i := range s.retiring {
		if s.retiring[i].seq == seq {
			return i
		}
	}
	return -1
}
