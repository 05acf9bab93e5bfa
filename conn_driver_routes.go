package quic

import "time"

// routeConnIDs hands the routing changes the connection queued
// (connIDEvent: IDs issued and retired) to the endpoints of its
// Transports, which own the routing tables, and gives the connection the
// answers: an issued ID in use elsewhere makes it pick another. An
// issued ID must be free in every one of the connection's Transports (its
// home and Conn.extra), since its packets may arrive on any of their
// sockets (routeConnIDEvent). It runs on the connection's goroutine before the connection is
// polled for datagrams (Conn.flush, Conn.start), so that every ID is
// routed before a NEW_CONNECTION_ID frame can carry it to the peer
// (RFC 9000, Section 5.1.1), and when the connection is gone (Conn.finish).
// It allocates nothing.
func (c *Conn) routeConnIDs(now time.Time) {
	st := c.state
	st.issueDueConnIDs(now)
	for {
		ev, ok := st.localIDs.pollEvent()
		if !ok {
			return
		}
		routed := routeConnIDEvent(c, &c.t.ep, c.extra, ev)
		if ev.retire {
			continue
		}
		if err := st.localIDs.onRouted(ev.seq, ev.cid, routed); err != nil {
			st.closeWithError(now, err)
		}
	}
}

// routeConnIDEvent applies ev to home and to the endpoints of extra. An
// issued ID is routed only if all of them accept it; if one refuses (it
// routes the ID to another connection), the others stop routing it again
// and the answer is false, so that the connection picks another ID
// instead of sending one whose packets would reach the other connection
// on that socket (hostile review of issue 24).
func routeConnIDEvent(c *Conn, home *endpoint, extra []*Transport, ev connIDEvent) bool {
	if !home.handleConnIDEvent(c, ev) {
		return false
	}
	for i, t := range extra {
		if t.ep.handleConnIDEvent(c, ev) {
			continue
		}
		undo := ev
		undo.retire = true
		home.handleConnIDEvent(c, undo)
		for _, u := range extra[:i] {
			u.ep.handleConnIDEvent(c, undo)
		}
		return false
	}
	return true
}
