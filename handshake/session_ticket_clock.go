package handshake

import (
	"crypto/tls"
	"time"
)

// ConfigureSessionTickets sets c's WrapSession and UnwrapSession to seal
// session tickets with keys (see ConfigureSessionTicketsAt). The time is
// c.Time's, or time.Now's: this is the variant for a tls.Config configured
// outside a connection, and the one file of this package that reads the
// clock.
func ConfigureSessionTickets(c *tls.Config, keys *EpochKeys) {
	ConfigureSessionTicketsAt(c, keys, func() time.Time {
		if c.Time != nil {
			return c.Time()
		}
		return time.Now()
	})
}
