package quic

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// connIDTestGen generates n-byte IDs holding a counter, so tests can predict
// them. repeat makes it return the same ID every time; err makes it fail.
type connIDTestGen struct {
	n      int
	next   uint64
	repeat bool
	err    error
}

func (g *connIDTestGen) ConnectionIDLen() int { return g.n }

func (g *connIDTestGen) GenerateConnectionID() (ConnectionID, error) {
	if g.err != nil {
		return ConnectionID{}, g.err
	}
	var b [20]byte
	binary.BigEndian.PutUint64(b[:8], 0xc1d0000000000000+g.next)
	if !g.repeat {
		g.next++
	}
	return wire.NewConnectionID(b[:g.n]), nil
}

// connIDTestRoutes is a routing table for one connection. IDs in refuse are
// reported as in use by another connection.
type connIDTestRoutes struct {
	routed  map[ConnectionID]wire.StatelessResetToken
	removed []ConnectionID
	refuse  map[ConnectionID]bool
}

func newConnIDTestRoutes() *connIDTestRoutes {
	return &connIDTestRoutes{routed: map[ConnectionID]wire.StatelessResetToken{}, refuse: map[ConnectionID]bool{}}
}

func (r *connIDTestRoutes) addConnID(cid ConnectionID, token wire.StatelessResetToken) bool {
	if r.refuse[cid] {
		return false
	}
	if _, ok := r.routed[cid]; ok {
		return false
	}
	r.routed[cid] = token
	return true
}

func (r *connIDTestRoutes) removeConnID(cid ConnectionID) {
	if _, ok := r.routed[cid]; !ok {
		panic("removing a connection ID that is not routed: " + cid.String())
	}
	delete(r.routed, cid)
	r.removed = append(r.removed, cid)
}

// testLocalIDs is localConnIDs driven as Conn.routeConnIDs drives it:
// after each call that can issue or retire IDs, its events go to routes at
// once and routes' answers back (sync).
type testLocalIDs struct {
	*localConnIDs
	r *connIDTestRoutes
}

// init is localConnIDs.init with routes as the endpoint; the connection
// generates its handshake ID.
func (s *testLocalIDs) init(gen ConnectionIDGenerator, resetter *handshake.StatelessResetter, routes *connIDTestRoutes, maxActive int) error {
	s.localConnIDs, s.r = new(localConnIDs), routes
	if err := s.localConnIDs.init(gen, resetter, ConnectionID{}, maxActive); err != nil {
		return err
	}
	return s.sync()
}

// sync hands the queued events to routes and its answers back.
func (s *testLocalIDs) sync() error {
	for {
		ev, ok := s.pollEvent()
		if !ok {
			return nil
		}
		if ev.retire {
			s.r.removeConnID(ev.cid)
			continue
		}
		if err := s.onRouted(ev.seq, ev.cid, s.r.addConnID(ev.cid, ev.token)); err != nil {
			return err
		}
	}
}

func (s *testLocalIDs) setPeerLimit(limit uint64) error {
	if err := s.localConnIDs.setPeerLimit(limit); err != nil {
		return err
	}
	return s.sync()
}

func (s *testLocalIDs) onRetire(seq uint64, arrivedOn ConnectionID) error {
	if err := s.localConnIDs.onRetire(seq, arrivedOn); err != nil {
		return err
	}
	return s.sync()
}

func (s *testLocalIDs) retirePriorTo(seq uint64) (bool, error) {
	ok, err := s.localConnIDs.retirePriorTo(seq)
	if err != nil {
		return ok, err
	}
	return ok, s.sync()
}

func (s *testLocalIDs) removeAll() {
	s.localConnIDs.removeAll()
	if err := s.sync(); err != nil {
		panic(err)
	}
}

func (s *testLocalIDs) issuePreferredAddress() (ConnectionID, wire.StatelessResetToken, error) {
	cid, token, err := s.localConnIDs.issuePreferredAddress(ConnectionID{})
	if err != nil {
		return cid, token, err
	}
	return cid, token, s.sync()
}

func connIDTestResetter(t testing.TB) *handshake.StatelessResetter {
	t.Helper()
	r, err := handshake.NewStatelessResetter([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newTestLocalConnIDs returns localConnIDs with 8-byte counter IDs.
func newTestLocalConnIDs(t testing.TB, maxActive int) (*testLocalIDs, *connIDTestRoutes, *connIDTestGen) {
	t.Helper()
	var s testLocalIDs
	routes := newConnIDTestRoutes()
	gen := &connIDTestGen{n: 8}
	if err := s.init(gen, connIDTestResetter(t), routes, maxActive); err != nil {
		t.Fatal(err)
	}
	return &s, routes, gen
}

// connIDTestCode returns the transport error code of err, or fails.
func connIDTestCode(t testing.TB, err error) wire.TransportErrorCode {
	t.Helper()
	var te *wire.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a *wire.TransportError", err)
	}
	return te.Code
}

// sendAll marks every pending NEW_CONNECTION_ID frame sent and returns them.
func (s *localConnIDs) testSendAll() []wire.NewConnectionIDFrame {
	var fs []wire.NewConnectionIDFrame
	for {
		f, ok := s.nextFrame()
		if !ok {
			return fs
		}
		s.frameSent(f.SequenceNumber)
		fs = append(fs, f)
	}
}

func TestLocalConnIDsInitial(t *testing.T) {
	s, routes, _ := newTestLocalConnIDs(t, 0)
	// "The sequence number of the initial connection ID is 0."
	// (RFC 9000, Section 5.1.1)
	if s.activeCount() != 1 || s.ids[0].seq != 0 {
		t.Fatalf("ids = %+v, want only sequence number 0", s.ids)
	}
	cid := s.initial()
	if cid.Len() != 8 {
		t.Fatalf("initial ID %v, want 8 bytes", cid)
	}
	// "When an endpoint issues a connection ID, it MUST accept packets that
	// carry this connection ID" (RFC 9000, Section 5.1.1): it is routed.
	tok, ok := routes.routed[cid]
	if !ok || len(routes.routed) != 1 {
		t.Fatalf("routed = %v, want just %v", routes.routed, cid)
	}
	// RFC 9000, Section 10.3.2: tokens from a static key and the ID.
	want := connIDTestResetter(t).Token(cid)
	if tok != want || s.initialResetToken() != want {
		t.Errorf("token %x / %x, want %x", tok, s.initialResetToken(), want)
	}
	// Nothing more is issued before the peer's limit is known.
	if s.hasFrames() {
		t.Error("frames to send before setPeerLimit")
	}
}

func TestLocalConnIDsIssueUpToPeerLimit(t *testing.T) {
	// "An endpoint SHOULD ensure that its peer has a sufficient number of
	// available and unused connection IDs. ... An endpoint MUST NOT provide
	// more connection IDs than the peer's limit." (RFC 9000, Section 5.1.1)
	// The limit "includes the connection ID received during the handshake,
	// that received in the preferred_address transport parameter, and those
	// received in NEW_CONNECTION_ID frames" (RFC 9000, Section 18.2).
	for _, tc := range []struct {
		name      string
		maxActive int
		peerLimit uint64
		preferred bool
		wantNew   int
	}{
		{"default limit 2", 0, 2, false, 1},
		{"limit 2 with preferred address", 0, 2, true, 0},
		{"limit 3 with preferred address", 0, 3, true, 1},
		{"limit 5", 0, 5, false, 4},
		{"our cap 8", 0, 1000, false, 7},
		{"our cap 3", 3, 1000, false, 2},
		{"huge limit", 4, 1 << 62, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, routes, _ := newTestLocalConnIDs(t, tc.maxActive)
			first := uint64(1)
			if tc.preferred {
				if _, _, err := s.issuePreferredAddress(); err != nil {
					t.Fatal(err)
				}
				first = 2
			}
			if err := s.setPeerLimit(tc.peerLimit); err != nil {
				t.Fatal(err)
			}
			fs := s.testSendAll()
			if len(fs) != tc.wantNew {
				t.Fatalf("%d NEW_CONNECTION_ID frames, want %d", len(fs), tc.wantNew)
			}
			for i, f := range fs {
				// "The sequence number on each newly issued connection ID
				// MUST increase by 1." (RFC 9000, Section 5.1.1)
				if f.SequenceNumber != first+uint64(i) || f.RetirePriorTo != 0 {
					t.Errorf("frame %d: seq %d rpt %d, want seq %d rpt 0", i, f.SequenceNumber, f.RetirePriorTo, first+uint64(i))
				}
				if routes.routed[f.ConnectionID] != f.StatelessResetToken {
					t.Errorf("frame %d: ID %v not routed with its token", i, f.ConnectionID)
				}
				if f.StatelessResetToken != connIDTestResetter(t).Token(f.ConnectionID) {
					t.Errorf("frame %d: token not derived from the key", i)
				}
			}
			if got := uint64(s.activeCount()); got > tc.peerLimit {
				t.Errorf("%d active IDs, more than the peer's limit %d", got, tc.peerLimit)
			}
			if s.hasFrames() {
				t.Error("frames left after sending all")
			}
		})
	}
}

func TestLocalConnIDsRetireAndReplace(t *testing.T) {
	s, routes, _ := newTestLocalConnIDs(t, 0)
	s.setPeerLimit(3)
	fs := s.testSendAll() // seqs 1, 2
	if len(fs) != 2 {
		t.Fatalf("%d frames, want 2", len(fs))
	}
	initial := s.initial()
	// The peer retires seq 0 in a packet sent to seq 1.
	if err := s.onRetire(0, fs[0].ConnectionID); err != nil {
		t.Fatal(err)
	}
	// "Retiring a connection ID invalidates the stateless reset token
	// associated with that connection ID." (RFC 9000, Section 19.16); the
	// Transport is told to stop routing it.
	if len(routes.removed) != 1 || routes.removed[0] != initial {
		t.Fatalf("removed %v, want [%v]", routes.removed, initial)
	}
	// "An endpoint SHOULD supply a new connection ID when the peer retires
	// a connection ID." (RFC 9000, Section 5.1.1)
	f, ok := s.nextFrame()
	if !ok || f.SequenceNumber != 3 {
		t.Fatalf("next frame %+v %v, want sequence number 3", f, ok)
	}
	if s.activeCount() != 3 {
		t.Errorf("%d active, want 3", s.activeCount())
	}
	// The handshake ID stays available for long headers.
	if s.initial() != initial {
		t.Error("initial() changed")
	}
	// Retiring again is not an error and changes nothing.
	if err := s.onRetire(0, fs[0].ConnectionID); err != nil {
		t.Fatal(err)
	}
	if len(routes.removed) != 1 || s.activeCount() != 3 {
		t.Errorf("duplicate retirement changed state")
	}
}

func TestLocalConnIDsRetireErrors(t *testing.T) {
	t.Run("never sent", func(t *testing.T) {
		s, _, _ := newTestLocalConnIDs(t, 0)
		s.setPeerLimit(4) // seqs 1..3 issued, none sent yet
		// "Receipt of a RETIRE_CONNECTION_ID frame containing a sequence
		// number greater than any previously sent to the peer MUST be
		// treated as a connection error of type PROTOCOL_VIOLATION."
		// (RFC 9000, Section 19.16)
		if code := connIDTestCode(t, s.onRetire(1, ConnectionID{})); code != wire.ProtocolViolation {
			t.Errorf("retiring an unsent ID: %v, want PROTOCOL_VIOLATION", code)
		}
		f, _ := s.nextFrame()
		s.frameSent(f.SequenceNumber)
		if err := s.onRetire(1, s.initial()); err != nil {
			t.Errorf("retiring a sent ID: %v", err)
		}
		if code := connIDTestCode(t, s.onRetire(1<<40, ConnectionID{})); code != wire.ProtocolViolation {
			t.Errorf("retiring seq 2^40: %v, want PROTOCOL_VIOLATION", code)
		}
	})
	t.Run("own destination", func(t *testing.T) {
		s, routes, _ := newTestLocalConnIDs(t, 0)
		s.setPeerLimit(2)
		s.testSendAll()
		// "The sequence number specified in a RETIRE_CONNECTION_ID frame
		// MUST NOT refer to the Destination Connection ID field of the
		// packet in which the frame is contained. The peer MAY treat this as
		// a connection error of type PROTOCOL_VIOLATION." (RFC 9000,
		// Section 19.16)
		err := s.onRetire(0, s.initial())
		if code := connIDTestCode(t, err); code != wire.ProtocolViolation {
			t.Errorf("got %v, want PROTOCOL_VIOLATION", code)
		}
		if !errors.Is(err, &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeRetireConnectionID}) {
			t.Errorf("error %v does not name the RETIRE_CONNECTION_ID frame", err)
		}
		if len(routes.removed) != 0 || s.activeCount() != 2 {
			t.Error("state changed on error")
		}
	})
	t.Run("zero length", func(t *testing.T) {
		var s testLocalIDs
		if err := s.init(&connIDTestGen{n: 0}, nil, newConnIDTestRoutes(), 0); err != nil {
			t.Fatal(err)
		}
		// "An endpoint that provides a zero-length connection ID MUST treat
		// receipt of a RETIRE_CONNECTION_ID frame as a connection error of
		// type PROTOCOL_VIOLATION." (RFC 9000, Section 19.16)
		if code := connIDTestCode(t, s.onRetire(0, ConnectionID{})); code != wire.ProtocolViolation {
			t.Errorf("got %v, want PROTOCOL_VIOLATION", code)
		}
	})
}

func TestLocalConnIDsZeroLength(t *testing.T) {
	var s testLocalIDs
	routes := newConnIDTestRoutes()
	if err := s.init(NewRandomConnectionIDGenerator(0), nil, routes, 0); err != nil {
		t.Fatal(err)
	}
	if s.initial().Len() != 0 || len(routes.routed) != 0 {
		t.Fatalf("initial %v, routed %v: want an empty, unrouted ID", s.initial(), routes.routed)
	}
	// "An endpoint that selects a zero-length connection ID during the
	// handshake cannot issue a new connection ID." (RFC 9000,
	// Section 5.1.1); "If an endpoint issues a zero-length connection ID,
	// it will never send a NEW_CONNECTION_ID frame and therefore ignores
	// the active_connection_id_limit value received from its peer."
	// (RFC 9000, Section 18.2)
	if err := s.setPeerLimit(8); err != nil {
		t.Fatal(err)
	}
	if s.hasFrames() {
		t.Error("NEW_CONNECTION_ID frames with zero-length IDs")
	}
	// "A server that chooses a zero-length connection ID MUST NOT provide a
	// preferred address." (RFC 9000, Section 18.2)
	if _, _, err := s.issuePreferredAddress(); err == nil {
		t.Error("preferred address issued with zero-length IDs")
	}
	if ok, _ := s.retirePriorTo(1); ok {
		t.Error("retirePriorTo accepted with zero-length IDs")
	}
}

func TestLocalConnIDsPreferredAddress(t *testing.T) {
	s, routes, _ := newTestLocalConnIDs(t, 0)
	// "If the preferred_address transport parameter is sent, the sequence
	// number of the supplied connection ID is 1." (RFC 9000, Section 5.1.1)
	cid, token, err := s.issuePreferredAddress()
	if err != nil {
		t.Fatal(err)
	}
	if i := s.findSeq(1); i < 0 || s.ids[i].cid != cid || routes.routed[cid] != token {
		t.Fatalf("preferred address ID %v not issued as seq 1 and routed", cid)
	}
	if _, _, err := s.issuePreferredAddress(); err == nil {
		t.Error("second preferred address ID issued")
	}
	// It was sent in the transport parameters, so the peer may retire it.
	if err := s.onRetire(1, s.initial()); err != nil {
		t.Errorf("retiring the preferred address ID: %v", err)
	}
}

func TestLocalConnIDsLossAndAck(t *testing.T) {
	s, _, _ := newTestLocalConnIDs(t, 0)
	s.setPeerLimit(4)
	fs := s.testSendAll() // 1, 2, 3
	// "New connection IDs are sent in NEW_CONNECTION_ID frames and
	// retransmitted if the packet containing them is lost (Section 19.15).
	// Retransmissions of this frame carry the same sequence number value."
	// (RFC 9000, Section 13.3)
	s.onFrameLost(2)
	f, ok := s.nextFrame()
	if !ok || f != fs[1] {
		t.Fatalf("after loss: %+v %v, want %+v", f, ok, fs[1])
	}
	s.frameSent(2)
	// Acknowledged frames are not sent again, even if a copy is lost later.
	s.onFrameAcked(1)
	s.onFrameLost(1)
	if s.hasFrames() {
		t.Error("acknowledged frame requeued")
	}
	// A frame lost after the peer retired the ID is not sent again.
	if err := s.onRetire(3, s.initial()); err != nil {
		t.Fatal(err)
	}
	s.testSendAll() // the replacement, seq 4
	s.onFrameLost(3)
	if s.hasFrames() {
		t.Error("frame of a retired ID requeued")
	}
	// Duplicate and unknown reports are ignored.
	s.onFrameLost(3)
	s.onFrameAcked(99)
	s.onFrameLost(99)
	if s.hasFrames() {
		t.Error("unknown sequence numbers changed state")
	}
	// A frame lost twice is sent again each time.
	s.onFrameLost(4)
	f, _ = s.nextFrame()
	s.frameSent(f.SequenceNumber)
	s.onFrameLost(4)
	if f2, ok := s.nextFrame(); !ok || f2 != f {
		t.Errorf("second retransmission %+v, want %+v", f2, f)
	}
}

func TestLocalConnIDsRetirePriorTo(t *testing.T) {
	s, routes, _ := newTestLocalConnIDs(t, 0)
	s.setPeerLimit(3)
	old := s.testSendAll() // 1, 2
	for _, f := range old {
		s.onFrameAcked(f.SequenceNumber)
	}
	// Rotate every ID: "An endpoint might need to stop accepting
	// previously issued connection IDs in certain circumstances. Such an
	// endpoint can cause its peer to retire connection IDs by sending a
	// NEW_CONNECTION_ID frame with an increased Retire Prior To field."
	// (RFC 9000, Section 5.1.2)
	ok, err := s.retirePriorTo(s.nextSeq)
	if !ok || err != nil {
		t.Fatalf("retirePriorTo = %v, %v", ok, err)
	}
	fs := s.testSendAll()
	// "An endpoint MAY send connection IDs that temporarily exceed a peer's
	// limit if the NEW_CONNECTION_ID frame also requires the retirement of
	// any excess, by including a sufficiently large value in the Retire
	// Prior To field." (RFC 9000, Section 5.1.1)
	if len(fs) != 3 {
		t.Fatalf("%d new IDs after rotation, want 3", len(fs))
	}
	for _, f := range fs {
		if f.RetirePriorTo != 3 {
			t.Errorf("seq %d carries Retire Prior To %d, want 3", f.SequenceNumber, f.RetirePriorTo)
		}
	}
	// "The endpoint SHOULD continue to accept the previously issued
	// connection IDs until they are retired by the peer." (RFC 9000,
	// Section 5.1.2)
	if len(routes.routed) != 6 || len(routes.removed) != 0 {
		t.Fatalf("routed %d, removed %d: want the old IDs still routed", len(routes.routed), len(routes.removed))
	}
	// "Endpoints SHOULD NOT issue updates of the Retire Prior To field
	// before receiving RETIRE_CONNECTION_ID frames that retire all
	// connection IDs indicated by the previous Retire Prior To value."
	// (RFC 9000, Section 5.1.2)
	if ok, _ := s.retirePriorTo(s.nextSeq); ok {
		t.Fatal("second rotation accepted before the first completed")
	}
	// Retiring IDs below Retire Prior To brings no replacement: they did
	// not count toward the limit.
	for seq := range uint64(3) {
		if err := s.onRetire(seq, fs[0].ConnectionID); err != nil {
			t.Fatal(err)
		}
	}
	if s.hasFrames() || s.activeCount() != 3 || len(routes.removed) != 3 {
		t.Fatalf("after retirement: frames %v, active %d, removed %d", s.hasFrames(), s.activeCount(), len(routes.removed))
	}
	if ok, _ := s.retirePriorTo(s.nextSeq); !ok {
		t.Error("rotation refused after the previous one completed")
	}
	// Values that do not increase, or name IDs never issued, are refused.
	if ok, _ := s.retirePriorTo(s.rpt); ok {
		t.Error("same Retire Prior To accepted")
	}
	if ok, _ := s.retirePriorTo(s.nextSeq + 1); ok {
		t.Error("Retire Prior To above the next sequence number accepted")
	}
}

func TestLocalConnIDsRetirePriorToBeforePeerLimit(t *testing.T) {
	s, _, _ := newTestLocalConnIDs(t, 0)
	// No frame could carry it yet.
	if ok, _ := s.retirePriorTo(1); ok {
		t.Error("retirePriorTo accepted before the peer's limit is known")
	}
}

func TestLocalConnIDsRetirePriorToDropsUnsent(t *testing.T) {
	s, routes, _ := newTestLocalConnIDs(t, 0)
	s.setPeerLimit(3)
	f1, _ := s.nextFrame()
	s.frameSent(f1.SequenceNumber) // seq 1 sent, seq 2 not yet
	if ok, err := s.retirePriorTo(3); !ok || err != nil {
		t.Fatalf("retirePriorTo = %v, %v", ok, err)
	}
	// Seq 2 never reached the peer: it is dropped and unrouted at once.
	if s.findSeq(2) >= 0 {
		t.Error("unsent ID below Retire Prior To kept")
	}
	if len(routes.removed) != 1 {
		t.Errorf("removed %v, want the unsent ID", routes.removed)
	}
	// Seq 1 was sent; if lost, it goes again with its original content,
	// which the peer answers by retiring it (RFC 9000, Section 19.15).
	s.onFrameLost(1)
	f, ok := s.nextFrame()
	if !ok || f != f1 {
		t.Errorf("retransmission %+v, want %+v", f, f1)
	}
	s.frameSent(1)
	// Then the new ones, carrying the new Retire Prior To.
	for _, f := range s.testSendAll() {
		if f.SequenceNumber < 3 || f.RetirePriorTo != 3 {
			t.Errorf("frame seq %d rpt %d, want seq >= 3 and rpt 3", f.SequenceNumber, f.RetirePriorTo)
		}
	}
}

func TestLocalConnIDsGeneratorFailures(t *testing.T) {
	t.Run("collision with another connection", func(t *testing.T) {
		var s testLocalIDs
		routes := newConnIDTestRoutes()
		gen := &connIDTestGen{n: 8}
		if err := s.init(gen, nil, routes, 0); err != nil {
			t.Fatal(err)
		}
		// The next two IDs the generator makes route elsewhere already:
		// the endpoint refuses them and the connection picks others.
		next := gen.next
		for range 2 {
			c, _ := gen.GenerateConnectionID()
			routes.refuse[c] = true
		}
		gen.next = next
		if err := s.setPeerLimit(3); err != nil {
			t.Fatal(err)
		}
		fs := s.testSendAll()
		if len(fs) != 2 {
			t.Fatalf("%d frames, want 2", len(fs))
		}
		for _, f := range fs {
			if routes.refuse[f.ConnectionID] {
				t.Errorf("issued %v, in use by another connection", f.ConnectionID)
			}
			if _, ok := routes.routed[f.ConnectionID]; !ok {
				t.Errorf("sent %v before it was routed", f.ConnectionID)
			}
		}
	})
	t.Run("unsendable until routed", func(t *testing.T) {
		// "When an endpoint issues a connection ID, it MUST accept packets
		// that carry this connection ID" (RFC 9000, Section 5.1.1): no
		// frame carries an ID before the endpoint answered its event.
		var s localConnIDs
		if err := s.init(&connIDTestGen{n: 8}, nil, ConnectionID{}, 0); err != nil {
			t.Fatal(err)
		}
		if ev, ok := s.pollEvent(); !ok || ev.retire || ev.seq != 0 || ev.cid != s.initial() {
			t.Fatalf("event %+v %v, want the issue of the handshake ID", ev, ok)
		}
		s.setPeerLimit(2)
		if s.hasFrames() {
			t.Fatal("a NEW_CONNECTION_ID frame before the endpoint routed its ID")
		}
		ev, ok := s.pollEvent()
		if !ok || ev.retire || ev.seq != 1 {
			t.Fatalf("event %+v %v, want the issue of sequence number 1", ev, ok)
		}
		if err := s.onRouted(ev.seq, ev.cid, true); err != nil {
			t.Fatal(err)
		}
		if f, ok := s.nextFrame(); !ok || f.ConnectionID != ev.cid {
			t.Fatalf("frame %+v %v, want one for %v", f, ok, ev.cid)
		}
	})
	t.Run("handshake ID in use", func(t *testing.T) {
		// The handshake ID is in the transport parameters already: a
		// collision cannot be repaired (the endpoint generates it when a
		// Transport drives the connection, endpoint.newConnID).
		var s localConnIDs
		if err := s.init(&connIDTestGen{n: 8}, nil, ConnectionID{}, 0); err != nil {
			t.Fatal(err)
		}
		ev, _ := s.pollEvent()
		if err := s.onRouted(ev.seq, ev.cid, false); err == nil {
			t.Error("a colliding handshake ID was accepted")
		}
	})
	t.Run("always refused", func(t *testing.T) {
		var s testLocalIDs
		routes := newConnIDTestRoutes()
		gen := &connIDTestGen{n: 8}
		if err := s.init(gen, nil, routes, 0); err != nil {
			t.Fatal(err)
		}
		for i := range uint64(connIDGenerateAttempts + 1) {
			routes.refuse[wire.NewConnectionID(binary.BigEndian.AppendUint64(nil, 0xc1d0000000000000+gen.next+i))] = true
		}
		if err := s.setPeerLimit(2); err == nil {
			t.Error("no error when every ID routes elsewhere")
		}
	})
	t.Run("always in use", func(t *testing.T) {
		var s testLocalIDs
		routes := newConnIDTestRoutes()
		gen := &connIDTestGen{n: 8, repeat: true}
		if err := s.init(gen, nil, routes, 0); err != nil {
			t.Fatal(err)
		}
		// "the same connection ID MUST NOT be issued more than once on the
		// same connection" (RFC 9000, Section 5.1)
		if err := s.setPeerLimit(2); err == nil {
			t.Error("issued the same ID twice")
		}
	})
	t.Run("error", func(t *testing.T) {
		var s testLocalIDs
		boom := errors.New("boom")
		err := s.init(&connIDTestGen{n: 8, err: boom}, nil, newConnIDTestRoutes(), 0)
		if !errors.Is(err, boom) {
			t.Errorf("got %v, want it to wrap %v", err, boom)
		}
	})
	t.Run("wrong length", func(t *testing.T) {
		var s testLocalIDs
		gen := &connIDLenLiar{}
		if err := s.init(gen, nil, newConnIDTestRoutes(), 0); err == nil {
			t.Error("accepted an ID of the wrong length")
		}
	})
}

// connIDLenLiar claims 8-byte IDs and makes 4-byte ones.
type connIDLenLiar struct{}

func (connIDLenLiar) ConnectionIDLen() int { return 8 }
func (connIDLenLiar) GenerateConnectionID() (ConnectionID, error) {
	return wire.NewConnectionID([]byte{1, 2, 3, 4}), nil
}

func TestLocalConnIDsRandomTokensWithoutResetter(t *testing.T) {
	var s testLocalIDs
	routes := newConnIDTestRoutes()
	if err := s.init(&connIDTestGen{n: 8}, nil, routes, 0); err != nil {
		t.Fatal(err)
	}
	s.setPeerLimit(2)
	f, _ := s.nextFrame()
	// "The stateless reset token MUST be difficult to guess." (RFC 9000,
	// Section 10.3.2)
	if f.StatelessResetToken == (wire.StatelessResetToken{}) || f.StatelessResetToken == s.initialResetToken() {
		t.Errorf("tokens %x and %x: want random ones", s.initialResetToken(), f.StatelessResetToken)
	}
}

func TestLocalConnIDsRemoveAll(t *testing.T) {
	s, routes, _ := newTestLocalConnIDs(t, 0)
	s.setPeerLimit(4)
	s.testSendAll()
	s.removeAll()
	if len(routes.routed) != 0 || s.activeCount() != 0 || s.hasFrames() {
		t.Errorf("after removeAll: routed %d, active %d, frames %v", len(routes.routed), s.activeCount(), s.hasFrames())
	}
	if err := s.onRetire(1, ConnectionID{}); err != nil {
		t.Errorf("late retirement: %v", err)
	}
	if s.hasFrames() {
		t.Error("issued after removeAll")
	}
}

func TestLocalConnIDsAppendFrames(t *testing.T) {
	s, _, _ := newTestLocalConnIDs(t, 0)
	s.setPeerLimit(4)
	f, _ := s.nextFrame()
	size := f.EncodedLen()
	// Room for two frames and a bit.
	b, sent := s.appendFrames(nil, 2*size+size/2, nil)
	if len(sent) != 2 || len(b) != 2*size {
		t.Fatalf("appended %d bytes, sent %v; want 2 frames", len(b), sent)
	}
	for off, i := 0, 0; off < len(b); i++ {
		g, n, err := wire.ParseNewConnectionIDFrame(b[off:])
		if err != nil || g.SequenceNumber != sent[i] {
			t.Fatalf("frame %d: %+v, %v", i, g, err)
		}
		off += n
	}
	b, sent = s.appendFrames(b[:0], 1000, sent[:0])
	if len(sent) != 1 || sent[0] != 3 {
		t.Errorf("second call sent %v, want [3]", sent)
	}
}

func TestLocalConnIDsAppendFramesAlloc(t *testing.T) {
	s, _, _ := newTestLocalConnIDs(t, 0)
	s.setPeerLimit(8)
	s.testSendAll()
	buf := make([]byte, 0, 1500)
	sent := make([]uint64, 0, 16)
	allocs := testing.AllocsPerRun(100, func() {
		for seq := uint64(1); seq < 8; seq++ {
			s.onFrameLost(seq)
		}
		var b []byte
		b, sent = s.appendFrames(buf, 1500, sent[:0])
		if len(b) == 0 {
			t.Fatal("nothing appended")
		}
	})
	if allocs != 0 && !connIDRaceEnabled {
		t.Errorf("appendFrames allocates %v times, want 0", allocs)
	}
}

func BenchmarkLocalConnIDsRetire(b *testing.B) {
	s, _, _ := newTestLocalConnIDs(b, 0)
	s.setPeerLimit(8)
	buf := make([]byte, 0, 1500)
	sent := make([]uint64, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		buf, sent = s.appendFrames(buf[:0], 1500, sent[:0])
		seq := s.ids[0].seq
		if err := s.onRetire(seq, s.ids[1].cid); err != nil {
			b.Fatal(err)
		}
	}
}
