package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// 0-RTT rules of RFC 9000, Section 7.4.1 and RFC 9001, Sections 4.6 and
// 4.9.3 (see also scenario_resume_test.go).

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

// earlyStreamWatch records, at the server, the highest offset of STREAM
// data that arrived in 0-RTT packets on each stream.
type earlyStreamWatch struct {
	maxEnd map[wire.StreamID]uint64
}

// watchEarlyStreams hooks the server connection of p once it exists: from
// the second datagram the server receives on.
func watchEarlyStreams(p *simPair) *earlyStreamWatch {
	w := &earlyStreamWatch{maxEnd: map[wire.StreamID]uint64{}}
	hooked := false
	p.server.dropIn = func(time.Time, *netsim.Datagram) bool {
		if s := p.server.c; s != nil && !hooked {
			hooked = true
			s.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
				if f.Type.IsStream() && s.rxPacketType == wire.PacketType0RTT {
					end := f.Stream.Offset + uint64(len(f.Stream.Data))
					w.maxEnd[f.Stream.StreamID] = max(w.maxEnd[f.Stream.StreamID], end)
				}
			}
		}
		return false
	}
	return w
}

func (w *earlyStreamWatch) total() uint64 {
	var n uint64
	for _, e := range w.maxEnd {
		n += e
	}
	return n
}

// RFC 9000, Section 7.4.1: "When sending frames in 0-RTT packets, a client
// MUST only use remembered transport parameters; importantly, it MUST NOT
// use updated values that it learns from the server's updated transport
// parameters or from frames received in 1-RTT packets. Updated values of
// transport parameters from the handshake apply only to 1-RTT packets."
// The server remembered allows 2,000 bytes per stream, 3,000 on the
// connection and 2 streams; the server of the new connection allows far
// more (and so accepts 0-RTT). Its transport parameters arrive, in its
// EncryptedExtensions, while the handshake is still in progress (a server
// whose Finished comes in a later packet, or is lost: here the client
// gets only the server's Initial packets and the parameters are put in
// force as TLS reports them). Until the handshake completes, the client
// keeps sending 0-RTT packets, and they must stay within the remembered
// limits; it must not open a third stream either.
func TestSim0RTTUnderRememberedLimits(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	primeSession(t, ctls, stls, cache, &Config{Allow0RTT: true,
		InitialStreamReceiveWindow: 2000, InitialConnectionReceiveWindow: 3000, MaxIncomingStreams: 2})
	p := newSimPairOpts(t, testLink, 142, simPairOpts{server: &Config{Allow0RTT: true}, ctls: ctls, stls: stls, early: true})
	c := p.client.c
	if c.earlyParams == nil || c.earlyParams.InitialMaxStreamDataBidiRemote != 2000 {
		t.Fatal("no remembered parameters")
	}
	watch := watchEarlyStreams(p)
	var writers []*patternWriter
	for k := range 2 {
		s, _, err := c.streams.openStream(true)
		if err != nil || s == nil {
			t.Fatalf("openStream %d before the handshake: %v", k, err)
		}
		writers = append(writers, newPatternWriter(s, k, 20_000))
	}
	onlyInitialOf(p)
	p.run(t, 2*time.Second, func() bool {
		for _, w := range writers {
			w.step()
		}
		return c.spaces[ackhandler.SpaceHandshake].open != nil && p.server.c != nil && p.server.c.params != nil
	})
	params := *p.server.c.params
	// "A client MUST NOT use remembered values for the following
	// parameters: ack_delay_exponent, max_ack_delay, ... The client MUST
	// use the server's new values in the handshake instead": they apply
	// at once.
	params.AckDelayExponent, params.MaxAckDelay = 5, 40*time.Millisecond
	if err := c.applyPeerParams(p.sim.Now(), &params); err != nil {
		t.Fatalf("applyPeerParams: %v", err)
	}
	if c.rtt.MaxAckDelay() != 40*time.Millisecond || c.peerParams.AckDelayExponent != 5 {
		t.Errorf("max_ack_delay %v, ack_delay_exponent %d during 0-RTT; want the server's new 40 ms and 5", c.rtt.MaxAckDelay(), c.peerParams.AckDelayExponent)
	}
	if s, _, _ := c.streams.openStream(true); s != nil {
		t.Errorf("opened stream %d in 0-RTT beyond the remembered limit of 2", s.id)
	}
	// 300 ms of 0-RTT sending under the parameters TLS reported.
	for end := p.sim.Now().Add(300 * time.Millisecond); p.sim.Now().Before(end) && !c.handshakeComplete; {
		for _, w := range writers {
			w.step()
		}
		p.cnode.Wake()
		p.sim.RunFor(time.Millisecond)
	}
	if c.handshakeComplete {
		t.Fatal("the handshake completed without the server's Handshake packets")
	}
	for id, end := range watch.maxEnd {
		if end > 2000 {
			t.Errorf("stream %d: 0-RTT data up to offset %d, beyond the remembered limit of 2000", id, end)
		}
	}
	if n := watch.total(); n > 3000 || n == 0 {
		t.Errorf("%d bytes of 0-RTT stream data, want some and no more than the remembered 3000", n)
	}
	// The handshake completes; the rest goes in 1-RTT packets: "A client
	// MUST NOT send 0-RTT packets once it starts processing 1-RTT packets
	// from the server" (RFC 9000, Section 17.2.3).
	p.client.dropIn = nil
	p.client.dropOut = func(_ time.Time, d []byte) bool {
		if c.handshakeComplete && hasPacketType(d, wire.PacketType0RTT) {
			t.Error("a 0-RTT packet sent after the handshake completed")
		}
		return false
	}
	var readers []*patternReader
	p.run(t, 10*time.Second, func() bool {
		for _, w := range writers {
			w.step()
		}
		for {
			s, _, _ := p.server.c.streams.acceptStream(true)
			if s == nil {
				break
			}
			readers = append(readers, newPatternReader(t, s, len(readers)))
		}
		done := len(readers) == 2
		for _, r := range readers {
			done = r.step(0) && done
		}
		return done
	})
	if !c.used0RTT || !p.server.c.used0RTT {
		t.Fatal("0-RTT not accepted")
	}
}

// RFC 9000, Section 7.4.1: a server whose stream limit shrank rejects
// 0-RTT ("A server MUST reject 0-RTT data if the restored values for
// transport parameters cannot be supported"), and so does one that does
// not accept 0-RTT at all; the client then sends everything again in
// 1-RTT packets, "MUST reset the state of all streams" (RFC 9001, Section
// 4.6.2) and must respect the server's real limits: "Endpoints MUST NOT
// exceed the limit set by their peer" (Section 4.6). Five streams were
// opened in 0-RTT under a remembered limit of 100; the server now allows
// 2. The three beyond the limit wait until the server raises it, rather
// than both ends closing with STREAM_LIMIT_ERROR.
func TestSim0RTTRejectedStreamsBeyondLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second *Config
	}{
		{"limit shrank", &Config{Allow0RTT: true, MaxIncomingStreams: 2}},
		{"Allow0RTT off", &Config{MaxIncomingStreams: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctls, stls, cache := resumeTLS(t)
			primeSession(t, ctls, stls, cache, &Config{Allow0RTT: true})
			p := newSimPairOpts(t, testLink, 143, simPairOpts{server: tc.second, ctls: ctls, stls: stls, early: true})
			c := p.client.c
			if c.zeroRTTSeal == nil {
				t.Fatal("client installed no 0-RTT keys")
			}
			const n = 5
			var streams []*stream
			for k := range n {
				s, _, err := c.streams.openStream(true)
				if err != nil || s == nil {
					t.Fatalf("openStream %d before the handshake: %v", k, err)
				}
				simWrite(s, testPattern(k, 0, 3000))
				s.closeWrite()
				streams = append(streams, s)
			}
			var readers []*patternReader
			answered := map[*patternReader]bool{}
			replies := 0
			buf := make([]byte, 16)
			p.run(t, 10*time.Second, func() bool {
				for _, cs := range []*connState{c, p.server.c} {
					if cs != nil && cs.closeState != stateActive {
						t.Fatalf("%v closed: %v", cs.role, cs.closeErr)
					}
				}
				if p.server.c != nil {
					for {
						s, _, _ := p.server.c.streams.acceptStream(true)
						if s == nil {
							break
						}
						readers = append(readers, newPatternReader(t, s, int(s.id.Num())-1))
					}
				}
				for _, r := range readers {
					if r.step(0) && !answered[r] {
						answered[r] = true
						simWrite(r.s, []byte("ok"))
						r.s.closeWrite()
					}
				}
				for _, s := range streams {
					if m, err := simRead(s, buf); m > 0 || err != nil {
						if m > 0 {
							replies++
						}
					}
				}
				return len(answered) == n && replies == n
			})
			if c.used0RTT || p.server.c.used0RTT {
				t.Error("0-RTT was accepted")
			}
		})
	}
}

// RFC 9000, Section 7.4.1: "Remembered transport parameters apply to the
// new connection until the handshake completes and the client starts
// sending 1-RTT packets", and "A client that attempts to send 0-RTT data
// MUST remember all other transport parameters used by the server that
// it is able to process". The server said max_udp_payload_size 1220 and
// max_idle_timeout 2 s in the session remembered: the client's 0-RTT
// datagrams stay within 1,220 bytes (its own InitialPacketSize is 1,252),
// and its idle timeout until the handshake completes is 2 s, not its
// handshake idle timeout of 5 s. (disable_active_migration and
// grease_quic_bit are remembered too; a client does not migrate before
// the handshake is confirmed, and this one never clears the QUIC bit.)
func TestSim0RTTRememberedDatagramSizeAndIdle(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	srvCfg := &Config{Allow0RTT: true, MaxIdleTimeout: 2 * time.Second}
	prime := newSimPairOpts(t, testLink, 144, simPairOpts{server: srvCfg, ctls: ctls, stls: stls})
	prime.server.maxRecvPayload = 1220
	prime.run(t, 5*time.Second, func() bool { return prime.confirmed() && cache.stored() > 0 })

	p := newSimPairOpts(t, testLink, 145, simPairOpts{client: &Config{MaxIdleTimeout: time.Minute}, server: srvCfg, ctls: ctls, stls: stls, early: true})
	p.server.maxRecvPayload = 1220
	c := p.client.c
	if c.earlyParams == nil {
		t.Fatal("no remembered parameters")
	}
	if c.idleTimeout != 2*time.Second {
		t.Errorf("idle timeout %v during 0-RTT, want the remembered 2 s", c.idleTimeout)
	}
	s, _, _ := c.streams.openStream(true)
	w := newPatternWriter(s, 0, 20_000)
	largest0RTT := 0
	p.client.dropOut = func(_ time.Time, d []byte) bool {
		if hasPacketType(d, wire.PacketType0RTT) {
			largest0RTT = max(largest0RTT, len(d))
		}
		return false
	}
	p.run(t, 5*time.Second, func() bool {
		w.step()
		return p.confirmed()
	})
	if !c.used0RTT {
		t.Fatal("0-RTT not accepted")
	}
	if largest0RTT == 0 || largest0RTT > 1220 {
		t.Errorf("0-RTT datagrams of up to %d bytes, want within the remembered max_udp_payload_size of 1220", largest0RTT)
	}
}
