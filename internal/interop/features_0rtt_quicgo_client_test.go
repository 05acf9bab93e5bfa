//go:build !race

package interop

// This test is built without the race detector: quic-go v0.65.0 has a data
// race of its own when DialAddrEarly is followed at once by OpenStream (its
// stream map reads the peer's transport parameters while its connection
// goroutine replaces the remembered ones after the handshake;
// streams_map_outgoing.go vs connection.go), which the detector reports in
// about one run in 60 on a loaded machine. `make test` runs this module a
// second time without -race, so the test still runs in CI.

import (
	"bytes"
	"context"
	"testing"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

// TestFeatures0RTTQuicGoClientOurServer is the converse: quic-go's
// DialAddrEarly against our ListenEarly with Allow0RTT.
func TestFeatures0RTTQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	cache := newNotifyCache()
	ctls.ClientSessionCache = cache
	pc := newPacketCounter()
	tr := &ours.Transport{Conn: loopbackUDP(t)}
	defer tr.Close()
	l, err := tr.ListenEarly(stls, &ours.Config{Allow0RTT: true, Tracer: pc.tracer()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()

	// The server echoes each stream and reports, per connection, whether
	// its data arrived in 0-RTT and whether the handshake was complete
	// when the request had been read.
	type served struct {
		conn          *ours.Conn
		early         bool
		completeAtEOF bool
		err           error
	}
	servedc := make(chan served, 2)
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					servedc <- served{conn: c, err: err}
					return
				}
				req, err := readRequest(s)
				r := served{conn: c, early: s.ReceivedEarlyData(), err: err}
				select {
				case <-c.HandshakeComplete():
					r.completeAtEOF = true
				default:
				}
				s.Write(req)
				s.CloseWrite()
				servedc <- r
			}()
		}
	}()
	addr := l.Addr().String()

	c1, err := quicgo.DialAddr(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	if err := echoOnce(ctx, quicGoConn{c1}, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if r := <-servedc; r.err != nil || r.early {
		t.Fatalf("first connection: server err %v, early data %v", r.err, r.early)
	}
	cache.waitTicket(t)
	c1.CloseWithError(0, "")

	c2, err := quicgo.DialAddrEarly(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatalf("DialAddrEarly: %v", err)
	}
	defer c2.CloseWithError(0, "")
	s, err := c2.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	req := []byte("early request")
	if _, err := s.Write(req); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got, err := readRequest(s)
	if err != nil {
		t.Fatalf("read echo: %v", err)
	}
	if !bytes.Equal(got, req) {
		t.Fatalf("echo %q, want %q", got, req)
	}
	<-c2.HandshakeComplete()
	if st := c2.ConnectionState(); !st.Used0RTT || !st.TLS.DidResume {
		t.Errorf("quic-go client: Used0RTT %v, DidResume %v; want both", st.Used0RTT, st.TLS.DidResume)
	}
	r := <-servedc
	if r.err != nil {
		t.Fatalf("server: %v", r.err)
	}
	if !r.early {
		t.Error("server: Stream.ReceivedEarlyData false")
	}
	t.Logf("server: handshake complete when the request had been read: %v", r.completeAtEOF)
	select {
	case <-r.conn.HandshakeComplete():
	case <-ctx.Done():
		t.Fatal("server handshake did not complete")
	}
	if st := r.conn.ConnectionState(); !st.Used0RTT || !st.TLS.DidResume {
		t.Errorf("server: Used0RTT %v, DidResume %v; want both", st.Used0RTT, st.TLS.DidResume)
	}
	if _, rcvd := pc.counts(wire.PacketType0RTT); rcvd == 0 {
		t.Error("server processed no 0-RTT packet")
	}
}
