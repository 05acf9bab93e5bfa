package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// Datagram Packetization Layer Path MTU Discovery (DPLPMTUD, RFC 8899, as
// QUIC uses it: RFC 9000, Section 14.3, and RFC 8899, Section 6.3). The
// connection starts at Config.InitialPacketSize, searches upward with
// probe packets made of PING and PADDING, raises its maximum datagram
// size each time a probe is acknowledged, and falls back to BASE_PLPMTU
// when full-size packets stop getting through (a black hole).
const (
	// pmtuBase is BASE_PLPMTU: "When using IPv4, there is no currently
	// equivalent size specified, and a default BASE_PLPMTU of 1200 bytes
	// is RECOMMENDED." (RFC 8899, Section 5.1.2); QUIC's minimum.
	pmtuBase = minInitialPacketSize
	// pmtuMaxProbes is MAX_PROBES: "The default value of MAX_PROBES is 3."
	// (RFC 8899, Section 5.1.2) A size is given up after so many lost
	// probes.
	pmtuMaxProbes = 3
	// pmtuRaiseTimer is PMTU_RAISE_TIMER: "The PMTU_RAISE_TIMER is
	// configured to the period a sender will continue to use the current
	// PLPMTU, after which it reenters the Search Phase. This timer has a
	// period of 600 seconds, as recommended by PLPMTUD [RFC4821]."
	// (RFC 8899, Section 5.1.1)
	pmtuRaiseTimer = 10 * time.Minute
	// pmtuBlackHoleBursts is how many separate bursts of lost packets
	// larger than BASE_PLPMTU, all sent after the last such packet
	// acknowledged, make the path a black hole (RFC 8899, Section 4.3).
	// Bursts, not packets: congestion drops several consecutive packets
	// at once (a full queue or socket buffer), and when only a small
	// packet sent after them is acknowledged, three lost packets of one
	// burst look like a black hole and used to end a correct search.
	pmtuBlackHoleBursts = 3
	// pmtuBlackHolePTOs: this many consecutive PTOs with full-size
	// packets in flight are a black hole too (RFC 8899, Section 4.3: "a
	// PL can detect that the path has a black hole ... when ... no
	// acknowledgment is received").
	pmtuBlackHolePTOs = 3
	// defaultMaxPacketSize is Config.MaxPacketSize's default where the
	// socket does not report datagrams too large for the interface: an
	// Ethernet MTU of 1500 less the IPv6 and UDP headers (1500 - 40 - 8).
	defaultMaxPacketSize = 1452
	// jumboMaxPacketSize is the default where it does (Linux): the
	// search finds an Ethernet MTU as before, a jumbo-frame one, or
	// loopback's 64 KiB, where fewer, larger packets halve the CPU time
	// per byte of a bulk transfer (profiles: per-packet work, from
	// header protection to acknowledgments, was half of it).
	jumboMaxPacketSize = 65527
	// pmtuProbeMarker marks the FrameRecord of a PMTU probe's PING.
	pmtuProbeMarker = 1
	// pmtuEthernet is the largest UDP payload of an Ethernet MTU (over
	// IPv4). The search goes above it only once the connection sent
	// pmtuJumboAfter bytes: a probe costs its size in sealing, copying and
	// opening, and the dozen probes up to 64 KB cost more than they save
	// on a connection that sends little (10,000 connections on loopback
	// took twice as long to establish).
	pmtuEthernet   = 1472
	pmtuJumboAfter = 4 << 20
)

// pmtuDiscovery is the search state (RFC 8899, Section 5.2).
type pmtuDiscovery struct {
	enabled       bool
	searching     bool
	probeInFlight bool // a probe of probeSize is in flight
	max           int  // largest size searched: MaxPacketSize, max_udp_payload_size
	jumboMax      int  // max above pmtuEthernet, until the connection sent pmtuJumboAfter
	lo, hi        int  // lo is known to work; hi failed (or is max+1)
	// triedMax: this search probed max already (pmtuProbeSize: the
	// first probe of a search is its ceiling).
	triedMax bool
	next     time.Time // earliest time of the next probe
	// The probe in flight.
	probeSize int
	probePN   wire.PacketNumber
	// pathFirstPN is the first packet number sent on the current path:
	// the fate of a probe sent before it (on an earlier path) says
	// nothing about this path's MTU.
	pathFirstPN wire.PacketNumber
	failures    int // lost probes of probeSize
	// Black hole detection.
	largestAckedLarge int64 // largest packet number > pmtuBase acknowledged
	lostBursts        int   // bursts of packets > pmtuBase lost since
	lastLostLarge     int64 // packet number of the latest of them
	blackHoles        int   // statistics
}

// initPMTUD starts the search from the initial size. socketMax is the
// socket layer's default ceiling (0: defaultMaxPacketSize).
func (c *connState) initPMTUD(socketMax int) {
	cfg := c.config
	d := &c.pmtud
	d.enabled = !cfg.DisablePathMTUDiscovery
	d.max = cfg.MaxPacketSize
	if d.max == 0 {
		d.max = socketMax
	}
	if d.max == 0 {
		d.max = defaultMaxPacketSize
	}
	d.max = min(max(d.max, c.maxDatagramSize), maxUDPPayloadSize)
	if d.max > pmtuEthernet && c.maxDatagramSize < pmtuEthernet {
		d.jumboMax, d.max = d.max, pmtuEthernet
	}
	d.lo, d.hi = c.maxDatagramSize, d.max+1
	d.searching = d.enabled && d.lo < d.max
	d.largestAckedLarge = -1
	c.ccw.onAcked = c.pmtuOnAcked
	c.ccw.onLost = c.pmtuOnLost
}

// pmtuOnPeerParams lowers the search's ceiling to the peer's
// max_udp_payload_size: "An endpoint ... MUST NOT send UDP datagrams
// larger than" it (RFC 9000, Section 18.2).
func (c *connState) pmtuOnPeerParams(peerMax uint64) {
	d := &c.pmtud
	if peerMax < uint64(d.max) {
		d.max = max(int(peerMax), pmtuBase)
		d.hi = min(d.hi, d.max+1)
		d.searching = d.searching && d.lo < d.max
	}
	if peerMax < uint64(d.jumboMax) {
		d.jumboMax = int(peerMax)
		if d.jumboMax <= d.max {
			d.jumboMax = 0
		}
	}
}

// pmtuOpenJumbo lets the search, done up to an Ethernet MTU, go above it
// once the connection sent enough data for larger packets to pay for the
// probes, if the path carries a full Ethernet-size datagram.
func (c *connState) pmtuOpenJumbo() {
	d := &c.pmtud
	jumbo := d.jumboMax
	d.jumboMax = 0
	if d.lo < d.max || d.hi <= d.max {
		return // a smaller MTU than Ethernet's: nothing larger fits
	}
	d.max, d.hi = jumbo, jumbo+1
	d.searching, d.next = true, time.Time{}
	d.triedMax = false // a new search: its ceiling first
}

// setMaxDatagramSize puts a new maximum datagram size in force.
func (c *connState) setMaxDatagramSize(n int) {
	c.maxDatagramSize = n
	c.ccw.SetMaxDatagramSize(n)
	c.pacer.SetMaxDatagramSize(n)
}

// pmtuDeadline returns when a probe is next due, or zero.
func (c *connState) pmtuDeadline() time.Time {
	d := &c.pmtud
	if !d.enabled || d.probeInFlight || !c.handshakeConfirmed {
		return time.Time{}
	}
	return d.next
}

// onPMTUTimer re-enters the search after PMTU_RAISE_TIMER: "the PL
// periodically probes for a larger PLPMTU" (RFC 8899, Section 5.2).
func (c *connState) onPMTUTimer(now time.Time) {
	d := &c.pmtud
	if d.enabled && !d.searching && !d.next.IsZero() && !now.Before(d.next) {
		d.hi = d.max + 1
		d.searching = d.lo < d.max
		d.triedMax = false // a new search: its ceiling first
		d.next = time.Time{}
	}
}

// pmtuProbeSize returns the size of the next probe, or 0 if none is due:
// a binary search between the largest size known to work and the
// smallest that failed.
func (c *connState) pmtuProbeSize(now time.Time) int {
	d := &c.pmtud
	if d.jumboMax > 0 && c.bytesSent >= pmtuJumboAfter && !d.probeInFlight && (!d.searching || d.hi-d.lo <= 1) {
		c.pmtuOpenJumbo()
	}
	if !d.enabled || !d.searching || d.probeInFlight || !c.handshakeConfirmed || !c.has1RTT() ||
		!c.activePath().validated || (!d.next.IsZero() && now.Before(d.next)) {
		return 0
	}
	if d.hi-d.lo <= 1 || d.lo >= 4096 && d.hi-d.lo <= d.lo/64 {
		// Search complete (RFC 8899, Section 5.2: SEARCH_COMPLETE);
		// for large sizes to within 1.5%: each probe is large.
		d.searching = false
		d.next = now.Add(pmtuRaiseTimer)
		return 0
	}
	size := (d.lo + d.hi) / 2
	if !d.triedMax && d.hi == d.max+1 {
		// The first probe of a search is its ceiling, Config.MaxPacketSize
		// or an Ethernet MTU's 1472 bytes (pmtuEthernet): most paths carry
		// it, and then this one probe ends the search, where a binary
		// search from 1252 takes eight or nine probes, each sealed, sent,
		// opened and acknowledged on both sides (10,000 idle connections
		// spent about a third of the server's protocol time on them, issue
		// 28). If it is lost, the binary search goes on below as before,
		// one probe later; one loss is no verdict on the size (MAX_PROBES,
		// pmtuOnProbeLost). "The PL is REQUIRED to choose a probe size ...
		// The search algorithm is implementation specific" (paraphrasing
		// RFC 8899, Sections 5.3 and 5.3.2, which suggests
		// "selecting step sizes from a table of common PMTU sizes").
		size = d.max
	}
	// "If a PL sender ... uses a probe packet ... it is subject to
	// congestion control" (RFC 8899, Section 4.5.1 and 3): the probe
	// waits for room in the window. A probe larger than the whole window
	// (the window of an endpoint that only acknowledges stays at its
	// initial size) goes when nothing else is in flight: "When the
	// transmission of probe packets is not controlled by the congestion
	// controller, the interval between probe packets MUST be at least
	// one RTT" (RFC 8899, Section 3), which holds with one probe at a
	// time.
	inFlight, cwnd := c.sent.BytesInFlight(), c.cc.CongestionWindow()
	if inFlight+size > cwnd && (inFlight > 0 || size <= cwnd) {
		return 0
	}
	return size
}

// appendPMTUProbe appends a probe packet of exactly size bytes: "a PING
// frame to elicit an acknowledgment ... and PADDING frames" (RFC 9000,
// Section 14.4). It carries no data, so that its loss costs nothing to
// resend, and the congestion controller never learns of its loss.
func (c *connState) appendPMTUProbe(now time.Time, b []byte, size int) []byte {
	const s = ackhandler.SpaceApplication
	d := &c.pmtud
	pn, pnLen := c.sent.NextPacketNumber(s)
	h := wire.ShortHeader{DstConnID: c.peerIDs.active(), KeyPhase: c.oneRTT.KeyPhase() == 1}
	b = h.Append(b, pn, pnLen)
	pnOff := len(b) - pnLen
	b = append(b, byte(wire.FrameTypePing))
	if need := max(size-16-len(b), pnOff+pnLen+handshake.MinPayloadLen(pnLen)-len(b)); need > 0 {
		b = append(b, make([]byte, need)...)
	}
	// Offset holds the probe's packet number (pmtuOnProbeAcked).
	c.sent.AddFrame(s, ackhandler.FrameRecord{Type: wire.FrameTypePing, Extra: pmtuProbeMarker, Offset: uint64(pn), Length: uint64(size)})
	c.ccw.ignorePacket(int64(pn))
	if size != d.probeSize {
		// failures counts the lost probes of one size: "the PL ...
		// determines that the probed size is not supported" (RFC 8899,
		// Section 5.2) after MAX_PROBES of its own, not after a lost
		// ceiling probe and two of the next size's
		// (TestSimPathMTUCeilingLossNotCountedForNextSize).
		d.failures = 0
	}
	d.probeSize, d.probePN, d.probeInFlight = size, pn, true
	if size == d.max {
		d.triedMax = true
	}
	return c.sealPacket(now, b, 0, pnOff, pnLen, pn, s, wire.PacketType1RTT, true, true)
}

// pmtuOnProbeAcked raises the maximum datagram size to a probe's size
// (RFC 8899, Section 5.2: a probe acknowledged confirms the size) if the
// probe (packet number pn) was sent on the current path: a probe confirms
// the size it "successfully sent across the path" (RFC 8899, Section
// 5.3.1), and a new path's MTU is unknown (pmtuOnNewPath)
// (TestSimPathMTUOldPathProbeAckAfterMigration).
func (c *connState) pmtuOnProbeAcked(size int, pn wire.PacketNumber) {
	d := &c.pmtud
	if pn < d.pathFirstPN {
		return
	}
	d.probeInFlight, d.failures = false, 0
	if size <= d.lo {
		return
	}
	d.lo = size
	if d.hi <= size {
		d.hi = d.max + 1
	}
	if size > c.maxDatagramSize {
		c.setMaxDatagramSize(size)
	}
}

// pmtuOnProbeLost counts a lost probe; after MAX_PROBES losses the size
// is too big: "If the number of probes sent ... reaches MAX_PROBES, the
// PL ... determines that the probed size is not supported" (RFC 8899,
// Section 5.2).
func (c *connState) pmtuOnProbeLost(size int, pn wire.PacketNumber) {
	d := &c.pmtud
	if size != d.probeSize || pn < d.pathFirstPN {
		// An earlier probe, refused by the socket (handleSendTooBig), or
		// one sent on an earlier path.
		return
	}
	d.probeInFlight = false
	d.failures++
	if d.failures >= pmtuMaxProbes {
		d.failures = 0
		d.hi = min(d.hi, size)
	}
}

// handleSendTooBig learns that the local network stack refused a
// datagram of size bytes as larger than the interface's MTU. MAX_PLPMTU
// "has to be less than or equal to the maximum size of the PL packet that
// can be sent on the outgoing interface (constrained by the local
// interface MTU)" (RFC 8899, Section 5.1.2): a refused probe ends the
// search at once below its size, without the losses that tell the same of
// a size the network drops. A refused datagram of the size in force means
// the interface changed: as for a black hole, the search starts again.
func (c *connState) handleSendTooBig(now time.Time, size int) {
	d := &c.pmtud
	if !d.enabled {
		return
	}
	if size <= c.maxDatagramSize {
		if c.maxDatagramSize > pmtuBase {
			c.pmtuBlackHole()
		}
		return
	}
	d.hi = min(d.hi, size)
	if d.probeInFlight && size == d.probeSize {
		d.probeInFlight, d.failures, d.probeSize = false, 0, 0
		// It never left: it must not hold the congestion window until
		// declared lost. Abandoned, it is neither acknowledged nor lost:
		// the controller's wrapper forgets it here.
		c.ccw.take(int64(d.probePN))
		c.sent.Abandon(now, ackhandler.SpaceApplication, d.probePN)
	}
}

// pmtuOnAcked and pmtuOnLost watch the packets larger than BASE_PLPMTU:
// when several bursts of them, sent after the last one acknowledged, are
// lost, the path no longer carries them (a black hole). Congestion losses
// do not look like this, as large packets sent after them get through.
func (c *connState) pmtuOnAcked(pn int64, bytes int) {
	d := &c.pmtud
	if bytes > pmtuBase && pn > d.largestAckedLarge {
		d.largestAckedLarge = pn
		d.lostBursts = 0
	}
}

func (c *connState) pmtuOnLost(pn int64, bytes int) {
	d := &c.pmtud
	if !d.enabled || bytes <= pmtuBase || bytes > c.maxDatagramSize || pn <= d.largestAckedLarge {
		// Small packets, packets from before a fallback, and packets sent
		// before a large one got through say nothing about the MTU.
		return
	}
	// A loss right after the previous one (packet numbers skipped for
	// the optimistic-ACK defence aside) continues its burst.
	newBurst := d.lostBursts == 0 || pn > d.lastLostLarge+2
	d.lastLostLarge = pn
	if !newBurst {
		return
	}
	d.lostBursts++
	if d.lostBursts >= pmtuBlackHoleBursts {
		c.pmtuBlackHole()
	}
}

// pmtuOnPTO treats pmtuBlackHolePTOs consecutive PTOs as a black hole
// when the connection sends packets larger than BASE_PLPMTU: with every
// full-size packet lost, nothing is acknowledged and loss detection
// alone would never see it.
func (c *connState) pmtuOnPTO() {
	if c.pmtud.enabled && c.handshakeConfirmed && c.sent.PTOCount() >= pmtuBlackHolePTOs && c.maxDatagramSize > pmtuBase {
		c.pmtuBlackHole()
	}
}

// pmtuBlackHole falls back to BASE_PLPMTU and searches again: "Black hole
// detection is triggered ... the PL ... sets the PLPMTU to the
// BASE_PLPMTU" (RFC 8899, Section 5.2, BASE state). Probes are lost
// anyway (their losses are ignored), so nothing else needs cleaning.
func (c *connState) pmtuBlackHole() {
	d := &c.pmtud
	failed := c.maxDatagramSize
	d.blackHoles++
	d.lostBursts = 0
	d.lo, d.hi = pmtuBase, failed
	d.failures, d.next = 0, time.Time{}
	d.searching = d.lo < d.hi-1
	d.triedMax = false // a new search: its ceiling first
	c.setMaxDatagramSize(pmtuBase)
}

// pmtuOnNewPath restarts discovery on a new path, whose MTU is unknown,
// from the initial size.
func (c *connState) pmtuOnNewPath() {
	d := &c.pmtud
	size := min(c.config.InitialPacketSize, d.max)
	d.lo, d.hi = size, d.max+1
	d.searching = d.enabled && d.lo < d.max
	d.triedMax = false // a new search: its ceiling first
	d.probeInFlight, d.failures, d.next, d.lostBursts = false, 0, time.Time{}, 0
	d.largestAckedLarge = int64(c.sent.LargestAcked(ackhandler.SpaceApplication))
	d.pathFirstPN, _ = c.sent.NextPacketNumber(ackhandler.SpaceApplication)
	c.setMaxDatagramSize(size)
}
