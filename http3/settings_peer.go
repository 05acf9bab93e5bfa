package http3

import "crypto/tls"

// peerSettingsKnown returns the peer's SETTINGS and true once they
// arrived.
func (c *connection) peerSettingsKnown() (settings, bool) {
	select {
	case <-c.peerSettingsDone:
		return c.peerSettings, true
	default:
		return settings{}, false
	}
}

// peerMaxFieldSectionSize is the peer's SETTINGS_MAX_FIELD_SECTION_SIZE;
// 0 means no limit, which is also the value before its SETTINGS arrive
// (RFC 9114, Section 7.2.4.1: the default is unlimited).
func (c *connection) peerMaxFieldSectionSize() uint64 {
	s, _ := c.peerSettingsKnown()
	return s.MaxFieldSectionSize
}

// tlsState returns the connection's TLS state for Request.TLS and
// Response.TLS. Once the handshake is complete the state no longer
// changes and one copy is shared by all messages, as net/http's HTTP/2
// does; before (0-RTT), each message gets a fresh copy.
func (c *connection) tlsState() *tls.ConnectionState {
	c.mu.Lock()
	st := c.tls
	c.mu.Unlock()
	if st != nil {
		return st
	}
	state := c.qc.ConnectionState().TLS
	if handshakeDone(c.qc) {
		c.mu.Lock()
		c.tls = &state
		c.mu.Unlock()
	}
	return &state
}
