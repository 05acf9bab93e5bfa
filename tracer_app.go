package quic

// ApplicationTracer returns the Application field of the Tracer that
// Config.Tracer made for this connection, or nil if it is not traced. An
// application protocol (package http3) calls it once, when it takes the
// connection over, to report its own events to the same trace.
func (c *Conn) ApplicationTracer() any { return c.appTracer }
