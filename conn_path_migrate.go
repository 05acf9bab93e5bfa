package quic

import (
	"errors"
	"time"

	"github.com/quicstack/quic/wire"
)

// Errors of connection migration (RFC 9000, Section 9).
var (
	// ErrMigrationDisabled is returned when the peer sent the
	// disable_active_migration transport parameter: "If the peer sent the
	// disable_active_migration transport parameter, an endpoint also MUST
	// NOT send packets (including probing packets; see Section 9.1) from
	// a different local address to the address the peer used during the
	// handshake" (RFC 9000, Section 9).
	ErrMigrationDisabled = errors.New("quic: the peer disabled active migration")
	// ErrNoConnectionID is returned when the peer provided no unused
	// connection ID for a new path: "different connection IDs are used
	// when sending from different local addresses" (RFC 9000,
	// Section 9.5).
	ErrNoConnectionID = errors.New("quic: no unused connection ID from the peer for a new path")
	// ErrPathValidation is returned when a new path did not validate: no
	// PATH_RESPONSE came back in time (RFC 9000, Section 8.2.4).
	ErrPathValidation = errors.New("quic: path validation failed")
)

// probePath starts probing a new path from the client (RFC 9000,
// Section 9.1): "An endpoint MAY probe for peer reachability from a new
// local address using path validation (Section 8.2) prior to migrating
// the connection to the new local address." The path uses a connection ID
// of the peer's that no other path used. When validation ends, done (if
// set) learns the outcome; with autoSwitch the connection then moves to
// the path. preferred marks a probe of the server's preferred address,
// which disable_active_migration does not forbid.
func (c *connState) probePath(now time.Time, addrs pathAddrs, preferred, autoSwitch bool, done func(ok bool)) error {
	switch {
	case c.role != wire.RoleClient:
		return errors.New("quic: only clients migrate connections")
	case c.closeState != stateActive:
		return errClosed
	case !c.handshakeConfirmed:
		// "An endpoint MUST NOT initiate connection migration before the
		// handshake is confirmed" (RFC 9000, Section 9)
		return errors.New("quic: migration before the handshake is confirmed")
	case !addrs.remote.IsValid():
		return errors.New("quic: path without a remote address")
	case !preferred && c.peerParams != nil && c.peerParams.DisableActiveMigration:
		return ErrMigrationDisabled
	}
	if i := c.paths.find(addrs); i >= 0 {
		if i == c.paths.active {
			return errors.New("quic: already on that path")
		}
		return errors.New("quic: path already being probed")
	}
	seq, _, ok := c.peerIDs.reserve()
	if !ok {
		return ErrNoConnectionID
	}
	i := c.addPath(netPath{addrs: addrs, dcidSeq: seq, hasDCID: true, onValidated: done, switchOnValidation: autoSwitch, lastRecv: now})
	if i < 0 {
		c.peerIDs.retire(seq)
		return errors.New("quic: too many paths")
	}
	c.startValidation(now, &c.paths.list[i])
	return nil
}

// switchPath moves the client to the validated path addrs: "An endpoint
// can migrate a connection to a new local address by sending packets
// containing non-probing frames from that address." (RFC 9000,
// Section 9.2) The old path is left and its connection ID retired
// (Section 9.5).
func (c *connState) switchPath(now time.Time, addrs pathAddrs) error {
	i := c.paths.find(addrs)
	switch {
	case i < 0:
		return errors.New("quic: unknown path")
	case i == c.paths.active:
		return nil
	case !c.paths.list[i].validated:
		return errors.New("quic: path not validated")
	}
	old := c.paths.active
	c.migrateTo(now, i)
	if c.paths.fallback == old {
		c.paths.fallback = -1
	}
	c.dropPath(old)
	return nil
}

// offerPreferredAddress, on a server, puts the preferred address in its
// transport parameters with the connection ID of sequence number 1
// (RFC 9000, Section 9.6.1): routed, if set, which the endpoint routes
// already, or one it generates. It does nothing with zero-length
// connection IDs, which allow no preferred address (Section 18.2).
func (c *connState) offerPreferredAddress(tp *wire.TransportParameters, pa *wire.PreferredAddress, routed wire.ConnectionID) {
	if pa == nil || (!pa.IPv4.IsValid() && !pa.IPv6.IsValid()) {
		return
	}
	cid, token, err := c.localIDs.issuePreferredAddress(routed)
	if err != nil {
		return
	}
	tp.PreferredAddress = wire.PreferredAddress{IPv4: pa.IPv4, IPv6: pa.IPv6, ConnectionID: cid, StatelessResetToken: token}
	tp.HasPreferredAddress = true
}

// migrateToPreferredAddress, on a client whose handshake is confirmed,
// probes the server's preferred address and moves there once it is
// validated: "Once the handshake is confirmed, the client SHOULD select
// one of the two addresses provided by the server and initiate path
// validation (see Section 8.2). ... If path validation succeeds, the
// client SHOULD immediately begin sending all future packets to the new
// server address using the new connection ID and discontinue use of the
// old server address. If path validation fails, the client MUST continue
// sending all future packets to the server's original IP address."
// (RFC 9000, Section 9.6.1) The address of the family in use is preferred.
func (c *connState) migrateToPreferredAddress(now time.Time) {
	p := c.peerParams
	if c.role != wire.RoleClient || p == nil || !p.HasPreferredAddress || c.config.DisablePreferredAddress {
		return
	}
	cur := c.activePath().addrs
	target := p.PreferredAddress.IPv4
	if cur.remote.Addr().Is6() && !cur.remote.Addr().Is4In6() && p.PreferredAddress.IPv6.IsValid() || !target.IsValid() {
		target = p.PreferredAddress.IPv6
	}
	if !target.IsValid() || target == cur.remote {
		return
	}
	c.probePath(now, pathAddrs{local: cur.local, remote: target}, true, true, nil)
}
