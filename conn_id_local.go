package quic

import (
	"crypto/rand"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// connIDEvent is a change in the routing of one of this connection's IDs
// that the connection asks of its endpoint, in the way quinn-proto's
// connections emit EndpointEvent::NeedIdentifiers and RetireConnectionId
// instead of touching the endpoint's table: the core queues them
// (localConnIDs.pollEvent) and the driver hands them to the endpoint that
// owns the routing table (endpoint.handleConnIDEvent), between handling
// input and polling for datagrams.
//
// An issued ID waits, unsendable, until the endpoint answers that it
// routes it (localConnIDs.onRouted): "When an endpoint issues a
// connection ID, it MUST accept packets that carry this connection ID for
// the duration of the connection or until its peer invalidates the
// connection ID via a RETIRE_CONNECTION_ID frame" (RFC 9000,
// Section 5.1.1), so the ID is routed before any frame can carry it to the
// peer. If it routes somewhere else already, the endpoint says so and the
// connection picks another. A retired ID (the peer's RETIRE_CONNECTION_ID,
// or the connection is gone) is removed; the connection never issues it
// again. Zero-length IDs cause no events: the endpoint routes those by
// address.
type connIDEvent struct {
	retire bool
	seq    uint64
	cid    ConnectionID
	token  wire.StatelessResetToken
}

const (
	// connIDDefaultLocalMax is how many active connection IDs this
	// endpoint gives its peer at most by default, if the peer's
	// active_connection_id_limit allows: "An endpoint SHOULD ensure that
	// its peer has a sufficient number of available and unused connection
	// IDs" (RFC 9000, Section 5.1.1). Eight covers the handshake ID, a few
	// migrations and probes of several paths at once.
	connIDDefaultLocalMax = 8
	// connIDGenerateAttempts is how many times issuing asks the generator
	// for an ID before giving up when IDs are already in use, by this
	// connection or (the endpoint's answer) by another.
	connIDGenerateAttempts = 4
	// connIDRetiredMax bounds how many IDs the peer may retire on one
	// connection: each is remembered (a 64-bit hash) so that it is never
	// issued again, and once this many were retired no replacement is
	// issued: supplying one is a SHOULD ("An endpoint SHOULD supply a new
	// connection ID when the peer retires a connection ID", RFC 9000,
	// Section 5.1.1), and a peer that migrated a thousand times can live
	// with the IDs it holds.
	connIDRetiredMax = 1024
)

// connIDRetiredSeed hashes retired connection IDs (localConnIDs.retired).
var connIDRetiredSeed = maphash.MakeSeed()

// connIDLocalState is what is known about the delivery of a local
// connection ID to the peer.
type connIDLocalState uint8

const (
	// connIDLocalPending: its NEW_CONNECTION_ID frame needs sending, for
	// the first time or again after a loss.
	connIDLocalPending connIDLocalState = iota
	// connIDLocalInFlight: its frame was sent and is neither acknowledged
	// nor declared lost.
	connIDLocalInFlight
	// connIDLocalAcked: the peer has it, from an acknowledged frame or the
	// handshake (sequence numbers 0 and 1).
	connIDLocalAcked
	// connIDLocalUnrouted: issued, its issue event not yet answered by
	// the endpoint; its frame waits.
	connIDLocalUnrouted
)

// connIDLocalEntry is a connection ID this endpoint issued and the peer has
// not retired yet.
type connIDLocalEntry struct {
	seq   uint64
	rpt   uint64 // Retire Prior To of its frame, fixed when first sent
	cid   ConnectionID
	token wire.StatelessResetToken
	state connIDLocalState
	sent  bool  // its frame was sent at least once
	tries uint8 // IDs the endpoint refused for seq
}

// localConnIDs tracks the connection IDs this endpoint issued to its peer,
// which the peer uses as Destination Connection ID (RFC 9000, Section 5.1):
// their sequence numbers and stateless reset tokens, the NEW_CONNECTION_ID
// frames that carry them, and their retirement by the peer.
//
// It keeps the peer supplied: as many IDs with a sequence number at or
// above the current Retire Prior To as the peer's active_connection_id_limit
// and this endpoint's own maximum allow, counting the handshake ID
// (sequence number 0) and the preferred_address one (1). "An endpoint MUST
// NOT provide more connection IDs than the peer's limit" (RFC 9000,
// Section 5.1.1). IDs below Retire Prior To are not counted: "An endpoint
// MAY send connection IDs that temporarily exceed a peer's limit if the
// NEW_CONNECTION_ID frame also requires the retirement of any excess, by
// including a sufficiently large value in the Retire Prior To field."
//
// Memory is bounded by about twice the maximum number of active IDs: a new
// Retire Prior To is refused until the IDs below the previous one are
// retired; and by connIDRetiredMax hashes of IDs the peer retired, which
// are never issued again. An endpoint whose generator makes zero-length IDs issues only the
// handshake ID. Nothing here reads the clock; the connection goroutine owns
// it.
type localConnIDs struct {
	gen      ConnectionIDGenerator
	resetter *handshake.StatelessResetter // nil: random tokens

	// events are the routing changes for the endpoint, from evHead on
	// (connIDEvent); the slice is reused once drained.
	events []connIDEvent
	evHead int

	// ids are the issued IDs not retired by the peer, by ascending
	// sequence number.
	ids []connIDLocalEntry

	// retired are the hashes of the IDs the peer retired, which generate
	// refuses: "the same connection ID MUST NOT be issued more than once
	// on the same connection" (RFC 9000, Section 5.1), whatever the
	// generator returns. At most connIDRetiredMax; a hash collision only
	// refuses an ID that was free.
	retired []uint64

	initialCID   ConnectionID
	initialToken wire.StatelessResetToken
	zeroLen      bool

	maxActive   uint64 // this endpoint's own cap on active IDs
	peerLimit   uint64 // the peer's active_connection_id_limit; 0 until known
	nextSeq     uint64 // sequence number of the next ID issued
	highestSent uint64 // highest sequence number sent to the peer
	rpt         uint64 // Retire Prior To of frames sent from now on

	// mayPend is false only when no entry of ids is connIDLocalPending:
	// every change to that state sets it (onRouted, onFrameLost; entries
	// are added in other states), and nextFrame clears it when it finds
	// none. nextFrame runs for each packet sent, and its scan of ids was
	// 2% of a bulk sender's CPU at 1,452-byte packets (issue 28).
	mayPend bool
}

// init issues the handshake connection ID, sequence number 0: "The initial connection ID issued by an endpoint is sent in the Source
// Connection ID field of the long packet header (Section 17.2) during the
// handshake. The sequence number of the initial connection ID is 0."
// (RFC 9000, Section 5.1.1). routed, if not empty, is that ID, generated
// and routed to this connection by the endpoint before the connection
// existed (endpoint.newConnID), as quinn-proto's endpoint picks a new
// connection's ID; otherwise init generates it and queues its issue
// event, which the driver must hand to the endpoint before the first
// datagram is sent (a collision is then an error: the ID is in the
// transport parameters already). Tokens come from resetter, or from
// crypto/rand if it is nil. maxActive caps the active IDs given to the
// peer; 0 means connIDDefaultLocalMax (8). IDs are issued beyond the
// handshake ones only after setPeerLimit.
func (s *localConnIDs) init(gen ConnectionIDGenerator, resetter *handshake.StatelessResetter, routed ConnectionID, maxActive int) error {
	*s = localConnIDs{
		gen:       gen,
		resetter:  resetter,
		maxActive: connIDDefaultLocalMax,
		zeroLen:   gen.ConnectionIDLen() == 0,
	}
	if maxActive > 0 {
		s.maxActive = uint64(maxActive)
	}
	// ids grows on demand: an idle connection holds the IDs it issued,
	// not room for the churn of a migrating one (see setPeerLimit).
	s.ids = make([]connIDLocalEntry, 0, 1)
	cid, token, err := s.generateOrUse(routed, 0)
	if err != nil {
		return err
	}
	s.initialCID, s.initialToken = cid, token
	s.ids = append(s.ids, connIDLocalEntry{cid: cid, token: token, state: connIDLocalAcked, sent: true})
	s.nextSeq = 1
	return nil
}

// initial returns the handshake connection ID (sequence number 0), for the
// Source Connection ID of long headers and the initial_source_connection_id
// transport parameter. It stays valid after the peer retires the ID.
func (s *localConnIDs) initial() ConnectionID { return s.initialCID }

// initialResetToken returns the stateless reset token of the handshake ID,
// which a server sends in its stateless_reset_token transport parameter
// (RFC 9000, Section 10.3); a zero-length ID's token is meaningless.
func (s *localConnIDs) initialResetToken() wire.StatelessResetToken { return s.initialToken }

// issuePreferredAddress issues the connection ID with sequence number 1,
// for a server's preferred_address transport parameter: "If the
// preferred_address transport parameter is sent, the sequence number of the
// supplied connection ID is 1." (RFC 9000, Section 5.1.1). routed is as
// for init. It must be called before setPeerLimit, and is an error with
// zero-length IDs: "A server that chooses a zero-length connection ID MUST
// NOT provide a preferred address" (RFC 9000, Section 18.2).
func (s *localConnIDs) issuePreferredAddress(routed ConnectionID) (ConnectionID, wire.StatelessResetToken, error) {
	if s.zeroLen {
		return ConnectionID{}, wire.StatelessResetToken{}, errors.New("quic: no preferred address with zero-length connection IDs")
	}
	if s.nextSeq != 1 {
		return ConnectionID{}, wire.StatelessResetToken{}, errors.New("quic: preferred address connection ID issued too late")
	}
	cid, token, err := s.generateOrUse(routed, 1)
	if err != nil {
		return ConnectionID{}, wire.StatelessResetToken{}, err
	}
	s.ids = append(s.ids, connIDLocalEntry{seq: 1, cid: cid, token: token, state: connIDLocalAcked, sent: true})
	s.nextSeq, s.highestSent = 2, 1
	return cid, token, nil
}

// setPeerLimit records the peer's active_connection_id_limit transport
// parameter and issues IDs up to it (and this endpoint's own maximum). "If
// an endpoint issues a zero-length connection ID, it will never send a
// NEW_CONNECTION_ID frame and therefore ignores the
// active_connection_id_limit value received from its peer." (RFC 9000,
// Section 18.2). Transport parameter validation has checked that the limit
// is at least 2.
func (s *localConnIDs) setPeerLimit(limit uint64) error {
	if s.zeroLen {
		return nil
	}
	s.peerLimit = max(limit, 1)
	// Room for the IDs issue is about to add, in one allocation.
	s.ids = slices.Grow(s.ids, int(min(s.peerLimit, s.maxActive)))
	return s.issue()
}

// issue issues IDs until the peer holds as many with a sequence number at or
// above Retire Prior To as both limits allow.
func (s *localConnIDs) issue() error {
	if s.zeroLen || s.peerLimit == 0 || len(s.retired) >= connIDRetiredMax {
		return nil
	}
	want := min(s.peerLimit, s.maxActive)
	var n uint64
	for i := range s.ids {
		if s.ids[i].seq >= s.rpt {
			n++
		}
	}
	// Sequence numbers are varints; 2^62 of them never run out in practice.
	for ; n < want && s.nextSeq <= wire.MaxVarint; n++ {
		cid, token, err := s.generate()
		if err != nil {
			return err
		}
		// "The sequence number on each newly issued connection ID MUST
		// increase by 1." (RFC 9000, Section 5.1.1)
		s.ids = append(s.ids, connIDLocalEntry{seq: s.nextSeq, cid: cid, token: token, state: connIDLocalUnrouted})
		s.queue(connIDEvent{seq: s.nextSeq, cid: cid, token: token})
		s.nextSeq++
	}
	return nil
}

// generateOrUse returns routed, an ID the endpoint routes already, with its
// token, or else generates the ID of sequence number seq and queues its
// issue event.
func (s *localConnIDs) generateOrUse(routed ConnectionID, seq uint64) (ConnectionID, wire.StatelessResetToken, error) {
	if routed.Len() > 0 {
		if routed.Len() != s.gen.ConnectionIDLen() {
			return ConnectionID{}, wire.StatelessResetToken{}, fmt.Errorf("quic: routed connection ID of %d bytes, want %d", routed.Len(), s.gen.ConnectionIDLen())
		}
		return routed, s.token(routed), nil
	}
	cid, token, err := s.generate()
	if err == nil && cid.Len() > 0 {
		s.queue(connIDEvent{seq: seq, cid: cid, token: token})
	}
	return cid, token, err
}

// generate returns a new connection ID that this connection does not hold,
// with its stateless reset token. "the same connection ID MUST NOT be
// issued more than once on the same connection" (RFC 9000, Section 5.1):
// IDs this connection holds or its peer retired are refused and another is
// generated; IDs the endpoint routes elsewhere are refused by its answer
// (onRouted).
func (s *localConnIDs) generate() (ConnectionID, wire.StatelessResetToken, error) {
	for range connIDGenerateAttempts {
		cid, err := s.gen.GenerateConnectionID()
		if err != nil {
			return ConnectionID{}, wire.StatelessResetToken{}, fmt.Errorf("quic: generating a connection ID: %w", err)
		}
		if cid.Len() != s.gen.ConnectionIDLen() {
			return ConnectionID{}, wire.StatelessResetToken{}, fmt.Errorf("quic: connection ID generator returned %d bytes, want %d", cid.Len(), s.gen.ConnectionIDLen())
		}
		if cid.Len() == 0 {
			return cid, s.token(cid), nil
		}
		if s.find(cid) >= 0 || s.wasRetired(cid) {
			continue
		}
		return cid, s.token(cid), nil
	}
	return ConnectionID{}, wire.StatelessResetToken{}, errors.New("quic: connection ID generator keeps returning IDs in use")
}

// token returns the stateless reset token for cid: "A stateless reset token
// is specific to a connection ID." (RFC 9000, Section 10.3).
func (s *localConnIDs) token(cid ConnectionID) wire.StatelessResetToken {
	if s.resetter != nil {
		return s.resetter.Token(cid)
	}
	var t wire.StatelessResetToken
	rand.Read(t[:])
	return t
}

// wasRetired reports whether the peer retired cid (or an ID of the same
// hash) on this connection.
func (s *localConnIDs) wasRetired(cid ConnectionID) bool {
	return slices.Contains(s.retired, maphash.Bytes(connIDRetiredSeed, cid.Bytes()))
}

// find returns the index in ids of cid, or -1.
func (s *localConnIDs) find(cid ConnectionID) int {
	for i := range s.ids {
		if s.ids[i].cid == cid {
			return i
		}
	}
	return -1
}

// findSeq returns the index in ids of sequence number seq, or -1.
func (s *localConnIDs) findSeq(seq uint64) int {
	for i := range s.ids {
		if s.ids[i].seq == seq {
			return i
		}
	}
	return -1
}

// onRetire handles a RETIRE_CONNECTION_ID frame for sequence number seq that
// arrived in a packet whose Destination Connection ID was arrivedOn. The
// retired ID is removed from routing (a retire event) and, if it counted
// toward the peer's limit, replaced: "An endpoint SHOULD supply a new
// connection ID when the peer retires a connection ID." (RFC 9000,
// Section 5.1.1). Retiring an ID already retired is ignored. Errors are
// *wire.TransportError values for protocol violations, or local failures
// of the generator.
func (s *localConnIDs) onRetire(seq uint64, arrivedOn ConnectionID) error {
	const ft = wire.FrameTypeRetireConnectionID
	// "An endpoint that provides a zero-length connection ID MUST treat
	// receipt of a RETIRE_CONNECTION_ID frame as a connection error of type
	// PROTOCOL_VIOLATION." (RFC 9000, Section 19.16)
	if s.zeroLen {
		return connIDError(wire.ProtocolViolation, ft, "retiring a zero-length connection ID")
	}
	// "Receipt of a RETIRE_CONNECTION_ID frame containing a sequence number
	// greater than any previously sent to the peer MUST be treated as a
	// connection error of type PROTOCOL_VIOLATION." (RFC 9000,
	// Section 19.16)
	if seq > s.highestSent {
		return connIDError(wire.ProtocolViolation, ft, "retiring a connection ID never sent")
	}
	i := s.findSeq(seq)
	if i < 0 {
		return nil // retired already
	}
	// "The sequence number specified in a RETIRE_CONNECTION_ID frame MUST
	// NOT refer to the Destination Connection ID field of the packet in
	// which the frame is contained. The peer MAY treat this as a connection
	// error of type PROTOCOL_VIOLATION." (RFC 9000, Section 19.16)
	if s.ids[i].cid == arrivedOn {
		return connIDError(wire.ProtocolViolation, ft, "retiring the connection ID the packet was sent to")
	}
	cid := s.ids[i].cid
	s.ids = append(s.ids[:i], s.ids[i+1:]...)
	if len(s.retired) < connIDRetiredMax { // beyond, nothing is issued
		s.retired = append(s.retired, maphash.Bytes(connIDRetiredSeed, cid.Bytes()))
	}
	s.queue(connIDEvent{retire: true, seq: seq, cid: cid})
	return s.issue()
}

// retirePriorTo asks the peer to retire every connection ID with a sequence
// number below seq, for example to rotate all IDs (seq = nextSeq), and
// issues replacements with the new Retire Prior To value: "An endpoint might
// need to stop accepting previously issued connection IDs in certain
// circumstances. Such an endpoint can cause its peer to retire connection
// IDs by sending a NEW_CONNECTION_ID frame with an increased Retire Prior To
// field. The endpoint SHOULD continue to accept the previously issued
// connection IDs until they are retired by the peer." (RFC 9000,
// Section 5.1.2): they stay routed until the peer's RETIRE_CONNECTION_ID
// frames arrive. IDs below seq whose frames were never sent are dropped at
// once, since the peer cannot know them.
//
// It reports false, changing nothing, if seq does not raise the current
// value, exceeds nextSeq, the peer's limit is not known yet (no frame could
// carry the value), IDs are zero-length, or the previous request is not
// complete: "Endpoints SHOULD NOT issue updates of the Retire Prior To field
// before receiving RETIRE_CONNECTION_ID frames that retire all connection
// IDs indicated by the previous Retire Prior To value." (RFC 9000,
// Section 5.1.2).
func (s *localConnIDs) retirePriorTo(seq uint64) (bool, error) {
	if s.zeroLen || s.peerLimit == 0 || seq <= s.rpt || seq > s.nextSeq {
		return false, nil
	}
	if len(s.ids) > 0 && s.ids[0].seq < s.rpt {
		return false, nil
	}
	s.rpt = seq
	j := 0
	for _, e := range s.ids {
		if e.seq < seq && !e.sent {
			s.queue(connIDEvent{retire: true, seq: e.seq, cid: e.cid})
			continue
		}
		s.ids[j] = e
		j++
	}
	clear(s.ids[j:])
	s.ids = s.ids[:j]
	return true, s.issue()
}

// nextFrame returns the NEW_CONNECTION_ID frame to send next, lowest
// sequence number first, and whether there is one; it changes no entry. The
// caller that puts the frame in a packet calls frameSent with its sequence
// number. A frame sent again after a loss has the same content: "New
// connection IDs are sent in NEW_CONNECTION_ID frames and retransmitted if
// the packet containing them is lost (Section 19.15). Retransmissions of
// this frame carry the same sequence number value." (RFC 9000,
// Section 13.3). Its Retire Prior To is the value when it was first sent.
func (s *localConnIDs) nextFrame() (wire.NewConnectionIDFrame, bool) {
	if !s.mayPend {
		return wire.NewConnectionIDFrame{}, false
	}
	for i := range s.ids {
		e := &s.ids[i]
		if e.state != connIDLocalPending {
			continue
		}
		rpt := e.rpt
		if !e.sent {
			rpt = s.rpt // at most e.seq: retirePriorTo drops unsent IDs below it
		}
		return wire.NewConnectionIDFrame{
			SequenceNumber:      e.seq,
			RetirePriorTo:       rpt,
			ConnectionID:        e.cid,
			StatelessResetToken: e.token,
		}, true
	}
	s.mayPend = false
	return wire.NewConnectionIDFrame{}, false
}

// hasFrames reports whether a NEW_CONNECTION_ID frame is waiting to be sent.
func (s *localConnIDs) hasFrames() bool {
	_, ok := s.nextFrame()
	return ok
}

// frameSent records that the frame nextFrame returned for seq was put in a
// packet. The connection records seq with the packet (ackhandler.FrameRecord
// Extra) and reports its fate with onFrameAcked or onFrameLost.
func (s *localConnIDs) frameSent(seq uint64) {
	i := s.findSeq(seq)
	if i < 0 || s.ids[i].state != connIDLocalPending {
		return
	}
	e := &s.ids[i]
	if !e.sent {
		e.rpt, e.sent = s.rpt, true
	}
	e.state = connIDLocalInFlight
	s.highestSent = max(s.highestSent, seq)
}

// appendFrames appends pending NEW_CONNECTION_ID frames to b while
// len(b) stays within limit, marks them sent, and appends their sequence
// numbers to sent. It does not allocate if b and sent have room.
func (s *localConnIDs) appendFrames(b []byte, limit int, sent []uint64) ([]byte, []uint64) {
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

// onFrameAcked records the acknowledgment of a NEW_CONNECTION_ID frame for
// seq: the peer has the ID and it is not sent again.
func (s *localConnIDs) onFrameAcked(seq uint64) {
	if i := s.findSeq(seq); i >= 0 {
		s.ids[i].state = connIDLocalAcked
	}
}

// onFrameLost records the loss of a NEW_CONNECTION_ID frame for seq: it is
// sent again unless the peer retired the ID meanwhile or another copy was
// acknowledged.
func (s *localConnIDs) onFrameLost(seq uint64) {
	if i := s.findSeq(seq); i >= 0 && s.ids[i].state == connIDLocalInFlight {
		s.ids[i].state = connIDLocalPending
		s.mayPend = true
	}
}

// activeCount returns the number of issued IDs the peer has not retired,
// including those below Retire Prior To.
func (s *localConnIDs) activeCount() int { return len(s.ids) }

// removeAll removes every issued ID from routing (retire events) and stops
// issuing, for when the connection is gone.
func (s *localConnIDs) removeAll() {
	for _, e := range s.ids {
		if e.cid.Len() > 0 {
			s.queue(connIDEvent{retire: true, seq: e.seq, cid: e.cid})
		}
	}
	clear(s.ids)
	s.ids = s.ids[:0]
	s.peerLimit = 0
}

// queue adds ev to the events for the endpoint.
func (s *localConnIDs) queue(ev connIDEvent) { s.events = append(s.events, ev) }

// pollEvent returns the next routing change for the endpoint, in the order
// they happened, and whether there is one. The driver hands each to the
// endpoint and an issue event's answer to onRouted.
func (s *localConnIDs) pollEvent() (connIDEvent, bool) {
	if s.evHead == len(s.events) {
		if s.evHead > 0 {
			clear(s.events)
			s.events, s.evHead = s.events[:0], 0
		}
		return connIDEvent{}, false
	}
	ev := s.events[s.evHead]
	s.evHead++
	return ev, true
}

// eventsPending reports whether pollEvent has events to return.
func (s *localConnIDs) eventsPending() bool { return s.evHead < len(s.events) }

// onRouted takes the endpoint's answer to the issue event of cid with
// sequence number seq: routed, the ID's NEW_CONNECTION_ID frame may be
// sent; not routed (another connection has it), another ID is generated
// for seq and its issue event queued. It is an error when the ID is one of
// the handshake's (sequence number 0 or 1, in the transport parameters
// already) or the generator keeps making IDs in use. An answer for an ID
// retired meanwhile is ignored.
func (s *localConnIDs) onRouted(seq uint64, cid ConnectionID, routed bool) error {
	i := s.findSeq(seq)
	if i < 0 || s.ids[i].cid != cid {
		return nil
	}
	e := &s.ids[i]
	if e.state != connIDLocalUnrouted {
		if routed {
			return nil
		}
		return errors.New("quic: the handshake connection ID is in use by another connection")
	}
	if routed {
		e.state = connIDLocalPending
		s.mayPend = true
		return nil
	}
	e.tries++
	if e.tries >= connIDGenerateAttempts {
		return errors.New("quic: connection ID generator keeps returning IDs in use")
	}
	ncid, token, err := s.generate()
	if err != nil {
		return err
	}
	e.cid, e.token = ncid, token
	s.queue(connIDEvent{seq: seq, cid: ncid, token: token})
	return nil
}

// connIDError returns a connection error for a frame of type ft.
func connIDError(code wire.TransportErrorCode, ft wire.FrameType, reason string) error {
	return &wire.TransportError{Code: code, FrameType: ft, Reason: reason}
}
