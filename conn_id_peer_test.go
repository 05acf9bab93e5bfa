package quic

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quicstack/quic/wire"
)

// connIDTestCID returns the 8-byte ID numbered n.
func connIDTestCID(n uint64) ConnectionID {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], 0x9ee0000000000000+n)
	return wire.NewConnectionID(b[:])
}

// connIDTestToken returns the token of the ID numbered n.
func connIDTestToken(n uint64) wire.StatelessResetToken {
	var t wire.StatelessResetToken
	binary.BigEndian.PutUint64(t[:8], 0x7070000000000000+n)
	binary.BigEndian.PutUint64(t[8:], ^n)
	return t
}

// connIDTestNCID returns the NEW_CONNECTION_ID frame for ID number seq.
func connIDTestNCID(seq, rpt uint64) wire.NewConnectionIDFrame {
	return wire.NewConnectionIDFrame{
		SequenceNumber:      seq,
		RetirePriorTo:       rpt,
		ConnectionID:        connIDTestCID(seq),
		StatelessResetToken: connIDTestToken(seq),
	}
}

// newTestPeerConnIDs returns peerConnIDs whose handshake ID is number 0.
func newTestPeerConnIDs(limit uint64) *peerConnIDs {
	var s peerConnIDs
	s.init(connIDTestCID(0), limit)
	return &s
}

// seqs returns the sequence numbers of the active IDs.
func (s *peerConnIDs) testSeqs() []uint64 {
	var q []uint64
	for _, e := range s.ids {
		q = append(q, e.seq)
	}
	return q
}

// testRetiring returns the sequence numbers waiting for retirement.
func (s *peerConnIDs) testRetiring() []uint64 {
	var q []uint64
	for _, r := range s.retiring {
		q = append(q, r.seq)
	}
	return q
}

// testSendAll marks every pending RETIRE_CONNECTION_ID frame sent and
// returns their sequence numbers.
func (s *peerConnIDs) testSendAll() []uint64 {
	var q []uint64
	for {
		f, ok := s.nextFrame()
		if !ok {
			return q
		}
		s.frameSent(f.SequenceNumber)
		q = append(q, f.SequenceNumber)
	}
}

// testCheck verifies the invariants of s.
func (s *peerConnIDs) testCheck(t testing.TB) {
	t.Helper()
	if len(s.ids) == 0 {
		t.Fatal("no active connection ID")
	}
	if uint64(len(s.ids)) > s.limit {
		t.Fatalf("%d active IDs, limit %d", len(s.ids), s.limit)
	}
	if uint64(len(s.retiring)) > s.maxRetiring() {
		t.Fatalf("%d retirements pending, bound %d", len(s.retiring), s.maxRetiring())
	}
	if uint64(len(s.retiredAbove)) > s.limit {
		t.Fatalf("%d retiredAbove, bound %d", len(s.retiredAbove), s.limit)
	}
	found := false
	cids := map[ConnectionID]bool{}
	for i, e := range s.ids {
		if i > 0 && s.ids[i-1].seq >= e.seq {
			t.Fatalf("ids not in ascending order: %v", s.testSeqs())
		}
		if e.seq < s.maxRPT {
			t.Fatalf("active seq %d below Retire Prior To %d", e.seq, s.maxRPT)
		}
		if cids[e.cid] {
			t.Fatalf("connection ID %v active twice", e.cid)
		}
		cids[e.cid] = true
		if e.seq == s.curSeq {
			found = true
			if e.cid != s.cur || !e.used {
				t.Fatalf("current entry %+v does not match cur %v", e, s.cur)
			}
		}
	}
	if !found {
		t.Fatalf("current seq %d is not active (%v)", s.curSeq, s.testSeqs())
	}
	for _, r := range s.retiring {
		if _, ok := s.findSeq(r.seq); ok {
			t.Fatalf("seq %d both active and retiring", r.seq)
		}
		if r.cid == s.cur {
			t.Fatalf("retiring the ID in use %v", s.cur)
		}
	}
	if !slices.IsSorted(s.retiredAbove) {
		t.Fatalf("retiredAbove not sorted: %v", s.retiredAbove)
	}
	for _, q := range s.retiredAbove {
		if q < s.doneBelow {
			t.Fatalf("retiredAbove %d below doneBelow %d", q, s.doneBelow)
		}
	}
	if s.doneBelow < s.maxRPT {
		t.Fatalf("doneBelow %d below maxRPT %d", s.doneBelow, s.maxRPT)
	}
}

// testState is a comparable summary of s, to check that errors change
// nothing.
func (s *peerConnIDs) testState() string {
	var b bytes.Buffer
	for _, e := range s.ids {
		b.WriteString(e.cid.String())
		b.WriteByte(' ')
	}
	b.WriteString("| ")
	for _, r := range s.retiring {
		b.WriteString(r.cid.String())
		b.WriteByte(' ')
	}
	b.WriteString("| " + s.cur.String())
	return b.String() + string(binary.AppendUvarint(nil, s.maxRPT)) + string(binary.AppendUvarint(nil, s.doneBelow))
}

func TestPeerConnIDsInitial(t *testing.T) {
	s := newTestPeerConnIDs(4)
	if s.active() != connIDTestCID(0) || s.activeCount() != 1 {
		t.Fatalf("active %v, count %d", s.active(), s.activeCount())
	}
	// A client learns the server's ID as the handshake goes on: "The
	// connection ID that a client selects for the first Destination
	// Connection ID field it sends and any connection ID provided by a
	// Retry packet are not assigned sequence numbers." (RFC 9000,
	// Section 5.1.1)
	s.setInitial(connIDTestCID(100))
	if s.active() != connIDTestCID(100) {
		t.Errorf("active %v after setInitial", s.active())
	}
	s.testCheck(t)
}

func TestPeerConnIDsNewConnectionID(t *testing.T) {
	s := newTestPeerConnIDs(4)
	for seq := uint64(1); seq <= 3; seq++ {
		if err := s.onNewConnectionID(connIDTestNCID(seq, 0)); err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
	}
	if got := s.testSeqs(); !slices.Equal(got, []uint64{0, 1, 2, 3}) {
		t.Fatalf("active %v", got)
	}
	// New IDs are not used until the connection asks.
	if s.active() != connIDTestCID(0) {
		t.Errorf("active switched to %v", s.active())
	}
	s.testCheck(t)
}

func TestPeerConnIDsDuplicates(t *testing.T) {
	s := newTestPeerConnIDs(4)
	f := connIDTestNCID(1, 0)
	// "Transmission errors, timeouts, and retransmissions might cause the
	// same NEW_CONNECTION_ID frame to be received multiple times. Receipt
	// of the same frame multiple times MUST NOT be treated as a connection
	// error." (RFC 9000, Section 19.15)
	for range 3 {
		if err := s.onNewConnectionID(f); err != nil {
			t.Fatal(err)
		}
	}
	if s.activeCount() != 2 {
		t.Errorf("%d active after duplicates, want 2", s.activeCount())
	}
	// Also a duplicate of an ID being retired, and of one whose
	// retirement was acknowledged.
	if !s.useNext() { // retires 0, uses 1
		t.Fatal("useNext failed")
	}
	if err := s.onNewConnectionID(connIDTestNCID(2, 0)); err != nil {
		t.Fatal(err)
	}
	if !s.useNext() { // retires 1, uses 2
		t.Fatal("useNext failed")
	}
	if err := s.onNewConnectionID(f); err != nil {
		t.Fatalf("duplicate of a retiring ID: %v", err)
	}
	if got := s.testRetiring(); !slices.Equal(got, []uint64{0, 1}) {
		t.Fatalf("retiring %v, want [0 1]", got)
	}
	s.testSendAll()
	s.onFrameAcked(1)
	if err := s.onNewConnectionID(f); err != nil {
		t.Fatalf("duplicate of a retired ID: %v", err)
	}
	// "unless it has already done so for that sequence number": no second
	// RETIRE_CONNECTION_ID, and the ID is not active again.
	if _, ok := s.findSeq(1); ok || s.hasFrames() {
		t.Errorf("retired ID came back: active %v, frames %v", s.testSeqs(), s.hasFrames())
	}
	s.testCheck(t)
}

func TestPeerConnIDsReuseErrors(t *testing.T) {
	// "If an endpoint receives a NEW_CONNECTION_ID frame that repeats a
	// previously issued connection ID with a different Stateless Reset
	// Token field value or a different Sequence Number field value, or if a
	// sequence number is used for different connection IDs, the endpoint
	// MAY treat that receipt as a connection error of type
	// PROTOCOL_VIOLATION." (RFC 9000, Section 19.15)
	base := connIDTestNCID(1, 0)
	for _, tc := range []struct {
		name string
		f    wire.NewConnectionIDFrame
	}{
		{"same seq, other ID", func() wire.NewConnectionIDFrame { f := base; f.ConnectionID = connIDTestCID(9); return f }()},
		{"same seq, other token", func() wire.NewConnectionIDFrame {
			f := base
			f.StatelessResetToken = connIDTestToken(9)
			return f
		}()},
		{"same ID, other seq", func() wire.NewConnectionIDFrame { f := base; f.SequenceNumber = 2; return f }()},
		{"handshake ID, other seq", func() wire.NewConnectionIDFrame { f := base; f.ConnectionID = connIDTestCID(0); return f }()},
		{"seq 0 reissued", func() wire.NewConnectionIDFrame { f := connIDTestNCID(0, 0); return f }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestPeerConnIDs(4)
			if err := s.onNewConnectionID(base); err != nil {
				t.Fatal(err)
			}
			before := s.testState()
			if code := connIDTestCode(t, s.onNewConnectionID(tc.f)); code != wire.ProtocolViolation {
				t.Errorf("got %v, want PROTOCOL_VIOLATION", code)
			}
			if s.testState() != before {
				t.Error("state changed on error")
			}
		})
	}
	t.Run("ID of a retiring seq, other seq", func(t *testing.T) {
		s := newTestPeerConnIDs(4)
		s.onNewConnectionID(base)
		s.useNext() // retires seq 0
		f := connIDTestNCID(2, 0)
		f.ConnectionID = connIDTestCID(0)
		if code := connIDTestCode(t, s.onNewConnectionID(f)); code != wire.ProtocolViolation {
			t.Errorf("got %v, want PROTOCOL_VIOLATION", code)
		}
		f = connIDTestNCID(0, 0)
		f.ConnectionID = connIDTestCID(7)
		if code := connIDTestCode(t, s.onNewConnectionID(f)); code != wire.ProtocolViolation {
			t.Errorf("got %v, want PROTOCOL_VIOLATION", code)
		}
	})
}

func TestPeerConnIDsZeroLength(t *testing.T) {
	var s peerConnIDs
	s.init(ConnectionID{}, 4)
	// "An endpoint that is sending packets with a zero-length Destination
	// Connection ID MUST treat receipt of a NEW_CONNECTION_ID frame as a
	// connection error of type PROTOCOL_VIOLATION." (RFC 9000,
	// Section 19.15)
	err := s.onNewConnectionID(connIDTestNCID(1, 0))
	if code := connIDTestCode(t, err); code != wire.ProtocolViolation {
		t.Errorf("got %v, want PROTOCOL_VIOLATION", code)
	}
	// "An endpoint cannot send this frame if it was provided with a
	// zero-length connection ID by its peer." (RFC 9000, Section 19.16)
	if s.useNext() || s.hasFrames() {
		t.Error("retiring a zero-length ID")
	}
	// "A server that chooses a zero-length connection ID MUST NOT provide a
	// preferred address." (RFC 9000, Section 18.2)
	if code := connIDTestCode(t, s.addPreferredAddress(connIDTestCID(1), connIDTestToken(1))); code != wire.TransportParameterError {
		t.Errorf("preferred address: %v, want TRANSPORT_PARAMETER_ERROR", code)
	}
	// A client whose server chose a zero-length ID learns it with
	// setInitial.
	var c peerConnIDs
	c.init(connIDTestCID(50), 4)
	c.setInitial(ConnectionID{})
	if code := connIDTestCode(t, c.onNewConnectionID(connIDTestNCID(1, 0))); code != wire.ProtocolViolation {
		t.Errorf("after setInitial to empty: %v, want PROTOCOL_VIOLATION", code)
	}
}

func TestPeerConnIDsEncodingChecks(t *testing.T) {
	s := newTestPeerConnIDs(4)
	f := connIDTestNCID(1, 2)
	// "Receiving a value in the Retire Prior To field that is greater than
	// that in the Sequence Number field MUST be treated as a connection
	// error of type FRAME_ENCODING_ERROR." (RFC 9000, Section 19.15)
	if code := connIDTestCode(t, s.onNewConnectionID(f)); code != wire.FrameEncodingError {
		t.Errorf("got %v, want FRAME_ENCODING_ERROR", code)
	}
	f = connIDTestNCID(1, 0)
	f.ConnectionID = ConnectionID{}
	if code := connIDTestCode(t, s.onNewConnectionID(f)); code != wire.FrameEncodingError {
		t.Errorf("empty ID: %v, want FRAME_ENCODING_ERROR", code)
	}
}

func TestPeerConnIDsLimit(t *testing.T) {
	s := newTestPeerConnIDs(3)
	for seq := uint64(1); seq <= 2; seq++ {
		if err := s.onNewConnectionID(connIDTestNCID(seq, 0)); err != nil {
			t.Fatal(err)
		}
	}
	before := s.testState()
	// "After processing a NEW_CONNECTION_ID frame and adding and retiring
	// active connection IDs, if the number of active connection IDs exceeds
	// the value advertised in its active_connection_id_limit transport
	// parameter, an endpoint MUST close the connection with an error of
	// type CONNECTION_ID_LIMIT_ERROR." (RFC 9000, Section 5.1.1)
	err := s.onNewConnectionID(connIDTestNCID(3, 0))
	if code := connIDTestCode(t, err); code != wire.ConnectionIDLimitError {
		t.Fatalf("got %v, want CONNECTION_ID_LIMIT_ERROR", code)
	}
	if s.testState() != before {
		t.Error("state changed on error")
	}
	// "An endpoint MAY send connection IDs that temporarily exceed a peer's
	// limit if the NEW_CONNECTION_ID frame also requires the retirement of
	// any excess, by including a sufficiently large value in the Retire
	// Prior To field." (RFC 9000, Section 5.1.1)
	if err := s.onNewConnectionID(connIDTestNCID(3, 1)); err != nil {
		t.Fatalf("with Retire Prior To 1: %v", err)
	}
	if got := s.testSeqs(); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("active %v, want [1 2 3]", got)
	}
	s.testCheck(t)
}

func TestPeerConnIDsRetirePriorTo(t *testing.T) {
	s := newTestPeerConnIDs(4)
	s.addPreferredAddress(connIDTestCID(1), connIDTestToken(1))
	s.onNewConnectionID(connIDTestNCID(2, 0))
	// "Upon receipt of an increased Retire Prior To field, the peer MUST
	// stop using the corresponding connection IDs and retire them with
	// RETIRE_CONNECTION_ID frames before adding the newly provided
	// connection ID to the set of active connection IDs." (RFC 9000,
	// Section 5.1.2). "The Retire Prior To field applies to connection IDs
	// established during connection setup and the preferred_address
	// transport parameter" (RFC 9000, Section 19.15).
	if err := s.onNewConnectionID(connIDTestNCID(3, 2)); err != nil {
		t.Fatal(err)
	}
	if got := s.testSeqs(); !slices.Equal(got, []uint64{2, 3}) {
		t.Fatalf("active %v, want [2 3]", got)
	}
	if got := s.testRetiring(); !slices.Equal(got, []uint64{0, 1}) {
		t.Fatalf("retiring %v, want [0 1]", got)
	}
	// The ID in use was retired: another takes its place.
	if s.active() != connIDTestCID(2) {
		t.Errorf("active %v, want ID 2", s.active())
	}
	// "A receiver MUST ignore any Retire Prior To fields that do not
	// increase the largest received Retire Prior To value." (RFC 9000,
	// Section 19.15)
	if err := s.onNewConnectionID(connIDTestNCID(4, 1)); err != nil {
		t.Fatal(err)
	}
	if got := s.testSeqs(); !slices.Equal(got, []uint64{2, 3, 4}) || s.maxRPT != 2 {
		t.Fatalf("active %v, maxRPT %d; want [2 3 4], 2", got, s.maxRPT)
	}
	// Everything retired at once, the new ID is the only one.
	if err := s.onNewConnectionID(connIDTestNCID(5, 5)); err != nil {
		t.Fatal(err)
	}
	if got := s.testSeqs(); !slices.Equal(got, []uint64{5}) || s.active() != connIDTestCID(5) {
		t.Fatalf("active %v (using %v), want [5]", got, s.active())
	}
	s.testCheck(t)
}

func TestPeerConnIDsBelowRetirePriorTo(t *testing.T) {
	s := newTestPeerConnIDs(2)
	// Seq 3 arrives first, carrying Retire Prior To 3; seqs 1 and 2 are
	// late.
	if err := s.onNewConnectionID(connIDTestNCID(3, 3)); err != nil {
		t.Fatal(err)
	}
	s.testSendAll()
	// "An endpoint that receives a NEW_CONNECTION_ID frame with a sequence
	// number smaller than the Retire Prior To field of a previously
	// received NEW_CONNECTION_ID frame MUST send a corresponding
	// RETIRE_CONNECTION_ID frame that retires the newly received connection
	// ID, unless it has already done so for that sequence number."
	// (RFC 9000, Section 19.15). It does not count toward the limit: with
	// limit 2 and seqs 1 and 2 both late, no error.
	for _, seq := range []uint64{1, 1, 2} {
		if err := s.onNewConnectionID(connIDTestNCID(seq, 0)); err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
	}
	if got := s.testSendAll(); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("retired %v, want [1 2] once each", got)
	}
	if got := s.testSeqs(); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("active %v, want [3]", got)
	}
	// Seq 4 fills the limit.
	if err := s.onNewConnectionID(connIDTestNCID(4, 3)); err != nil {
		t.Fatal(err)
	}
	s.testCheck(t)
}

func TestPeerConnIDsRetirementBound(t *testing.T) {
	// "An endpoint SHOULD limit the number of connection IDs it has retired
	// locally for which RETIRE_CONNECTION_ID frames have not yet been
	// acknowledged. An endpoint SHOULD allow for sending and tracking a
	// number of RETIRE_CONNECTION_ID frames of at least twice the value of
	// the active_connection_id_limit transport parameter. An endpoint MUST
	// NOT forget a connection ID without retiring it, though it MAY choose
	// to treat having connection IDs in need of retirement that exceed this
	// limit as a connection error of type CONNECTION_ID_LIMIT_ERROR."
	// (RFC 9000, Section 5.1.2)
	const limit = 2
	s := newTestPeerConnIDs(limit)
	var err error
	seq := uint64(0)
	for n := 0; n < 100 && err == nil; n++ {
		// Each frame retires everything before it; nothing is acknowledged.
		seq++
		err = s.onNewConnectionID(connIDTestNCID(seq, seq))
		s.testSendAll()
	}
	if code := connIDTestCode(t, err); code != wire.ConnectionIDLimitError {
		t.Fatalf("got %v, want CONNECTION_ID_LIMIT_ERROR", code)
	}
	if uint64(len(s.retiring)) != s.maxRetiring() || s.maxRetiring() < 2*limit {
		t.Errorf("failed with %d pending retirements, want it after %d, at least %d", len(s.retiring), s.maxRetiring(), 2*limit)
	}
	// With the retirements acknowledged the same sequence goes on forever.
	s = newTestPeerConnIDs(limit)
	for seq := uint64(1); seq < 100; seq++ {
		if err := s.onNewConnectionID(connIDTestNCID(seq, seq)); err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
		for _, q := range s.testSendAll() {
			s.onFrameAcked(q)
		}
		s.testCheck(t)
	}
	// useNext refuses rather than fail the connection.
	s = newTestPeerConnIDs(limit)
	for seq := uint64(1); ; seq++ {
		if err := s.onNewConnectionID(connIDTestNCID(seq, 0)); err != nil {
			t.Fatal(err)
		}
		if !s.useNext() {
			if uint64(len(s.retiring)) != s.limit {
				t.Fatalf("useNext refused with %d pending retirements", len(s.retiring))
			}
			break
		}
		s.testCheck(t)
	}
}

func TestPeerConnIDsUseNext(t *testing.T) {
	s := newTestPeerConnIDs(4)
	if s.useNext() {
		t.Fatal("useNext succeeded with no spare ID")
	}
	s.onNewConnectionID(connIDTestNCID(1, 0))
	s.onNewConnectionID(connIDTestNCID(2, 0))
	// "An endpoint can change the connection ID it uses for a peer to
	// another available one at any time during the connection." ... "When
	// the endpoint wishes to remove a connection ID from use, it sends a
	// RETIRE_CONNECTION_ID frame to its peer." (RFC 9000, Section 5.1.2)
	if !s.useNext() || s.active() != connIDTestCID(1) {
		t.Fatalf("active %v, want ID 1", s.active())
	}
	f, ok := s.nextFrame()
	if !ok || f.SequenceNumber != 0 {
		t.Fatalf("frame %+v %v, want RETIRE_CONNECTION_ID 0", f, ok)
	}
	if !s.useNext() || s.active() != connIDTestCID(2) {
		t.Fatalf("active %v, want ID 2", s.active())
	}
	if s.useNext() {
		t.Error("useNext succeeded with every ID used")
	}
	if got := s.testRetiring(); !slices.Equal(got, []uint64{0, 1}) {
		t.Errorf("retiring %v, want [0 1]", got)
	}
	s.testCheck(t)
}

func TestPeerConnIDsUseNextAboveGap(t *testing.T) {
	s := newTestPeerConnIDs(4)
	// Seq 1 is late; seqs 2 and 3 are used and retired in turn.
	s.onNewConnectionID(connIDTestNCID(2, 0))
	s.onNewConnectionID(connIDTestNCID(3, 0))
	s.useNext() // 0 -> 2
	s.onNewConnectionID(connIDTestNCID(4, 0))
	s.useNext() // 2 -> 3
	if !slices.Equal(s.retiredAbove, []uint64{2}) {
		t.Fatalf("retiredAbove %v, want [2]", s.retiredAbove)
	}
	for _, q := range s.testSendAll() {
		s.onFrameAcked(q)
	}
	// A late copy of seq 2 is recognized as retired.
	if err := s.onNewConnectionID(connIDTestNCID(2, 0)); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.findSeq(2); ok || s.hasFrames() {
		t.Fatal("retired seq 2 came back")
	}
	// Seq 1 arrives and fills the gap.
	if err := s.onNewConnectionID(connIDTestNCID(1, 0)); err != nil {
		t.Fatal(err)
	}
	if len(s.retiredAbove) != 0 || s.doneBelow != 5 {
		t.Errorf("retiredAbove %v, doneBelow %d; want [], 5", s.retiredAbove, s.doneBelow)
	}
	s.testCheck(t)
}

func TestPeerConnIDsPreferredAddress(t *testing.T) {
	s := newTestPeerConnIDs(2)
	s.setInitialResetToken(connIDTestToken(0))
	if err := s.addPreferredAddress(connIDTestCID(1), connIDTestToken(1)); err != nil {
		t.Fatal(err)
	}
	// The limit counts it: "This value includes the connection ID received
	// during the handshake, that received in the preferred_address
	// transport parameter, and those received in NEW_CONNECTION_ID frames."
	// (RFC 9000, Section 18.2)
	if code := connIDTestCode(t, s.onNewConnectionID(connIDTestNCID(2, 0))); code != wire.ConnectionIDLimitError {
		t.Errorf("third ID: %v, want CONNECTION_ID_LIMIT_ERROR", code)
	}
	// A client moves to it when migrating to the preferred address.
	if !s.useNext() || s.active() != connIDTestCID(1) {
		t.Errorf("active %v, want the preferred address ID", s.active())
	}
	if code := connIDTestCode(t, s.addPreferredAddress(connIDTestCID(3), connIDTestToken(3))); code != wire.TransportParameterError {
		t.Errorf("late preferred address: %v", code)
	}
	s2 := newTestPeerConnIDs(2)
	if code := connIDTestCode(t, s2.addPreferredAddress(connIDTestCID(0), connIDTestToken(0))); code != wire.TransportParameterError {
		t.Errorf("preferred address repeating the handshake ID: %v", code)
	}
	if code := connIDTestCode(t, s2.addPreferredAddress(ConnectionID{}, connIDTestToken(0))); code != wire.TransportParameterError {
		t.Errorf("empty preferred address ID: %v", code)
	}
}

func TestPeerConnIDsStatelessReset(t *testing.T) {
	reset := func(token wire.StatelessResetToken) []byte {
		d := make([]byte, 40)
		d[0] = 0x40
		copy(d[len(d)-16:], token[:])
		return d
	}
	// A server has no token for the client's handshake ID: "clients cannot
	// use the stateless_reset_token transport parameter because their
	// transport parameters do not have confidentiality protection"
	// (RFC 9000, Section 10.3). An all-zero tail must not match.
	s := newTestPeerConnIDs(4)
	if s.isStatelessReset(reset(wire.StatelessResetToken{})) {
		t.Fatal("matched a token never received")
	}
	// A client has the server's.
	s.setInitialResetToken(connIDTestToken(0))
	if !s.isStatelessReset(reset(connIDTestToken(0))) {
		t.Fatal("did not match the handshake ID's token")
	}
	// "Endpoints MUST discard packets that are too small to be valid QUIC
	// packets." (RFC 9000, Section 10.3)
	if s.isStatelessReset(reset(connIDTestToken(0))[20:]) {
		t.Error("matched a 20-byte datagram")
	}
	if !s.isStatelessReset(reset(connIDTestToken(0))[19:]) {
		t.Error("did not match a 21-byte datagram")
	}
	s.onNewConnectionID(connIDTestNCID(1, 0))
	s.onNewConnectionID(connIDTestNCID(2, 0))
	// "An endpoint MUST NOT check for any stateless reset tokens associated
	// with connection IDs it has not used or for connection IDs that have
	// been retired." (RFC 9000, Section 10.3.1)
	if s.isStatelessReset(reset(connIDTestToken(1))) {
		t.Error("matched the token of an unused ID")
	}
	s.useNext() // uses 1, retires 0
	if !s.isStatelessReset(reset(connIDTestToken(1))) {
		t.Error("did not match the token of the ID in use")
	}
	if s.isStatelessReset(reset(connIDTestToken(0))) {
		t.Error("matched the token of a retired ID")
	}
	if s.isStatelessReset(reset(connIDTestToken(2))) {
		t.Error("matched the token of an unused ID")
	}
	// A packet that merely resembles one does not match.
	d := reset(connIDTestToken(1))
	d[len(d)-1] ^= 1
	if s.isStatelessReset(d) {
		t.Error("matched a wrong token")
	}
}

func TestPeerConnIDsFramesLossAndAck(t *testing.T) {
	s := newTestPeerConnIDs(4)
	for seq := uint64(1); seq <= 3; seq++ {
		s.onNewConnectionID(connIDTestNCID(seq, 0))
	}
	s.onNewConnectionID(connIDTestNCID(4, 3)) // retires 0, 1, 2
	if got := s.testSendAll(); !slices.Equal(got, []uint64{0, 1, 2}) {
		t.Fatalf("sent %v, want [0 1 2]", got)
	}
	if s.hasFrames() {
		t.Fatal("frames pending after sending all")
	}
	// "Likewise, retired connection IDs are sent in RETIRE_CONNECTION_ID
	// frames and retransmitted if the packet containing them is lost."
	// (RFC 9000, Section 13.3)
	s.onFrameLost(1)
	if f, ok := s.nextFrame(); !ok || f.SequenceNumber != 1 {
		t.Fatalf("after loss: %+v %v, want RETIRE_CONNECTION_ID 1", f, ok)
	}
	s.frameSent(1)
	s.onFrameAcked(0)
	s.onFrameAcked(1)
	s.onFrameAcked(2)
	if len(s.retiring) != 0 {
		t.Fatalf("retiring %v after acks", s.testRetiring())
	}
	// Late reports are ignored.
	s.onFrameLost(1)
	s.onFrameAcked(1)
	if s.hasFrames() {
		t.Error("late loss requeued an acknowledged retirement")
	}
}

func TestPeerConnIDsAppendFrames(t *testing.T) {
	s := newTestPeerConnIDs(4)
	for seq := uint64(1); seq <= 3; seq++ {
		s.onNewConnectionID(connIDTestNCID(seq, 0))
	}
	s.onNewConnectionID(connIDTestNCID(200, 200)) // retires 0..3
	b, sent := s.appendFrames(nil, 5, nil)
	if !slices.Equal(sent, []uint64{0, 1}) || len(b) != 4 {
		t.Fatalf("sent %v in %d bytes, want [0 1] in 4", sent, len(b))
	}
	b, sent = s.appendFrames(b, 100, sent)
	if !slices.Equal(sent, []uint64{0, 1, 2, 3}) {
		t.Fatalf("sent %v", sent)
	}
	for off, i := 0, 0; off < len(b); i++ {
		f, n, err := wire.ParseRetireConnectionIDFrame(b[off:])
		if err != nil || f.SequenceNumber != sent[i] {
			t.Fatalf("frame %d: %+v, %v", i, f, err)
		}
		off += n
	}
}

func TestPeerConnIDsAlloc(t *testing.T) {
	s := newTestPeerConnIDs(4)
	buf := make([]byte, 0, 1500)
	sent := make([]uint64, 0, 16)
	seq := uint64(0)
	datagram := make([]byte, 40)
	allocs := testing.AllocsPerRun(100, func() {
		seq++
		if err := s.onNewConnectionID(connIDTestNCID(seq, seq)); err != nil {
			t.Fatal(err)
		}
		var b []byte
		b, sent = s.appendFrames(buf, 1500, sent[:0])
		for _, q := range sent {
			s.onFrameAcked(q)
		}
		_ = b
		s.isStatelessReset(datagram)
	})
	if allocs != 0 && !connIDRaceEnabled {
		t.Errorf("steady state allocates %v times, want 0", allocs)
	}
}

func BenchmarkPeerConnIDsNewConnectionID(b *testing.B) {
	s := newTestPeerConnIDs(8)
	sent := make([]uint64, 0, 16)
	buf := make([]byte, 0, 1500)
	seq := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		seq++
		if err := s.onNewConnectionID(connIDTestNCID(seq, seq)); err != nil {
			b.Fatal(err)
		}
		buf, sent = s.appendFrames(buf[:0], 1500, sent[:0])
		for _, q := range sent {
			s.onFrameAcked(q)
		}
	}
}

func BenchmarkPeerConnIDsIsStatelessReset(b *testing.B) {
	s := newTestPeerConnIDs(8)
	s.setInitialResetToken(connIDTestToken(0))
	for seq := uint64(1); seq < 8; seq++ {
		s.onNewConnectionID(connIDTestNCID(seq, 0))
		s.useNext()
		s.retiring = s.retiring[:0]
	}
	d := make([]byte, 1200)
	b.ReportAllocs()
	for b.Loop() {
		s.isStatelessReset(d)
	}
}

// FuzzPeerConnIDs applies random sequences of NEW_CONNECTION_ID frames,
// acknowledgments and losses of RETIRE_CONNECTION_ID frames, and switches
// of the ID in use, and checks after each step that peerConnIDs keeps its
// invariants: at most active_connection_id_limit active IDs, a bounded
// number of pending retirements, and an ID in use that is active (never
// retired). Errors must be *wire.TransportError values that leave the
// state unchanged; the connection would close, so the sequence stops.
//
// Each operation takes two bytes, op and arg:
//
//	op%8 0-3: NEW_CONNECTION_ID with seq = arg%32, its ID and token derived
//	          from seq so that repeats are mostly duplicates; Retire Prior
//	          To is 0 if op>>3 is 0, seq-(op>>3) if op>>3 is 1 to 20, and
//	          seq above; op%8 == 3 also alters the ID (arg >= 128) or the
//	          token, which makes reuse errors.
//	op%8 4:   useNext
//	op%8 5:   send the pending RETIRE_CONNECTION_ID frames
//	op%8 6:   acknowledge the retirement of arg%32
//	op%8 7:   lose the retirement of arg%32
//
// The first argument sets active_connection_id_limit to 2 + limit%20.
func FuzzPeerConnIDs(f *testing.F) {
	f.Add(uint8(4), []byte{0, 1, 0, 2, 0, 3, 4, 0, 5, 0, 6, 0})
	f.Add(uint8(2), []byte{0, 3, 0x10, 5, 4, 0, 0, 1, 0, 2, 5, 0})
	f.Add(uint8(8), []byte{0, 1, 4, 0, 0, 2, 4, 0, 0, 3, 4, 0, 5, 0, 7, 0, 5, 0, 6, 0, 6, 1})
	f.Add(uint8(3), []byte{3, 1, 0, 1, 0xf8, 9, 0, 9})
	f.Fuzz(func(t *testing.T, limit uint8, ops []byte) {
		var s peerConnIDs
		s.init(connIDTestCID(0), uint64(limit%20)+2)
		s.setInitialResetToken(connIDTestToken(0))
		for len(ops) >= 2 {
			op, arg := ops[0], ops[1]
			ops = ops[2:]
			switch op % 8 {
			case 0, 1, 2, 3:
				seq := uint64(arg % 32)
				var rpt uint64
				switch back := uint64(op >> 3); {
				case back == 0:
				case back <= 20:
					rpt = seq - min(back, seq)
				default:
					rpt = seq // retire everything before it
				}
				fr := connIDTestNCID(seq, rpt)
				if op%8 == 3 {
					if arg&0x80 != 0 {
						fr.ConnectionID = connIDTestCID(uint64(arg>>5) % 4)
					} else {
						fr.StatelessResetToken[0] ^= 0xff
					}
				}
				before := s.testState()
				if err := s.onNewConnectionID(fr); err != nil {
					connIDTestCode(t, err)
					if s.testState() != before {
						t.Fatalf("state changed on error %v", err)
					}
					return
				}
			case 4:
				prev := s.active()
				if s.useNext() && s.active() == prev {
					t.Fatal("useNext kept the same ID")
				}
			case 5:
				s.testSendAll()
			case 6:
				s.onFrameAcked(uint64(arg % 32))
			case 7:
				s.onFrameLost(uint64(arg % 32))
			}
			s.testCheck(t)
			// The ID in use always has its token checked.
			tok := s.activeToken()
			if !s.isStatelessReset(append(make([]byte, 24), tok[:]...)) {
				t.Fatal("token of the ID in use not matched")
			}
		}
	})
}

// activeToken returns the token of the ID in use.
func (s *peerConnIDs) activeToken() wire.StatelessResetToken {
	i, _ := s.findSeq(s.curSeq)
	return s.ids[i].token
}

// TestConnIDExchange connects localConnIDs (the issuer) and peerConnIDs (the
// user) through a lossy, reordering channel for NEW_CONNECTION_ID and
// RETIRE_CONNECTION_ID frames, with rotations and migrations, and checks
// that the issuer never makes the user exceed its active_connection_id_limit
// or fail in any other way, and that the issuer keeps every ID the user may
// send to routed.
func TestConnIDExchange(t *testing.T) {
	for seed := range uint64(300) {
		connIDExchange(t, seed, 400)
	}
}

func FuzzConnIDExchange(f *testing.F) {
	f.Add(uint64(1), uint16(300))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		connIDExchange(t, seed, int(steps%2000))
	})
}

// connIDInFlight is a frame on its way, with the sequence number that
// identifies its record on the sender.
type connIDInFlight struct {
	ncid   wire.NewConnectionIDFrame
	retire bool // RETIRE_CONNECTION_ID with seq
	seq    uint64
	ackFor bool // an acknowledgment travelling back
	born   int  // step it was sent
}

// connIDMaxDelay is how many steps a frame may stay on the network: a
// real network delivers or loses packets, and loss detection declares
// them lost, within a few round trips.
const connIDMaxDelay = 24

func connIDExchange(t *testing.T, seed uint64, steps int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x1d))
	limit := uint64(2 + rng.IntN(5))
	var issuer testLocalIDs
	routes := newConnIDTestRoutes()
	if err := issuer.init(&connIDTestGen{n: 8}, connIDTestResetter(t), routes, 1+rng.IntN(10)); err != nil {
		t.Fatal(err)
	}
	var user peerConnIDs
	user.init(issuer.initial(), limit)
	user.setInitialResetToken(issuer.initialResetToken())
	if rng.IntN(2) == 0 {
		cid, token, err := issuer.issuePreferredAddress()
		if err != nil {
			t.Fatal(err)
		}
		if err := user.addPreferredAddress(cid, token); err != nil {
			t.Fatal(err)
		}
	}
	if err := issuer.setPeerLimit(limit); err != nil {
		t.Fatal(err)
	}
	lossRate := rng.IntN(40) // percent
	var toUser, toIssuer []connIDInFlight
	step := 0
	deliver := func(q *[]connIDInFlight) (connIDInFlight, bool) {
		if len(*q) == 0 {
			return connIDInFlight{}, false
		}
		// Reordering: take any frame in flight, unless the oldest one is
		// due.
		i := rng.IntN(len(*q))
		if step-(*q)[0].born > connIDMaxDelay {
			i = 0
		}
		m := (*q)[i]
		*q = slices.Delete(*q, i, i+1)
		return m, true
	}
	for ; step < steps; step++ {
		switch rng.IntN(8) {
		case 0: // the issuer sends
			b, sent := issuer.appendFrames(nil, 60*(1+rng.IntN(3)), nil)
			_ = b
			for _, seq := range sent {
				i := issuer.findSeq(seq)
				e := issuer.ids[i]
				f := wire.NewConnectionIDFrame{SequenceNumber: seq, RetirePriorTo: e.rpt, ConnectionID: e.cid, StatelessResetToken: e.token}
				toUser = append(toUser, connIDInFlight{ncid: f, seq: seq, born: step})
			}
		case 1: // the user sends
			_, sent := user.appendFrames(nil, 100, nil)
			for _, seq := range sent {
				toIssuer = append(toIssuer, connIDInFlight{retire: true, seq: seq, born: step})
			}
		case 2, 3: // a frame reaches the user, or an acknowledgment the issuer
			m, ok := deliver(&toUser)
			if !ok {
				break
			}
			if m.ackFor {
				if m.retire {
					user.onFrameAcked(m.seq)
				} else {
					issuer.onFrameAcked(m.seq)
				}
				break
			}
			if rng.IntN(100) < lossRate {
				issuer.onFrameLost(m.seq)
				break
			}
			if err := user.onNewConnectionID(m.ncid); err != nil {
				t.Fatalf("seed %d step %d: user: %v", seed, step, err)
			}
			if rng.IntN(4) == 0 { // duplicate on the network
				m.born = step
				toUser = append(toUser, m)
			}
			toIssuer = append(toIssuer, connIDInFlight{ackFor: true, seq: m.seq, born: step})
		case 4, 5: // a frame reaches the issuer, or an acknowledgment the user
			m, ok := deliver(&toIssuer)
			if !ok {
				break
			}
			if m.ackFor {
				issuer.onFrameAcked(m.seq)
				break
			}
			if rng.IntN(100) < lossRate {
				user.onFrameLost(m.seq)
				break
			}
			// RETIRE_CONNECTION_ID travels in a packet sent to the ID in
			// use, which is never the one retired.
			if err := issuer.onRetire(m.seq, user.active()); err != nil {
				t.Fatalf("seed %d step %d: issuer: %v", seed, step, err)
			}
			toUser = append(toUser, connIDInFlight{ackFor: true, retire: true, seq: m.seq, born: step})
		case 6: // migration
			user.useNext()
		case 7: // rotation
			if rng.IntN(4) == 0 {
				if _, err := issuer.retirePriorTo(issuer.nextSeq); err != nil {
					t.Fatal(err)
				}
			}
		}
		user.testCheck(t)
		// "When an endpoint issues a connection ID, it MUST accept packets
		// that carry this connection ID ... until its peer invalidates the
		// connection ID via a RETIRE_CONNECTION_ID frame" (RFC 9000,
		// Section 5.1.1).
		for _, e := range user.ids {
			if _, ok := routes.routed[e.cid]; !ok {
				t.Fatalf("seed %d step %d: user holds %v (seq %d), which is not routed", seed, step, e.cid, e.seq)
			}
		}
		if n := issuer.activeCount(); n > 2*int(min(limit, issuer.maxActive))+2 {
			t.Fatalf("seed %d: issuer holds %d IDs", seed, n)
		}
	}
}
