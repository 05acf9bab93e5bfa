package quic

import (
	"net/netip"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// Network paths (RFC 9000, Section 9): the table of the paths a connection
// uses, which path each datagram arrived on, and migration to the peer's
// new address (Section 9.3). Path validation is conn_path_validation.go;
// probing and switching on demand, conn_path_migrate.go; congestion state
// per path, conn_path_cc.go.

// pathAddrs are the two ends of a network path as a datagram shows them:
// the local address it arrived at (or leaves from) and the peer's address.
// A zero field is unknown; the zero pathAddrs stands for the active path
// (tests and callers that do not track addresses).
type pathAddrs struct {
	local, remote netip.AddrPort
}

// matches reports whether a datagram with addresses a belongs to the path
// with addresses p: same remote, and same local where both are known (a
// socket on a wildcard address may not know its local address).
func (p pathAddrs) matches(a pathAddrs) bool {
	return p.remote == a.remote && localMatches(p.local, a.local)
}

// maxPaths bounds the paths a connection tracks: the active one, the last
// validated one to revert to, and a few being validated. A peer (or an
// attacker forwarding its packets) cannot make the connection store more.
const maxPaths = 4

// maxPathChallenges is how many PATH_CHALLENGE frames one validation sends
// before it waits for its timer to fail: "An endpoint MAY send multiple
// PATH_CHALLENGE frames to guard against packet loss." (RFC 9000,
// Section 8.2.1)
const maxPathChallenges = 3

// netPath is a network path of a connection (RFC 9000, Section 9).
type netPath struct {
	addrs pathAddrs
	inUse bool
	// validated: the peer proved it receives at addrs (RFC 9000,
	// Section 8.2), or it is the handshake path.
	validated bool
	// Bytes received and sent on the path, for the anti-amplification
	// limit while it is not validated: "an endpoint MUST limit the amount
	// of data it sends to the unvalidated address to three times the
	// amount of data received from that address" (RFC 9000, Section 9.3.1).
	recv, sent uint64
	lastRecv   time.Time

	// Path validation (RFC 9000, Section 8.2).
	validating      bool
	challenges      [maxPathChallenges][8]byte // data of the challenges sent
	small           [maxPathChallenges]bool    // sent in a datagram under 1200 bytes
	nChallenges     int
	challengeToSend bool
	nextChallenge   time.Time // when to send another PATH_CHALLENGE
	abandonAt       time.Time // when validation fails

	// A PATH_RESPONSE owed on this path: "A PATH_RESPONSE frame MUST be
	// sent on the network path where the PATH_CHALLENGE frame was
	// received." (RFC 9000, Section 8.2.2) Only the latest is kept; the
	// peer sends more challenges as needed.
	response       [8]byte
	responseToSend bool

	// dcidSeq is the sequence number of the peer's connection ID used on
	// the path while it is not active (Section 9.5); hasDCID is false
	// until one is assigned. The active path uses peerIDs.active().
	dcidSeq uint64
	hasDCID bool

	// saved is the congestion state of the path while it is not active,
	// restored if the connection returns to it (RFC 9000, Section 9.3:
	// "restoring loss detection and congestion state can reduce the
	// performance impact of the attack").
	saved *savedCongestion

	// onValidated, if set, learns the outcome of validation (client
	// probes through the migration API); with switchOnValidation the
	// client moves to the path once validated.
	onValidated        func(ok bool)
	switchOnValidation bool
}

// savedCongestion is a congestion controller and RTT estimate put aside.
type savedCongestion struct {
	cc  congestion.Controller
	rtt congestion.RTTStats
}

// paths is the connection's table of network paths.
type paths struct {
	// list holds the paths. It starts with the handshake path alone and
	// grows to maxPaths slots when a second path appears, so that a
	// connection that never sees another address keeps one.
	list     []netPath
	active   int // index in list of the path non-probing packets go to
	fallback int // the last validated path to revert to, or -1
	// rx is the path of the datagram being processed, or -1 if it is new
	// and not in the table yet (rxNew holds it).
	rx    int
	rxNew netPath
	// handshakeRemote is the peer's address during the handshake.
	handshakeRemote netip.AddrPort
	// txChallenge is the path of the PATH_CHALLENGE in the datagram being
	// built, if any, and txChallengeIdx its index in challenges.
	txChallenge    *netPath
	txChallengeIdx int
	// Statistics.
	migrations      int
	challengesSent  int
	validationsOK   int
	validationsFail int
}

func (ps *paths) init(validated bool) {
	ps.list = []netPath{{inUse: true, validated: validated}}
	ps.active, ps.fallback, ps.rx = 0, -1, 0
}

// find returns the index of the path of a, or -1.
func (ps *paths) find(a pathAddrs) int {
	if a == (pathAddrs{}) {
		return ps.active
	}
	if p := &ps.list[ps.active]; p.inUse && p.addrs.matches(a) {
		return ps.active // nearly every datagram
	}
	for i := range ps.list {
		if p := &ps.list[i]; p.inUse && p.addrs.matches(a) {
			return i
		}
	}
	return -1
}

// victim returns the slot a new path takes: a free one (the table grows
// to maxPaths slots the first time it needs one), or else the least
// recently used path that is neither active nor the fallback; -1 if every
// slot is taken by those two kinds. Growing moves the paths: pointers to
// them taken before do not survive a call.
func (ps *paths) victim() int {
	if n := len(ps.list); n < maxPaths {
		list := make([]netPath, maxPaths)
		copy(list, ps.list)
		ps.list = list
		return n
	}
	v := -1
	for i := range ps.list {
		q := &ps.list[i]
		if !q.inUse {
			return i
		}
		if i == ps.active || i == ps.fallback {
			continue
		}
		if v < 0 || q.lastRecv.Before(ps.list[v].lastRecv) {
			v = i
		}
	}
	return v
}

// add puts p in the victim's slot and returns its index, or -1.
func (ps *paths) add(p netPath) int {
	v := ps.victim()
	if v >= 0 {
		p.inUse = true
		ps.list[v] = p
	}
	return v
}

// addPath is paths.add that first retires the connection ID of the path
// it replaces, if any.
func (c *connState) addPath(p netPath) int {
	v := c.paths.victim()
	if v >= 0 && c.paths.list[v].inUse {
		c.dropPath(v)
	}
	return c.paths.add(p)
}

// knownServerAddr reports, on a client, whether a is an address of the
// server's it sent to: the handshake's, or one of a path in the table.
func (c *connState) knownServerAddr(a netip.AddrPort) bool {
	if a == c.paths.handshakeRemote {
		return true
	}
	for i := range c.paths.list {
		if p := &c.paths.list[i]; p.inUse && p.addrs.remote == a {
			return true
		}
	}
	return false
}

// activePath returns the path non-probing packets are sent on.
func (c *connState) activePath() *netPath { return &c.paths.list[c.paths.active] }

// rxPath returns the path of the datagram being processed.
func (c *connState) rxPath() *netPath {
	if c.paths.rx < 0 {
		return &c.paths.rxNew
	}
	return &c.paths.list[c.paths.rx]
}

// handleDatagramOn processes a datagram received on the path addrs (see
// handleDatagram). A datagram from an address the connection does not
// know is processed only if it decrypts, and only then takes a place in
// the path table.
func (c *connState) handleDatagramOn(now time.Time, addrs pathAddrs, d []byte, ecn ackhandler.ECNMark) {
	c.markActive(now)
	ps := &c.paths
	c.rxMigrate = false
	ps.rx = ps.find(addrs)
	if a := &ps.list[ps.active].addrs; ps.rx < 0 && !a.remote.IsValid() && !c.handshakeConfirmed {
		// The handshake path's addresses were not given: the first
		// datagram tells them.
		*a = addrs
		ps.handshakeRemote = addrs.remote
		ps.rx = ps.active
	}
	if ps.rx < 0 {
		// "If a client receives packets from an unknown server address,
		// the client MUST discard these packets." (RFC 9000, Section 9)
		// A known one at a local address the client left (it migrated,
		// or moved to the server's preferred address, which sends from
		// its original address until it validated the new path,
		// Section 9.6.2) is processed, without a place in the table.
		// "An endpoint MUST NOT initiate connection migration before the
		// handshake is confirmed" (Section 9): a server keeps the
		// handshake path until then.
		known := c.role == wire.RoleClient && c.knownServerAddr(addrs.remote)
		if (c.role == wire.RoleClient && !known) || !c.handshakeConfirmed || c.closeState != stateActive {
			return
		}
		ps.rxNew = netPath{addrs: addrs}
	}
	if c.closeState == stateClosing && !c.closingCounts(len(d)) {
		ps.rx = ps.active
		return
	}
	before := c.packetsReceived
	c.processDatagram(now, d, ecn)
	if c.packetsReceived == before || (ps.rx < 0 && c.role == wire.RoleClient) {
		ps.rx = ps.active
		return // nothing authenticated: no state for the address
	}
	if ps.rx < 0 {
		i := c.addPath(ps.rxNew)
		if i < 0 {
			ps.rx = ps.active
			return
		}
		ps.rx = i
		if c.rxMigrate {
			c.followPeer(now, i)
		}
	}
	if p := &ps.list[ps.rx]; p.inUse {
		p.recv += uint64(len(d))
		p.lastRecv = now
	}
	ps.rx = ps.active
}

// onPathPacket is called for every 1-RTT packet processed, with whether it
// had the highest packet number received so far. Only the server follows
// a peer to a new address; "Clients are responsible for initiating all
// migrations." (RFC 9000, Section 9)
func (c *connState) onPathPacket(now time.Time, highest bool) {
	if c.role != wire.RoleServer || !c.rxNonProbing || !highest || c.paths.rx == c.paths.active {
		return
	}
	// "Receiving a packet from a new peer address containing a
	// non-probing frame indicates that the peer has migrated to that
	// address." ... "An endpoint only changes the address to which it
	// sends packets in response to the highest-numbered non-probing
	// packet." (RFC 9000, Section 9.3)
	if c.paths.rx < 0 {
		c.rxMigrate = true // once the path has a place in the table
		return
	}
	c.followPeer(now, c.paths.rx)
}

// followPeer moves the server to path i, where the peer sent its highest
// non-probing packet. A path to another local address of the server (its
// preferred address, RFC 9000, Section 9.6) is validated first: "The
// server MUST send non-probing packets from its original address until it
// receives a non-probing packet from the client at its preferred address
// and until the server has validated the new path." and "The server MUST
// probe on the path toward the client from its preferred address."
// (Section 9.6.2) Its validation then moves the connection (onValidated).
func (c *connState) followPeer(now time.Time, i int) {
	ps := &c.paths
	np := &ps.list[i]
	if !np.validated && !localMatches(np.addrs.local, ps.list[ps.active].addrs.local) {
		if !np.validating {
			c.startValidation(now, np)
		}
		np.switchOnValidation = true
		return
	}
	c.migrateTo(now, i)
}

// migrateTo makes path i the active path, on the server in response to a
// peer's migration (RFC 9000, Section 9.3), on the client when it moves
// to a path it probed.
func (c *connState) migrateTo(now time.Time, i int) {
	ps := &c.paths
	old := ps.active
	if old == i || i < 0 || !ps.list[i].inUse {
		return
	}
	op, np := &ps.list[old], &ps.list[i]
	if op.validated {
		if f := ps.fallback; f >= 0 && f != i && f != old {
			// One validated path to revert to is enough: the older
			// one goes, with its connection ID.
			ps.fallback = -1
			c.dropPath(f)
		}
		ps.fallback = old
	}
	if ps.fallback == i {
		ps.fallback = -1
	}
	ps.active = i
	ps.migrations++
	// The active path's connection ID is peerIDs.active(); the old path
	// keeps the one it used. A fresh connection ID for the new path when
	// the peer gave one: "endpoints ... use different connection IDs when
	// sending to different addresses" (RFC 9000, Section 9.5). Otherwise
	// the current one goes on: "Due to network changes outside the
	// control of its peer, an endpoint might receive packets from a new
	// source address with the same Destination Connection ID field
	// value, in which case it MAY continue to use the current connection
	// ID with the new remote address" (Section 9.5).
	op.dcidSeq, op.hasDCID = c.peerIDs.curSeq, true
	if !np.hasDCID || !c.peerIDs.setCurrent(np.dcidSeq) {
		if seq, _, ok := c.peerIDs.reserve(); ok {
			c.peerIDs.setCurrent(seq)
		}
	}
	np.hasDCID = false
	if op.dcidSeq == c.peerIDs.curSeq {
		// No unused ID: the one in use went on to the new path, which
		// the exception allows "while still sending from the same local
		// address", and the old path gives it up; its challenge
		// (Section 9.3.3) waits for an unused ID (pathDCID): "An
		// endpoint MUST NOT reuse a connection ID when sending to more
		// than one destination address" (Section 9.5).
		op.hasDCID = false
	}
	c.swapCongestion(now, op, np)
	if !np.validated && !np.validating {
		// "If the recipient permits the migration, it MUST send
		// subsequent packets to the new peer address and MUST initiate
		// path validation (Section 8.2) to verify the peer's ownership of
		// the address if validation is not already underway."
		c.startValidation(now, np)
	}
	if c.role == wire.RoleServer && op.validated && !op.validating && op.addrs != np.addrs {
		// "In response to an apparent migration, endpoints MUST validate
		// the previously active path using a PATH_CHALLENGE frame."
		// (RFC 9000, Section 9.3.3)
		c.startValidation(now, op) // it stays validated: no amplification limit
	}
}

// swapCongestion moves from path op to np: "On confirming a peer's
// ownership of its new address, an endpoint MUST immediately reset the
// congestion controller and round-trip time estimator for the new path to
// initial values ... unless the only change in the peer's address is its
// port number." (RFC 9000, Section 9.4) This endpoint resets as soon as it
// moves, so that "Packets sent on the old path MUST NOT contribute to
// congestion control or RTT estimation for the new path", and keeps the
// old state with the old path, restored if the connection returns to it.
func (c *connState) swapCongestion(now time.Time, op, np *netPath) {
	portOnly := op.addrs.remote.Addr() == np.addrs.remote.Addr() && op.addrs.local.Addr() == np.addrs.local.Addr()
	if portOnly && np.saved == nil {
		return
	}
	op.saved = &savedCongestion{cc: c.ccw.cc, rtt: *c.rtt}
	var cc congestion.Controller
	if s := np.saved; s != nil {
		cc, *c.rtt = s.cc, s.rtt
		np.saved = nil
	} else {
		mad := c.rtt.MaxAckDelay()
		c.rtt.Reset()
		c.rtt.SetMaxAckDelay(mad)
		cc = c.newController()
	}
	// The packets in flight were sent on the old path: neither their
	// fate nor their RTT samples go to the new path's state.
	since, _ := c.sent.NextPacketNumber(ackhandler.SpaceApplication)
	c.ccw.newPath(now, cc, int64(since), c.sent.BytesInFlight())
	c.sent.IgnoreRTTSamplesBefore(since)
	c.ccw.cc.SetMaxDatagramSize(c.maxDatagramSize)
	// ECN capability is a property of the path: "The new path might not
	// have the same ECN capability. Therefore, the endpoint validates ECN
	// capability as described in Section 13.4." (RFC 9000, Section 9.2)
	c.sent.RestartECNValidation()
	c.pmtuOnNewPath()
}

// dropPath forgets path i, which is not active, and retires its connection
// ID unless the active path shares it.
func (c *connState) dropPath(i int) {
	ps := &c.paths
	p := &ps.list[i]
	if i == ps.active || !p.inUse {
		return
	}
	if p.hasDCID && p.dcidSeq != c.peerIDs.curSeq {
		c.peerIDs.retire(p.dcidSeq)
	}
	f := p.onValidated
	*p = netPath{}
	if f != nil {
		f(false) // a probe replaced before it validated
	}
}

// isProbingFrame reports whether a frame type is a probing frame:
// "PATH_CHALLENGE, PATH_RESPONSE, NEW_CONNECTION_ID, and PADDING frames
// are "probing frames", and all other frames are "non-probing frames"."
// (RFC 9000, Section 9.1)
func isProbingFrame(t wire.FrameType) bool {
	switch t {
	case wire.FrameTypePathChallenge, wire.FrameTypePathResponse, wire.FrameTypeNewConnectionID, wire.FrameTypePadding:
		return true
	}
	return false
}

// pathAllowance returns how many bytes the active path's anti-amplification
// limit lets the connection send now, or -1 for no limit.
func (p *netPath) allowance() int {
	if p.validated {
		return -1
	}
	return int(3*p.recv - min(p.sent, 3*p.recv))
}

// closingCounts reports whether a datagram of size bytes from the path
// being processed counts for the closing state's answers (RFC 9000,
// Section 10.2.1), which go to the active path. When that path is not
// validated, only its own datagrams count, and they add to its
// anti-amplification allowance: "an endpoint MUST limit the amount of
// data it sends to the unvalidated address to three times the amount of
// data received from that address" (Section 9.3.1). Without keys any
// datagram routed to the connection is attributed to it.
func (c *connState) closingCounts(size int) bool {
	p := c.activePath()
	if c.pathAllowance(p) < 0 {
		return true
	}
	if c.paths.rx != c.paths.active {
		return false
	}
	p.recv += uint64(size)
	return true
}

// closeFitsPath reports whether a CONNECTION_CLOSE datagram of size bytes
// may go to the active path, and counts it sent there if so: within the
// anti-amplification limit of a path that is not validated (RFC 9000,
// Sections 9.3.1 and 10.2.1).
func (c *connState) closeFitsPath(size int) bool {
	p := c.activePath()
	if a := c.pathAllowance(p); a >= 0 && size > a {
		return false
	}
	p.sent += uint64(size)
	return true
}
