package quic

import "slices"

// Connection IDs per network path. "An endpoint MUST NOT reuse a
// connection ID when sending to more than one destination address" and
// "Similarly, an endpoint MUST NOT reuse a connection ID when sending from
// more than one local address" (RFC 9000, Section 9.5): each path a
// connection sends on holds one of the peer's IDs, by sequence number. The
// active path's is peerConnIDs.cur.

// reserve marks the oldest unused active ID used and returns its sequence
// number, for a new path. With zero-length IDs it returns the one in use
// ("an endpoint that uses zero-length connection IDs ... cannot change
// them"). ok is false if the peer provided no unused ID.
func (s *peerConnIDs) reserve() (seq uint64, cid ConnectionID, ok bool) {
	if s.zeroLen {
		return s.curSeq, s.cur, true
	}
	for i := range s.ids {
		if !s.ids[i].used {
			s.ids[i].used = true
			return s.ids[i].seq, s.ids[i].cid, true
		}
	}
	return 0, ConnectionID{}, false
}

// bySeq returns the active ID with sequence number seq, if it is still
// active (the peer may have retired it with Retire Prior To).
func (s *peerConnIDs) bySeq(seq uint64) (ConnectionID, bool) {
	i, ok := s.findSeq(seq)
	if !ok {
		return ConnectionID{}, false
	}
	return s.ids[i].cid, true
}

// setCurrent makes the active ID seq the one in use, without retiring the
// previous one (a path may still use it). It reports false if seq is not
// active.
func (s *peerConnIDs) setCurrent(seq uint64) bool {
	i, ok := s.findSeq(seq)
	if !ok {
		return false
	}
	s.switchTo(i)
	return true
}

// retire stops using the active ID seq, which must not be the one in use,
// and queues its RETIRE_CONNECTION_ID frame: "When the endpoint wishes to
// remove a connection ID from use, it sends a RETIRE_CONNECTION_ID frame
// to its peer." (RFC 9000, Section 5.1.2). It keeps the ID (reporting
// false) when the bound on pending retirements is reached: "An endpoint
// MUST NOT forget a connection ID without retiring it".
func (s *peerConnIDs) retire(seq uint64) bool {
	if s.zeroLen || seq == s.curSeq {
		return false
	}
	i, ok := s.findSeq(seq)
	if !ok || uint64(len(s.retiring)) >= s.limit {
		return false
	}
	if seq >= s.doneBelow && uint64(len(s.retiredAbove)) >= s.limit {
		return false
	}
	s.retiring = append(s.retiring, connIDRetireEntry{seq: seq, cid: s.ids[i].cid})
	s.ids = slices.Delete(s.ids, i, i+1)
	if seq >= s.doneBelow {
		j, _ := slices.BinarySearch(s.retiredAbove, seq)
		s.retiredAbove = slices.Insert(s.retiredAbove, j, seq)
	}
	s.advanceDone()
	return true
}

// releasePathConnIDs makes the paths that are not active let go of peer
// IDs that are retired or that the active path now uses (after the peer
// raised Retire Prior To); pathDCID gives them an unused one when they
// next send, or they wait for one: "An endpoint MUST NOT reuse a
// connection ID when sending to more than one destination address"
// (RFC 9000, Section 9.5).
func (c *connState) releasePathConnIDs() {
	for i := range c.paths.list {
		p := &c.paths.list[i]
		if i == c.paths.active || !p.inUse || !p.hasDCID {
			continue
		}
		if _, ok := c.peerIDs.bySeq(p.dcidSeq); !ok || p.dcidSeq == c.peerIDs.curSeq {
			p.hasDCID = false
		}
	}
}
