package quic

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"
)

// Connection migration at the level of Conn and Transport.
//
// A connection reads from every Transport whose connection-ID table routes
// its IDs to it: the Transport it was dialed or accepted on (Conn.t), and
// the extra Transports of Conn.extra, added by Migrate on a client and by
// Listener.SetPreferredAddress on a server. Every ID the connection issues
// is added to (and removed from) the tables of all of them (Conn.routeConnIDs),
// so that a packet for the connection is routed wherever it arrives. Each
// datagram carries the local address of the Transport that read it and
// the peer's address (inboundDatagram.addrs); the state machine tells,
// for each datagram it sends, the path to send it on, and the connection
// writes it with the Transport whose local address is the path's.
//
// Conn.t stays the connection's home: its closing closes the connection.
// The extra Transports must stay open as long as the connection uses them.

// migrateRequest asks the connection's goroutine to probe the path from
// the local address of t and move there once validated.
type migrateRequest struct {
	t    *Transport
	done chan error // buffered: the goroutine never waits on it
}

// Migrate moves a client connection to the local socket of t, for example
// when a device moves from one network to another: it probes the path
// from t's address to the server with PATH_CHALLENGE (RFC 9000,
// Section 9.1), and once the server's PATH_RESPONSE validated it, sends
// everything from t using a connection ID of the server's not used
// before, and retires the old one (Section 9.5). It returns when the
// connection moved, with ErrPathValidation if the path did not validate
// (the connection then stays where it was), with ErrMigrationDisabled if
// the server sent disable_active_migration, or when ctx is done (the
// probe goes on and the connection still moves if it succeeds).
//
// t must be ready to use (its Conn set) and use connection IDs of the same
// length as the connection's Transport; it needs no listener. It reads the
// connection's packets from now on and must stay open while the
// connection lives. The connection's original Transport must stay open
// too: closing it closes the connection. t takes the stateless reset key
// of the connection's Transport, so that the resets it sends for the
// connection's IDs carry their tokens (RFC 9000, Section 10.3.2); Migrate
// fails if t has another StatelessResetKey or already used its own (it
// made connections or sent resets).
func (c *Conn) Migrate(ctx context.Context, t *Transport) error {
	if err := t.init(); err != nil {
		return err
	}
	if t.ConnectionIDGenerator.ConnectionIDLen() != c.t.ConnectionIDGenerator.ConnectionIDLen() {
		return errors.New("quic: the new Transport's connection IDs have another length")
	}
	if err := t.shareResetKey(c.t); err != nil {
		return err
	}
	r := migrateRequest{t: t, done: make(chan error, 1)}
	c.request(nil, &r)
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return context.Cause(c.ctx)
	}
}

// startMigration runs on the connection's goroutine.
func (c *Conn) startMigration(now time.Time, r migrateRequest) {
	st := c.state
	c.addTransport(r.t)
	addrs := pathAddrs{local: r.t.localAddrPort(), remote: st.activePath().addrs.remote}
	err := st.probePath(now, addrs, false, true, func(ok bool) {
		if ok {
			r.done <- nil
		} else {
			r.done <- ErrPathValidation
		}
	})
	if err != nil {
		r.done <- err
	}
}

// addTransport makes t route the connection's IDs to it. It runs on the
// connection's goroutine, or before it starts.
func (c *Conn) addTransport(t *Transport) {
	if t == c.t {
		return
	}
	for _, x := range c.extra {
		if x == t {
			return
		}
	}
	c.extra = append(c.extra, t)
	if c.state != nil {
		c.state.localIDs.each(func(cid ConnectionID) { t.ep.routes.add(cid, c) })
	}
	t.ep.resetTokens.update(c, nil, c.resetTokens)
}

// each calls f for every issued ID the peer has not retired and the
// endpoint routes (not those whose issue event waits for its answer).
func (s *localConnIDs) each(f func(ConnectionID)) {
	for _, e := range s.ids {
		if e.cid.Len() > 0 && e.state != connIDLocalUnrouted {
			f(e.cid)
		}
	}
}

// transportFor returns the Transport whose local address is local.
func (c *Conn) transportFor(local netip.AddrPort) *Transport {
	if !local.IsValid() || localMatches(c.t.localAddrPort(), local) {
		return c.t
	}
	for _, t := range c.extra {
		if localMatches(t.localAddrPort(), local) {
			return t
		}
	}
	return c.t
}

// publishPath updates the addresses LocalAddr and RemoteAddr report after
// the connection moved.
func (c *Conn) publishPath() {
	st := c.state
	p := st.activePath()
	if p.addrs == c.publishedPath && p.validated == c.publishedOK {
		return
	}
	c.publishedPath, c.publishedOK = p.addrs, p.validated
	t := c.transportFor(p.addrs.local)
	c.mu.Lock()
	c.local = t.Conn.LocalAddr()
	if p.addrs.remote.IsValid() {
		c.remote = net.UDPAddrFromAddrPort(p.addrs.remote)
	}
	c.mu.Unlock()
}

// localAddrPort returns the Transport's local address, as paths know it.
func (t *Transport) localAddrPort() netip.AddrPort {
	return unmappedAddrPort(t.Conn.LocalAddr())
}

// pathAddrsFor returns the path of a datagram from addr read by t.
func (t *Transport) pathAddrsFor(addr net.Addr) pathAddrs {
	return pathAddrs{local: t.localAddr, remote: unmappedAddrPort(addr)}
}

// unmappedAddrPort returns addr as a netip.AddrPort with IPv4-mapped IPv6
// addresses as IPv4 and the zone of a link-local address as its
// interface index, or the zero AddrPort if addr is nil or not an IP
// address and port.
func unmappedAddrPort(addr net.Addr) netip.AddrPort {
	if addr == nil {
		return netip.AddrPort{}
	}
	ap, ok := addrPortOf(addr)
	if !ok {
		return netip.AddrPort{}
	}
	return numericZone(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
}

// localMatches reports whether two local addresses can be the same
// socket's: same port, and the same IP unless either is unknown or a
// wildcard (a socket on 0.0.0.0 receives on all the host's addresses).
func localMatches(a, b netip.AddrPort) bool {
	if !a.IsValid() || !b.IsValid() {
		return true
	}
	if a.Port() != b.Port() {
		return false
	}
	return a.Addr().IsUnspecified() || b.Addr().IsUnspecified() || a.Addr().Unmap() == b.Addr().Unmap()
}
