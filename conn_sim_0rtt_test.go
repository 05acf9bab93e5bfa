package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// 0-RTT rules of RFC 9000, Section 7.4.1 and RFC 9001, Sections 4.6 and
// 4.9.3 (see also conn_sim_resume_test.go).

// seal0RTT protects payload in a 0-RTT packet from client c with seal, the
// client's 0-RTT keys (which it drops once the handshake completes), and
// packet number pn, and returns the datagram.
func seal0RTT(c *connState, seal *handshake.Sealer, pn wire.PacketNumber, payload []byte) []byte {
	pnLen := 4
	h := wire.LongHeader{Type: wire.PacketType0RTT, Version: c.firstVersion, DstConnID: c.peerIDs.active(), SrcConnID: c.localConnID}
	b := h.Append(make([]byte, 0, 1500), pn, pnLen)
	pnOff := len(b) - pnLen
	b = append(b, payload...)
	for len(b)-pnOff-pnLen < handshake.MinPayloadLen(pnLen) {
		b = append(b, 0)
	}
	wire.PutVarintWithLen(b[pnOff-2:], uint64(len(b)-pnOff+16), 2)
	return seal.Seal(b, pnOff, pnLen, pn)
}

// RFC 9001, Section 4.9.3: "After receiving a 1-RTT packet, servers MUST
// discard 0-RTT keys within a short time; the RECOMMENDED time period is
// three times the Probe Timeout (PTO)". A 0-RTT packet that arrives 10 s
// after the handshake (a replay, or one held back that long) must not be
// opened: before, it created a stream.
func TestSimServerDiscards0RTTKeys(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	srvCfg := &Config{Allow0RTT: true}
	primeSession(t, ctls, stls, cache, srvCfg)
	p := newSimPairOpts(t, testLink, 140, simPairOpts{server: srvCfg, ctls: ctls, stls: stls, early: true})
	c := p.client.c
	seal := c.zeroRTTSeal
	if seal == nil {
		t.Fatal("client installed no 0-RTT keys")
	}
	earlyExchange(t, p, []byte("early request"))
	s := p.server.c
	if !s.used0RTT {
		t.Fatal("server did not accept 0-RTT")
	}
	// Within 3 PTOs of the first 1-RTT packet the keys may stay, for
	// reordered 0-RTT packets; 10 s later they must be gone.
	p.sim.RunFor(10 * time.Second)
	if s.zeroRTTOpen != nil {
		t.Error("server still holds its 0-RTT keys 10 s after the handshake")
	}
	pn, _ := c.sent.NextPacketNumber(ackhandler.SpaceApplication)
	id := wire.NthStreamID(wire.RoleClient, true, 50)
	frame := wire.StreamFrame{StreamID: id, Data: []byte("replayed"), HasLength: true}.Append(nil)
	before := s.packetsReceived
	s.handleDatagram(p.sim.Now(), seal0RTT(c, seal, pn+1000, frame), ackhandler.NotECT)
	if s.packetsReceived != before {
		t.Error("server processed a 0-RTT packet 10 s after the handshake")
	}
	if srv, _, _ := s.streams.acceptStream(true); srv != nil {
		t.Errorf("a 0-RTT packet 10 s after the handshake opened stream %d", srv.id)
	}
	if s.closeState != stateActive {
		t.Fatalf("server closed: %v", s.closeErr)
	}
}

// The server keeps its 0-RTT keys a while after the first 1-RTT packet:
// "Servers MAY temporarily retain 0-RTT keys to allow decrypting reordered
// packets without requiring their contents to be retransmitted with 1-RTT
// keys" (RFC 9001, Section 4.9.3). A 0-RTT packet reordered behind the
// first 1-RTT packets is still read.
func TestSimServerReads0RTTReorderedBehind1RTT(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	srvCfg := &Config{Allow0RTT: true}
	primeSession(t, ctls, stls, cache, srvCfg)
	p := newSimPairOpts(t, testLink, 141, simPairOpts{server: srvCfg, ctls: ctls, stls: stls, early: true})
	c := p.client.c
	seal := c.zeroRTTSeal
	var s *connState
	p.run(t, 5*time.Second, func() bool {
		s = p.server.c
		return s != nil && !s.zeroRTTDiscard.IsZero()
	})
	if s.zeroRTTOpen == nil {
		t.Fatal("server dropped its 0-RTT keys at once")
	}
	id := wire.NthStreamID(wire.RoleClient, true, 1)
	frame := wire.StreamFrame{StreamID: id, Data: []byte("late"), Fin: true, HasLength: true}.Append(nil)
	pn := s.spaces[ackhandler.SpaceApplication].recv.LargestReceived() + 1
	s.handleDatagram(p.sim.Now(), seal0RTT(c, seal, pn, frame), ackhandler.NotECT)
	srv, _, _ := s.streams.acceptStream(true)
	if srv == nil || srv.id != id {
		t.Fatal("a 0-RTT packet reordered behind the first 1-RTT packets was not read")
	}
}
