package quic

// earlyState tells when a server connection's ClientHello was processed:
// its application protocol and server name are then known, before the
// handshake completes.
type earlyState struct {
	ready     chan struct{} // closed then
	published bool          // the run goroutine's
}

// publishEarly makes the TLS state the ClientHello decided visible to
// ConnectionState and releases the connection to a ListenEarly Accept
// (Listener.earlyReady), once. It runs on the connection's goroutine (publish).
func (c *Conn) publishEarly() {
	if c.early.published {
		return
	}
	es := c.state.tls.EarlyState()
	if es == nil {
		return
	}
	c.early.published = true
	c.mu.Lock()
	c.snapshot.early = es
	c.mu.Unlock()
	close(c.early.ready)
	if l := c.listener; l != nil && l.early {
		l.earlyReady(c) // the handshake goes on counting until it ends
	}
}
