package interop

// Session resumption and 0-RTT against quic-go, both roles.

import (
	"bytes"
	"context"
	"testing"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

// TestFeaturesResumptionOurClientQuicGoServer: a second connection with
// the first one's session resumes it, as both sides see.
func TestFeaturesResumptionOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	cache := newNotifyCache()
	ctls.ClientSessionCache = cache
	l, err := quicgo.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	accepted := make(chan *quicgo.Conn, 2)
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			accepted <- c
			go serveEcho(ctx, quicGoConn{c})
		}
	}()
	for i, wantResumed := range []bool{false, true} {
		c, err := ours.DialAddr(ctx, l.Addr().String(), ctls, nil)
		if err != nil {
			t.Fatalf("connection %d: dial: %v", i+1, err)
		}
		if err := echoOnce(ctx, ourConn{c}, []byte("hello")); err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		if got := c.ConnectionState().TLS.DidResume; got != wantResumed {
			t.Errorf("connection %d: client DidResume = %v, want %v", i+1, got, wantResumed)
		}
		srv := <-accepted
		if got := srv.ConnectionState().TLS.DidResume; got != wantResumed {
			t.Errorf("connection %d: quic-go server DidResume = %v, want %v", i+1, got, wantResumed)
		}
		if i == 0 {
			cache.waitTicket(t)
		}
		c.CloseWithError(0, "")
	}
}

// TestFeaturesResumptionQuicGoClientOurServer is the converse.
func TestFeaturesResumptionQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	cache := newNotifyCache()
	ctls.ClientSessionCache = cache
	l, err := ours.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	accepted := make(chan *ours.Conn, 2)
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			accepted <- c
			go serveEcho(ctx, ourConn{c})
		}
	}()
	for i, wantResumed := range []bool{false, true} {
		c, err := quicgo.DialAddr(ctx, l.Addr().String(), ctls, nil)
		if err != nil {
			t.Fatalf("connection %d: quic-go dial: %v", i+1, err)
		}
		if err := echoOnce(ctx, quicGoConn{c}, []byte("hello")); err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		if got := c.ConnectionState().TLS.DidResume; got != wantResumed {
			t.Errorf("connection %d: quic-go client DidResume = %v, want %v", i+1, got, wantResumed)
		}
		srv := <-accepted
		<-srv.HandshakeComplete()
		if got := srv.ConnectionState().TLS.DidResume; got != wantResumed {
			t.Errorf("connection %d: server DidResume = %v, want %v", i+1, got, wantResumed)
		}
		if i == 0 {
			cache.waitTicket(t)
		}
		c.CloseWithError(0, "")
	}
}

// TestFeatures0RTTOurClientQuicGoServer: after a first connection, a second one
// dialed with DialEarly writes its request before the handshake completes;
// it goes in 0-RTT packets, quic-go accepts them, and the echo comes back.
func TestFeatures0RTTOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	cache := newNotifyCache()
	ctls.ClientSessionCache = cache
	rec := &qlogRecorder{}
	l, err := quicgo.ListenAddrEarly("127.0.0.1:0", stls, &quicgo.Config{Allow0RTT: true, Tracer: rec.tracer()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	accepted := make(chan *quicgo.Conn, 2)
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			accepted <- c
			go serveEcho(ctx, quicGoConn{c})
		}
	}()
	tr := &ours.Transport{Conn: loopbackUDP(t)}
	defer tr.Close()

	// First connection: full handshake, gets the ticket.
	c1, err := tr.Dial(ctx, l.Addr(), ctls, nil)
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	if err := echoOnce(ctx, ourConn{c1}, []byte("first")); err != nil {
		t.Fatal(err)
	}
	<-accepted
	cache.waitTicket(t)
	c1.CloseWithError(0, "")

	// Second connection: 0-RTT.
	pc := newPacketCounter()
	c2, err := tr.DialEarly(ctx, l.Addr(), ctls, &ours.Config{Tracer: pc.tracer()})
	if err != nil {
		t.Fatalf("DialEarly: %v", err)
	}
	defer c2.CloseWithError(0, "")
	s, err := c2.OpenStream()
	if err != nil {
		t.Fatalf("open stream before the handshake: %v", err)
	}
	req := []byte("early request")
	if _, err := s.Write(req); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c2.HandshakeComplete():
		t.Log("note: the handshake completed before the request was written")
	default:
	}
	got, err := readRequest(s)
	if err != nil {
		t.Fatalf("read echo: %v", err)
	}
	if !bytes.Equal(got, req) {
		t.Fatalf("echo %q, want %q", got, req)
	}
	<-c2.HandshakeComplete()
	st := c2.ConnectionState()
	if !st.TLS.DidResume || !st.Used0RTT {
		t.Errorf("client: DidResume %v, Used0RTT %v; want both", st.TLS.DidResume, st.Used0RTT)
	}
	if sent, _ := pc.counts(wire.PacketType0RTT); sent == 0 {
		t.Error("client sent no ack-eliciting 0-RTT packet")
	}
	srv := <-accepted
	select {
	case <-srv.HandshakeComplete():
	case <-ctx.Done():
		t.Fatal("quic-go handshake did not complete")
	}
	if !srv.ConnectionState().Used0RTT {
		t.Error("quic-go server: Used0RTT false")
	}
	if _, n0, _ := rec.snapshot(); n0 == 0 {
		t.Error("quic-go server received no 0-RTT packet")
	}
}

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
