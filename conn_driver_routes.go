package quic

import "time"

// routeConnIDs hands the routing changes the connection queued
// (connIDEvent: IDs issued and retired) to the endpoints of its
// Transports, which own the routing tables, and gives the connection the
// answers: an issued ID in use elsewhere makes it pick another. The
// connection's home Transport decides; its other Transports (Conn.extra)
// follow. It runs on the connection's goroutine before the connection is
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
		routed := c.t.ep.handleConnIDEvent(c, ev)
		if routed {
			for _, t := range c.extra {
				t.ep.handleConnIDEvent(c, ev)
			}
		}
		if ev.retire {
			continue
		}
		if err := st.localIDs.onRouted(ev.seq, ev.cid, routed); err != nil {
			st.closeWithError(now, err)
		}
	}
}
