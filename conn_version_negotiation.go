package quic

import (
	"slices"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// Compatible version negotiation (RFC 9368) between QUIC versions 1 and 2,
// which are compatible with each other in both directions (RFC 9369,
// Section 4):
//
//   - The client sends its first flight in Config.Versions[0] and lists in
//     version_information every version of Config.Versions it supports
//     (its Available Versions).
//   - The server, on the client's transport parameters, picks the newest
//     version that both its own Config.Versions lists and the client
//     offered (version 2 over version 1): it upgrades a client that starts
//     in version 1 and offers version 2, as the interop runner's v2 case
//     expects, but never to a version the client did not offer, and never
//     downgrades. It then sends everything from its first Initial on in
//     that version, with Initial keys of that version.
//   - The client learns the negotiated version from the first server
//     Initial packet in another version that it offered and that
//     decrypts, and switches to it.
//   - Both check the other's version_information (RFC 9368, Section 4):
//     the client's Chosen Version must be the version of its first
//     flight, the server's Chosen Version must be the negotiated one and
//     one the client offered.
//
// 0-RTT stays in the first version on both sides (RFC 9369, Section 4.1).

// versionCompatible reports whether a first flight of version from can be
// converted to version to.
func versionCompatible(from, to wire.Version) bool {
	return from.IsSupported() && to.IsSupported()
}

// versionRank orders the versions a server negotiates to: newer first.
func versionRank(v wire.Version) int {
	switch v {
	case wire.Version2:
		return 2
	case wire.Version1:
		return 1
	}
	return 0
}

// availableVersions returns the versions of the Config this endpoint
// supports, in the Config's order of preference.
func (c *connState) availableVersions() []wire.Version {
	vs := make([]wire.Version, 0, len(c.config.Versions))
	for _, v := range c.config.Versions {
		if v.IsSupported() && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs
}

// versionInformation returns the version_information this endpoint sends
// with chosen as its Chosen Version (RFC 9368, Section 3). A client's
// Available Versions are the versions its first flight converts to,
// starting with chosen; a server's are the versions it accepts.
func (c *connState) versionInformation(chosen wire.Version) wire.VersionInformation {
	vs := c.availableVersions()
	if c.role == wire.RoleClient {
		var offer []wire.Version
		offer = append(offer, chosen)
		for _, v := range vs {
			if v != chosen && versionCompatible(chosen, v) {
				offer = append(offer, v)
			}
		}
		vs = offer
	}
	return wire.VersionInformation{ChosenVersion: chosen, AvailableVersions: vs}
}

// negotiateVersion checks the peer's version_information and, on a
// server, picks the negotiated version (RFC 9368, Sections 2.3 and 4).
func (c *connState) negotiateVersion(p *wire.TransportParameters) error {
	if c.role == wire.RoleServer {
		return c.serverNegotiateVersion(p)
	}
	if !p.HasVersionInformation {
		// "Clients MUST NOT complete the handshake if they are reacting to
		// a Version Negotiation packet and the Version Information is
		// missing, but MAY do so otherwise." This client never reacts to
		// Version Negotiation; but a switch of version it did not hear
		// confirmed in the handshake transcript is refused.
		if c.version != c.firstVersion {
			return versionNegotiationError("server switched version without version_information")
		}
		return nil
	}
	chosen := p.VersionInformation.ChosenVersion
	// "If a client receives Version Information where the server's Chosen
	// Version was not sent by the client as part of its Available
	// Versions, the client MUST close the connection with a version
	// negotiation error." ... "clients MUST validate that the server's
	// Chosen Version is equal to the Negotiated Version" (Section 4).
	if !slices.Contains(c.params.VersionInformation.AvailableVersions, chosen) {
		return versionNegotiationError("server chose a version the client did not offer")
	}
	if chosen != c.version {
		return versionNegotiationError("server's chosen version differs from the negotiated version")
	}
	return nil
}

// serverNegotiateVersion checks the client's version_information and
// switches to the negotiated version.
func (c *connState) serverNegotiateVersion(p *wire.TransportParameters) error {
	if !p.HasVersionInformation {
		// "Servers MAY complete the handshake even if the Version
		// Information is missing." (RFC 9368, Section 4)
		return nil
	}
	vi := p.VersionInformation
	// "When the server then processes the client's Version Information,
	// the server MUST validate that the client's Chosen Version matches
	// the version in use for the connection. If the two differ, the
	// server MUST close the connection with a version negotiation error."
	if vi.ChosenVersion != c.firstVersion {
		return versionNegotiationError("client's chosen version differs from the version of its first flight")
	}
	// "the server MUST select one of these versions that it (1) supports
	// and (2) knows the client's Chosen Version is compatible with"
	// (Section 2.3), here the newest.
	negotiated := c.firstVersion
	for _, v := range c.availableVersions() {
		if slices.Contains(vi.AvailableVersions, v) && versionCompatible(c.firstVersion, v) && versionRank(v) > versionRank(negotiated) {
			negotiated = v
		}
	}
	if negotiated != c.version {
		c.switchVersion(negotiated, nil)
	}
	c.params.VersionInformation = c.versionInformation(c.version)
	c.tls.SetParams(*c.params)
	return nil
}

// switchVersion moves the connection to version v after compatible version
// negotiation: Initial packets are sent with v's keys, and those of the
// first version are still read until the Initial space is discarded. "The
// server MUST NOT discard its original version Initial receive keys until
// it successfully processes a Handshake packet with the negotiated
// version." (RFC 9369, Section 4.1) open, if not nil, is the Initial
// read key of v, already derived (a client's, from openerForVersion).
func (c *connState) switchVersion(v wire.Version, open *handshake.Opener) {
	sp := &c.spaces[ackhandler.SpaceInitial]
	c.firstInitialOpen = sp.open
	c.version = v
	seal, o := handshake.NewInitialKeys(v, c.initialKeyConnID.Bytes(), c.role == wire.RoleClient)
	if open == nil {
		open = o
	}
	sp.seal, sp.open = seal, open
}

// openerForVersion returns the opener for a long-header packet of type typ
// whose version differs from c.version, or nil to drop it. On a client,
// learn is set when a successful decryption of the packet with the
// returned opener is to switch the connection to that version; keep is
// set for a Handshake packet of a version the client offered and may yet
// learn (it overtook the server's Initial), to be kept until then.
func (c *connState) openerForVersion(typ wire.PacketType, v wire.Version) (open *handshake.Opener, learn, keep bool) {
	if v == c.firstVersion {
		switch typ {
		case wire.PacketTypeInitial:
			return c.firstInitialOpen, false, false // nil before a switch
		case wire.PacketType0RTT:
			return c.zeroRTTOpen, false, false
		}
		return nil, false, false
	}
	// "The client learns the negotiated version by observing the first
	// long header Version field that differs from the original version."
	// (RFC 9369, Section 4.1) Only an Initial can teach it (its keys are
	// the only ones a client can derive for the new version), only once,
	// and only a version it offered.
	if c.role != wire.RoleClient || c.version != c.firstVersion || c.offeredVersion != 0 || c.params == nil ||
		!slices.Contains(c.params.VersionInformation.AvailableVersions, v) {
		return nil, false, false
	}
	switch typ {
	case wire.PacketTypeInitial:
		_, open = handshake.NewInitialKeys(v, c.initialKeyConnID.Bytes(), true)
		return open, true, false
	case wire.PacketTypeHandshake:
		return nil, false, true
	}
	return nil, false, false
}

func versionNegotiationError(reason string) error {
	return &wire.TransportError{Code: wire.VersionNegotiationError, Reason: reason}
}
