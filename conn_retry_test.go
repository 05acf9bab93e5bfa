package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// openClientInitial removes the protection of the first packet of a client
// datagram, an Initial whose keys derive from dcid, and returns its header
// and packet number.
func openClientInitial(t *testing.T, d []byte, dcid wire.ConnectionID) (wire.LongHeader, wire.PacketNumber) {
	t.Helper()
	pkt, _, err := wire.NextPacket(append([]byte(nil), d...), 8)
	if err != nil {
		t.Fatal(err)
	}
	hdr, pnOff, err := wire.ParseLongHeader(pkt)
	if err != nil || hdr.Type != wire.PacketTypeInitial {
		t.Fatalf("not an Initial: %v %v", hdr.Type, err)
	}
	_, open := handshake.NewInitialKeys(hdr.Version, dcid.Bytes(), false)
	pnLen, err := open.RemoveHeaderProtection(pkt, pnOff)
	if err != nil {
		t.Fatal(err)
	}
	trunc, _ := wire.ParseTruncatedPacketNumber(pkt[pnOff:], pnLen)
	pn := wire.DecodePacketNumber(wire.InvalidPacketNumber, trunc, pnLen)
	if _, err := open.Open(pkt, pnOff, pnLen, pn); err != nil {
		t.Fatalf("Initial does not open with keys from %v: %v", dcid, err)
	}
	return hdr, pn
}

// makeRetry builds a Retry packet answering a client Initial.
func makeRetry(v wire.Version, clientSCID, odcid, scid wire.ConnectionID, token []byte) []byte {
	r := wire.RetryPacket{Version: v, DstConnID: clientSCID, SrcConnID: scid, Token: token}
	b := r.Append(nil)
	return handshake.AppendRetryIntegrityTag(b[:len(b)-wire.RetryIntegrityTagLen], v, odcid.Bytes())
}

// RFC 9000, Section 17.2.5.2 and 17.2.5.3: a client follows one valid
// Retry: it sends its Initials to the Retry's Source Connection ID, with
// keys derived from it, carrying the token, and its packet numbers keep
// increasing; a second Retry and one with a bad tag are ignored.
func TestClientFollowsRetry(t *testing.T) {
	p := newSimPair(t, testLink, nil, 60)
	c := p.client.c
	now := p.sim.Now()
	buf := make([]byte, 0, 1500)
	d := c.pollTransmit(now, buf)
	odcid := c.origDstConnID
	_, pn1 := openClientInitial(t, d, odcid)

	newID := wire.NewConnectionID([]byte{9, 9, 9, 9, 9, 9, 9, 9})
	token := []byte("retry-token-1")
	bad := makeRetry(wire.Version1, c.localConnID, newID, newID, token) // tag over the wrong ODCID
	c.handleDatagram(now, bad, 0)
	if c.hasRetried {
		t.Fatal("followed a Retry with an invalid integrity tag")
	}
	c.handleDatagram(now, makeRetry(wire.Version1, c.localConnID, odcid, newID, token), 0)
	if !c.hasRetried {
		t.Fatal("valid Retry ignored")
	}
	other := wire.NewConnectionID([]byte{7, 7, 7, 7, 7, 7, 7, 7})
	c.handleDatagram(now, makeRetry(wire.Version1, c.localConnID, odcid, other, []byte("second")), 0)

	d = c.pollTransmit(now, buf[:0])
	if d == nil {
		t.Fatal("no Initial after the Retry")
	}
	hdr, pn2 := openClientInitial(t, d, newID)
	if hdr.DstConnID != newID || !bytes.Equal(hdr.Token, token) {
		t.Fatalf("Initial after Retry: DCID %v token %q", hdr.DstConnID, hdr.Token)
	}
	if pn2 <= pn1 {
		t.Fatalf("packet number %d after the Retry, %d before", pn2, pn1)
	}
}

// A server Transport that requires address validation sends a Retry; the
// client follows it and the handshake completes with the connection IDs
// checked (RFC 9000, Section 7.3); a forged token gets INVALID_TOKEN.
func TestUDPRetry(t *testing.T) {
	var asked atomic.Int32
	p := newConnPair(t, connPairOpts{NoDial: true, ServerTransport: func(tr *Transport) {
		tr.RequireAddressValidation = func(net.Addr) bool { asked.Add(1); return true }
	}})
	l, ctls, ctr := p.listener, p.ctls, p.clientT
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		io.Copy(s, s)
		s.CloseWrite()
	}()
	c, err := DialAddr(ctx, l.Addr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The ClientHello (with a post-quantum key share) may span two
	// datagrams, each answered with a Retry, of which the client follows
	// one.
	if !c.state.hasRetried || asked.Load() == 0 {
		t.Fatalf("Retry followed: %v, validation asked %d times", c.state.hasRetried, asked.Load())
	}
	s, _ := c.OpenStream()
	s.Write([]byte("hello"))
	s.CloseWrite()
	if got, err := io.ReadAll(s); err != nil || string(got) != "hello" {
		t.Fatalf("echo %q %v", got, err)
	}
	c.CloseWithError(0, "")

	// A client presenting a Retry token the server did not make.
	if err := ctr.init(); err != nil {
		t.Fatal(err)
	}
	forged := ctr.tokens.AppendRetryToken(nil, time.Now(), ctr.Conn.LocalAddr().(*net.UDPAddr).AddrPort(),
		wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8}), wire.NewConnectionID([]byte{1, 1, 1, 1, 1, 1, 1, 1}))
	_, err = ctr.dial(ctx, l.Addr(), ctls, nil, false, forged)
	var te *TransportError
	if !errors.As(err, &te) || te.Code != wire.InvalidToken || !te.Remote {
		t.Fatalf("dial with a forged Retry token: %v", err)
	}
}

// RFC 9000, Section 8.1.3: a server sends a NEW_TOKEN token after the
// handshake; the client's next connection presents it and the server,
// which requires address validation, needs no Retry.
func TestUDPNewTokenSkipsRetry(t *testing.T) {
	var asked atomic.Int32
	p := newConnPair(t, connPairOpts{NoDial: true, ServerTransport: func(tr *Transport) {
		tr.RequireAddressValidation = func(net.Addr) bool { asked.Add(1); return true }
	}})
	l, ctls, ctr := p.listener, p.ctls, p.clientT
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for {
			if _, err := l.Accept(ctx); err != nil {
				return
			}
		}
	}()
	store := NewLRUTokenStore(4, 2)
	cfg := &Config{TokenStore: store}
	c1, err := ctr.Dial(ctx, l.Addr(), ctls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !c1.state.hasRetried {
		t.Fatal("first connection was not retried")
	}
	// Wait for the NEW_TOKEN frame.
	key := tokenStoreKey(ctls.ServerName, l.Addr()) + "|" + c1.ConnectionState().Version.String()
	var tok []byte
	for tok == nil && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
		tok = store.Get(key)
	}
	if tok == nil {
		t.Fatal("no NEW_TOKEN token stored")
	}
	store.Put(key, tok)
	c1.CloseWithError(0, "")
	askedBefore := asked.Load()
	c2, err := ctr.Dial(ctx, l.Addr(), ctls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c2.state.hasRetried || asked.Load() != askedBefore {
		t.Fatalf("second connection: retried %v, validation asked %d more times", c2.state.hasRetried, asked.Load()-askedBefore)
	}
	c2.CloseWithError(0, "")
}
