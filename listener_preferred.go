package quic

import (
	"errors"

	"github.com/quicstack/quic/wire"
)

// listenerPreferred is what Listener.SetPreferredAddress configured.
type listenerPreferred struct {
	addr       wire.PreferredAddress // without connection ID and token
	transports []*Transport
}

// SetPreferredAddress makes the listener offer a preferred address to the
// connections it accepts from now on (RFC 9000, Section 9.6): the local
// address of t4 as the IPv4 one and that of t6 as the IPv6 one; either
// may be nil. Clients move their connections there once the handshake is
// confirmed, after validating the new path (Config.DisablePreferredAddress
// turns this off on a client).
//
// t4 and t6 are Transports on sockets bound to a specific address and
// port (not a wildcard address), that use connection IDs of the
// listener's Transport's length and need no listener of their own: they
// route the packets of the listener's connections to them, and the
// connections answer through them. They must stay open while those
// connections live. They take the stateless reset key of the listener's
// Transport, so that the resets they send carry the tokens of its
// connections (RFC 9000, Section 10.3.2); SetPreferredAddress fails if
// one has another StatelessResetKey or already used its own.
func (l *Listener) SetPreferredAddress(t4, t6 *Transport) error {
	p := &listenerPreferred{}
	for _, t := range []*Transport{t4, t6} {
		if t == nil {
			continue
		}
		if err := t.init(); err != nil {
			return err
		}
		if t.ConnectionIDGenerator.ConnectionIDLen() != l.t.ConnectionIDGenerator.ConnectionIDLen() {
			return errors.New("quic: preferred address Transport with connection IDs of another length")
		}
		if err := t.shareResetKey(l.t); err != nil {
			return err
		}
		ap := t.localAddrPort()
		if ap.Addr().IsUnspecified() || ap.Port() == 0 {
			return errors.New("quic: preferred address on a wildcard address")
		}
		if t == t4 {
			if !ap.Addr().Is4() {
				return errors.New("quic: IPv4 preferred address Transport is not on an IPv4 address")
			}
			p.addr.IPv4 = ap
		} else {
			if !ap.Addr().Is6() {
				return errors.New("quic: IPv6 preferred address Transport is not on an IPv6 address")
			}
			p.addr.IPv6 = ap
		}
		p.transports = append(p.transports, t)
	}
	if len(p.transports) == 0 {
		l.preferred.Store(nil)
		return nil
	}
	if l.t.ConnectionIDGenerator.ConnectionIDLen() == 0 {
		// "A server that chooses a zero-length connection ID MUST NOT
		// provide a preferred address." (RFC 9000, Section 18.2)
		return errors.New("quic: no preferred address with zero-length connection IDs")
	}
	l.preferred.Store(p)
	return nil
}

// applyPreferred sets up a new connection for the preferred address, if
// one is configured: its parameters offer it with a connection ID the
// endpoint routes (sequence number 1, RFC 9000, Section 5.1.1), and its
// IDs are routed by the preferred address Transports too (Conn.start).
func (l *Listener) applyPreferred(c *Conn, cp *connParams) error {
	p := l.preferred.Load()
	if p == nil {
		return nil
	}
	pa := p.addr
	cp.preferredAddress = &pa
	if l.t.ConnectionIDGenerator.ConnectionIDLen() > 0 {
		cid, err := l.t.ep.newConnID(c)
		if err != nil {
			return err
		}
		cp.preferredConnID = cid
	}
	for _, t := range p.transports {
		c.addTransport(t)
	}
	return nil
}
