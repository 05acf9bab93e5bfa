package quic

// Path validation (RFC 9000, Section 8.2): PATH_CHALLENGE out, the
// matching PATH_RESPONSE back, within three PTOs (Section 8.2.4), and
// what follows either way; and the NEW_TOKEN a server sends for a client
// address it validated after a migration (Section 9.3). The path table,
// the datagrams' paths and migration are in conn_path.go; probing and
// switching on demand in conn_path_migrate.go.

import (
	"crypto/rand"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// startValidation sends PATH_CHALLENGE frames on p until a PATH_RESPONSE
// echoes one or the validation timer fires: "Endpoints SHOULD abandon
// path validation based on a timer. ... A value of three times the larger
// of the current PTO or the PTO for the new path (using kInitialRtt ...)
// is RECOMMENDED." (RFC 9000, Section 8.2.4)
func (c *connState) startValidation(now time.Time, p *netPath) {
	p.validating = true
	p.nChallenges = 0
	p.challengeToSend = true
	p.nextChallenge = time.Time{}
	initialPTO := congestion.InitialRTT + 4*(congestion.InitialRTT/2) + c.rtt.MaxAckDelay()
	p.abandonAt = now.Add(3 * max(c.rtt.PTO(true), initialPTO))
}

// pathDeadline returns the earliest path timer.
func (c *connState) pathDeadline() time.Time {
	var d time.Time
	for i := range c.paths.list {
		p := &c.paths.list[i]
		if !p.inUse || !p.validating {
			continue
		}
		for _, t := range [...]time.Time{p.nextChallenge, p.abandonAt} {
			if !t.IsZero() && (d.IsZero() || t.Before(d)) {
				d = t
			}
		}
	}
	return d
}

// onPathTimers sends challenges again and fails validations whose time is
// up.
func (c *connState) onPathTimers(now time.Time) {
	for i := range c.paths.list {
		p := &c.paths.list[i]
		if !p.inUse || !p.validating {
			continue
		}
		if !now.Before(p.abandonAt) {
			c.failValidation(now, i)
			continue
		}
		if !p.nextChallenge.IsZero() && !now.Before(p.nextChallenge) {
			p.challengeToSend = p.nChallenges < maxPathChallenges
			p.nextChallenge = time.Time{}
		}
	}
}

// newChallenge returns the data of a new PATH_CHALLENGE to send on p and
// schedules the next one: "An endpoint SHOULD NOT probe a new path with
// packets containing a PATH_CHALLENGE frame more frequently than it would
// send an Initial packet" (RFC 9000, Section 8.2.1): the interval is the
// PTO, doubled for each challenge, as for Initial packets.
func (c *connState) newChallenge(now time.Time, p *netPath) [8]byte {
	var data [8]byte
	rand.Read(data[:]) // "MUST use unpredictable data in every PATH_CHALLENGE frame"
	c.paths.challengesSent++
	if p.nChallenges < maxPathChallenges {
		p.challenges[p.nChallenges] = data
		p.small[p.nChallenges] = false
		c.paths.txChallenge, c.paths.txChallengeIdx = p, p.nChallenges
		p.nChallenges++
	}
	p.challengeToSend = false
	pto := max(c.rtt.PTO(true), 2*congestion.Granularity)
	p.nextChallenge = now.Add(pto << (p.nChallenges - 1))
	return data
}

// onPathResponse validates the path whose challenge the data echoes:
// "Path validation succeeds when a PATH_RESPONSE frame is received that
// contains the data that was sent in a previous PATH_CHALLENGE frame. A
// PATH_RESPONSE frame received on any network path validates the path on
// which the PATH_CHALLENGE was sent." (RFC 9000, Section 8.2.3) A response
// matching nothing is ignored, as the data may belong to an abandoned
// validation.
func (c *connState) onPathResponse(now time.Time, data [8]byte) {
	for i := range c.paths.list {
		p := &c.paths.list[i]
		if !p.inUse || !p.validating {
			continue
		}
		for k := 0; k < p.nChallenges; k++ {
			if p.challenges[k] == data {
				small := p.small[k]
				c.onValidated(now, i)
				if small && p.inUse {
					// "If an endpoint sends a PATH_CHALLENGE frame in a
					// datagram that is not expanded to at least 1200
					// bytes and if the response to it validates the peer
					// address, the path is validated but not the path
					// MTU. ... the endpoint MUST initiate another path
					// validation with an expanded datagram to verify
					// that the path supports the required MTU."
					// (RFC 9000, Section 8.2.3) The path stays validated
					// meanwhile; if this fails, the path does.
					c.startValidation(now, p)
				}
				return
			}
		}
	}
}

func (c *connState) onValidated(now time.Time, i int) {
	ps := &c.paths
	p := &ps.list[i]
	p.validating, p.validated, p.challengeToSend = false, true, false
	ps.validationsOK++
	p.nChallenges, p.nextChallenge, p.abandonAt = 0, time.Time{}, time.Time{}
	if p.switchOnValidation && i != ps.active {
		p.switchOnValidation = false
		c.switchPath(now, p.addrs)
	}
	if f := p.onValidated; f != nil {
		p.onValidated = nil
		f(true)
	}
	if i == ps.active && ps.fallback >= 0 && ps.fallback != i && ps.fallback != ps.rx {
		// The peer proved it owns its new address: the old path is no
		// longer needed. Unless the datagram being processed came from
		// it: the PATH_RESPONSE validates the new path wherever it
		// arrives (Section 8.2.3), and a NAT that rebound and flipped
		// back puts the peer at the old address again. The old path then
		// stays, validated, for the packet's non-probing frames to move
		// the connection back to (onPathPacket).
		c.dropPath(ps.fallback)
		ps.fallback = -1
	}
	if i != ps.active && c.role == wire.RoleServer {
		// The old path validated after an apparent migration: it stays
		// the fallback in case the new one fails; nothing more to do.
		return
	}
}

// failValidation abandons the validation of path i: "To protect the
// connection from failing due to such a spurious migration, an endpoint
// MUST revert to using the last validated peer address when validation of
// a new peer address fails." (RFC 9000, Section 9.3.2)
func (c *connState) failValidation(now time.Time, i int) {
	ps := &c.paths
	p := &ps.list[i]
	p.validating, p.challengeToSend = false, false
	ps.validationsFail++
	if f := p.onValidated; f != nil {
		p.onValidated = nil
		f(false)
	}
	if p.validated {
		// A path validated before and checked again: the old path
		// after an apparent migration (Section 9.3.3), or a second
		// validation for the MTU (Section 8.2.3). It stays what it was,
		// in particular the fallback: a peer that is silent for a while
		// must not cost the connection its last validated address.
		return
	}
	if i != ps.active {
		if i == ps.fallback {
			ps.fallback = -1
		}
		c.dropPath(i)
		return
	}
	if ps.fallback < 0 || ps.fallback == i {
		// "If an endpoint has no state about the last validated peer
		// address, it MUST close the connection silently by discarding
		// all connection state."
		c.closeSilently(&TransportError{Code: wire.NoViablePath, Reason: "path validation failed"})
		return
	}
	back := ps.fallback
	ps.fallback = -1
	c.migrateTo(now, back)
	ps.fallback = -1
	c.dropPath(i)
}

// newTokenAfterMigration queues a NEW_TOKEN frame for the client's new
// address once a server's active path is validated after a migration:
// "After verifying a new client address, the server SHOULD send new
// address validation tokens (Section 8) to the client." (RFC 9000,
// Section 9.3) It looks before each datagram is built, and acts once per
// migration, when the path migrated to is validated.
func (c *connState) newTokenAfterMigration() {
	if c.paths.migrations == c.tokenMigrations {
		return
	}
	p := c.activePath()
	if !p.validated {
		return
	}
	c.tokenMigrations = c.paths.migrations
	if c.role == wire.RoleServer && p.addrs.remote.IsValid() && c.newTokenFor.tokens != nil && c.closeState == stateActive {
		c.newToken, c.newTokenFor = nil, tokenMint{c.newTokenFor.tokens, p.addrs.remote.Addr()}
		c.newTokenToSend = true
	}
}
