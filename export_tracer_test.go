package quic

import "testing"

// Exported for the external tests of package quic_test, which can import
// packages that import quic (qlog).

// DirectTransfer is directTransfer for external tests.
type DirectTransfer struct{ d *directTransfer }

// NewDirectTransfer connects two state machines and opens a stream.
func NewDirectTransfer(tb testing.TB) DirectTransfer { return DirectTransfer{newDirectTransfer(tb)} }

// SetTracers sets the client's and the server's tracers.
func (t DirectTransfer) SetTracers(client, server *Tracer) {
	t.d.p.client.c.obs.t, t.d.p.server.c.obs.t = client, server
}

// Step moves one chunk and reports the bytes received so far.
func (t DirectTransfer) Step() int {
	t.d.step()
	t.d.p.client.c.tracePoll()
	t.d.p.server.c.tracePoll()
	return t.d.received
}
