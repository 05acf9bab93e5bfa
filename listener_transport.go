package quic

// Transport returns the Transport l listens on, whose statistics
// (Transport.Stats) cover l's connections.
func (l *Listener) Transport() *Transport { return l.t }
