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
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	addr, accepted := startQuicGoEcho(t, ctx, stls, nil)
	for i, wantResumed := range []bool{false, true} {
		c, err := ours.DialAddr(ctx, addr, ctls, nil)
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
	ctx, cancel := context.WithTimeout(context.Background(), featureTimeout)
	defer cancel()
	addr, accepted := startOurEcho(t, ctx, stls, nil)
	for i, wantResumed := range []bool{false, true} {
		c, err := quicgo.DialAddr(ctx, addr, ctls, nil)
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
