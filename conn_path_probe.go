package quic

import (
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// Path probes of a client that follows the network (Config.FollowNetwork).
// A client that downloads sends only acknowledgments, which are not
// acknowledged: when its path dies (the Wi-Fi is gone, a NAT forgot the
// binding) nothing it has in flight times out, and without a keep-alive it
// would not notice for as long as the peer's data stops. So while streams
// are open and nothing ack-eliciting is in flight, a client that has
// received nothing for pathProbeIdle sends a PING: on a dead path its
// write fails or its probe timeouts count (PTOCount), which is what the
// follower (conn_driver_follow.go) watches. The interval doubles with each probe
// that brought no new stream data, up to the keep-alive period, so that
// an idle connection with open streams (HTTP/3's control streams) sends a
// handful, not a steady stream. (QUICHE's "retransmittable on wire"
// timeout serves the same purpose.)

// pathProbeIdle is the first interval, or three smoothed round trips if
// longer.
const pathProbeIdle = 250 * time.Millisecond

// pathProbeDeadline returns when a path probe is due, or the zero time.
func (c *connState) pathProbeDeadline() time.Time {
	if c.role != wire.RoleClient || !c.config.FollowNetwork || !c.handshakeConfirmed || c.pingToSend ||
		c.lastReceived.IsZero() || c.streams.openCount() == 0 ||
		c.sent.HasAckElicitingInFlight(ackhandler.SpaceApplication) {
		return time.Time{}
	}
	if c.connRecv.Received() != c.probeData {
		c.probeData, c.probes = c.connRecv.Received(), 0
	}
	d := max(pathProbeIdle, 3*c.rtt.Smoothed())
	for i := 0; i < c.probes && d < c.config.KeepAlivePeriod; i++ {
		d *= 2
	}
	if c.config.KeepAlivePeriod > 0 {
		d = min(d, c.config.KeepAlivePeriod)
	}
	return c.lastReceived.Add(d)
}

// onPathProbe sends the PING of a path probe.
func (c *connState) onPathProbe() {
	c.pingToSend = true
	c.probes++
}
