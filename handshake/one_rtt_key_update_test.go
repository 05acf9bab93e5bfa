package handshake

import (
	"bytes"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

var keyTestConnID = wire.NewConnectionID([]byte{0xc0, 0xff, 0xee, 0, 1, 2, 3, 4})

// newOneRTTPair returns the 1-RTT keys of a client and a server that agree
// on their secrets, as after a handshake.
func newOneRTTPair(t *testing.T, suite uint16) (client, server *OneRTTKeys) {
	t.Helper()
	n := 32
	if suite == tls.TLS_AES_256_GCM_SHA384 {
		n = 48
	}
	c2s, s2c := bytes.Repeat([]byte{0x11}, n), bytes.Repeat([]byte{0x22}, n)
	var err error
	if client, err = NewOneRTTKeys(suite, wire.Version1, c2s, s2c); err != nil {
		t.Fatal(err)
	}
	if server, err = NewOneRTTKeys(suite, wire.Version1, s2c, c2s); err != nil {
		t.Fatal(err)
	}
	return client, server
}

// sealPacket builds and seals a short-header packet carrying a PING and
// some PADDING, returning the protected bytes and the phase it carries.
func sealPacket(t *testing.T, k *OneRTTKeys, pn wire.PacketNumber) []byte {
	t.Helper()
	h := wire.ShortHeader{DstConnID: keyTestConnID}
	b := h.Append(make([]byte, 0, 128), pn, 2)
	b = append(b, 0x01, 0, 0, 0, 0, 0, 0, 0)
	out, err := k.Seal(b, 1+keyTestConnID.Len(), 2, pn)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// openPacket opens a packet on k, with largest the highest number seen.
func openPacket(k *OneRTTKeys, now time.Time, pkt []byte, largest wire.PacketNumber) (wire.PacketNumber, error) {
	pkt = append([]byte(nil), pkt...)
	pn, payload, err := k.Open(now, pkt, 1+keyTestConnID.Len(), largest)
	if err == nil && (len(payload) == 0 || payload[0] != 0x01) {
		return pn, errors.New("payload damaged")
	}
	return pn, err
}

func TestKeyUpdateInitiatedAndFollowed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	client, server := newOneRTTPair(t, tls.TLS_AES_128_GCM_SHA256)
	client.SetPTO(100 * time.Millisecond)
	server.SetPTO(100 * time.Millisecond)

	for pn := wire.PacketNumber(0); pn < 2; pn++ {
		if got, err := openPacket(server, t0, sealPacket(t, client, pn), pn-1); err != nil || got != pn {
			t.Fatalf("phase 0 packet %d: %v (pn %d)", pn, err, got)
		}
	}
	delayed := sealPacket(t, client, 2) // sent in phase 0, arrives after the update

	// "An endpoint MUST NOT initiate a key update prior to having confirmed
	// the handshake" (RFC 9001, Section 6.1).
	if err := client.Update(t0); !errors.Is(err, ErrKeyUpdateNotAllowed) {
		t.Fatalf("update before confirmation: %v", err)
	}
	client.SetHandshakeConfirmed()
	server.SetHandshakeConfirmed()
	client.OnAcked(t0, 1)
	if err := client.Update(t0); err != nil {
		t.Fatalf("update: %v", err)
	}
	if client.KeyPhase() != 1 {
		t.Fatal("key phase did not flip")
	}
	// "An endpoint MUST NOT initiate a subsequent key update unless it has
	// received an acknowledgment for a packet that was sent protected with
	// keys from the current key phase."
	if err := client.Update(t0); !errors.Is(err, ErrKeyUpdateNotAllowed) {
		t.Fatalf("second update before acknowledgment: %v", err)
	}

	// The server opens the first phase-1 packet with its next keys and
	// follows the update.
	p3 := sealPacket(t, client, 3)
	if _, err := openPacket(server, t0, p3, 1); err != nil {
		t.Fatalf("server could not open the packet initiating the update: %v", err)
	}
	if server.KeyPhase() != 1 || server.Updates() != 1 {
		t.Fatalf("server phase %d updates %d; want 1, 1", server.KeyPhase(), server.Updates())
	}
	// A phase-0 packet delayed across the update opens with the previous
	// keys (RFC 9001, Section 6.5).
	if pn, err := openPacket(server, t0.Add(10*time.Millisecond), delayed, 3); err != nil || pn != 2 {
		t.Fatalf("delayed phase-0 packet: pn %d, %v", pn, err)
	}
	// The server's reply in phase 1 completes the update on the client.
	if _, err := openPacket(client, t0, sealPacket(t, server, 0), -1); err != nil {
		t.Fatalf("client could not open the server's phase-1 packet: %v", err)
	}
	if client.Updates() != 1 {
		t.Fatalf("client counted %d updates; want 1", client.Updates())
	}

	// After an acknowledgment of a phase-1 packet the client may update
	// again, but only three PTOs later (Section 6.5).
	client.OnAcked(t0, 3)
	if err := client.Update(t0.Add(299 * time.Millisecond)); !errors.Is(err, ErrKeyUpdateNotAllowed) {
		t.Fatalf("update within 3 PTO: %v", err)
	}
	if err := client.Update(t0.Add(300 * time.Millisecond)); err != nil || client.KeyPhase() != 0 {
		t.Fatalf("second update: %v, phase %d", err, client.KeyPhase())
	}

	// The server dropped its previous keys 3 PTO after the update: a
	// packet that old no longer opens.
	if d := server.NextDeadline(); !d.Equal(t0.Add(300 * time.Millisecond)) {
		t.Fatalf("previous keys discarded at %v; want t0+300ms", d)
	}
	server.OnTimeout(t0.Add(300 * time.Millisecond))
	if !server.NextDeadline().IsZero() {
		t.Fatal("previous keys kept after their deadline")
	}
	if _, err := openPacket(server, t0.Add(time.Second), delayed, 3); !errors.Is(err, ErrDecryptionFailed) {
		t.Fatalf("packet with discarded keys: %v", err)
	}
	// The second update reaches the server too.
	if _, err := openPacket(server, t0.Add(time.Second), sealPacket(t, client, 4), 3); err != nil || server.KeyPhase() != 0 || server.Updates() != 2 {
		t.Fatalf("second update on server: %v, phase %d, updates %d", err, server.KeyPhase(), server.Updates())
	}
}

// RFC 9001, Section 6.6: "If the total number of received packets that fail
// authentication within the connection, across all keys, exceeds the
// integrity limit ..., the endpoint MUST immediately close the connection
// with a connection error of type AEAD_LIMIT_REACHED and not process any
// more packets."
func TestIntegrityLimit(t *testing.T) {
	client, server := newOneRTTPair(t, tls.TLS_CHACHA20_POLY1305_SHA256)
	server.integLimit = 3
	for i := range 4 {
		pkt := sealPacket(t, client, wire.PacketNumber(i))
		pkt[len(pkt)-1] ^= 0xff // forged tag
		_, err := openPacket(server, time.Time{}, pkt, wire.PacketNumber(i)-1)
		var te *wire.TransportError
		if i < 3 && !errors.Is(err, ErrDecryptionFailed) {
			t.Fatalf("forgery %d: %v", i, err)
		}
		if i == 3 && (!errors.As(err, &te) || te.Code != wire.AEADLimitReached) {
			t.Fatalf("forgery past the limit: %v", err)
		}
	}
	if server.FailedDecryptions() != 4 {
		t.Fatalf("counted %d failures", server.FailedDecryptions())
	}
	// No more packets are processed, even authentic ones.
	if _, err := openPacket(server, time.Time{}, sealPacket(t, client, 10), 3); !errors.Is(err, errAEADLimit) {
		t.Fatalf("authentic packet after the limit: %v", err)
	}
}

// RFC 9001, Section 6.6: "Endpoints MUST initiate a key update before
// sending more protected packets than the confidentiality limit for the
// selected AEAD permits" and otherwise "MUST stop using those keys".
func TestConfidentialityLimit(t *testing.T) {
	t0 := time.Unix(0, 0)
	client, server := newOneRTTPair(t, tls.TLS_AES_256_GCM_SHA384)
	client.confLimit = 10
	client.SetUpdateInterval(4)
	client.SetHandshakeConfirmed()
	pn := wire.PacketNumber(0)
	for ; pn < 4; pn++ {
		if client.MaybeUpdate(t0) {
			t.Fatalf("updated after %d packets", pn)
		}
		if _, err := openPacket(server, t0, sealPacket(t, client, pn), pn-1); err != nil {
			t.Fatal(err)
		}
	}
	client.OnAcked(t0, 0)
	if !client.MaybeUpdate(t0) || client.KeyPhase() != 1 {
		t.Fatal("no automatic update at the interval")
	}
	// Without acknowledgments no further update is allowed, and the new
	// key stops at the limit.
	for i := 0; i < 10; i++ {
		client.MaybeUpdate(t0)
		sealPacket(t, client, pn)
		pn++
	}
	h := wire.ShortHeader{DstConnID: keyTestConnID}
	b := append(h.Append(nil, pn, 2), 1, 0, 0, 0, 0, 0)
	if _, err := client.Seal(append(b, make([]byte, 16)...)[:len(b)], 1+keyTestConnID.Len(), 2, pn); !errors.Is(err, errAEADLimit) {
		t.Fatalf("sealing past the confidentiality limit: %v", err)
	}
}

func TestOneRTTKeysChaChaNeverAutoUpdates(t *testing.T) {
	c, _ := newOneRTTPair(t, tls.TLS_CHACHA20_POLY1305_SHA256)
	if c.autoUpdate < 1<<61 {
		t.Fatalf("ChaCha20 auto-update interval %d", c.autoUpdate)
	}
	c.SetUpdateInterval(1000)
	if c.autoUpdate != 1000 {
		t.Fatal("SetUpdateInterval ignored")
	}
}

func TestOneRTTKeysAllocs(t *testing.T) {
	client, server := newOneRTTPair(t, tls.TLS_AES_128_GCM_SHA256)
	h := wire.ShortHeader{DstConnID: keyTestConnID}
	buf := make([]byte, 0, 1500)
	rx := make([]byte, 0, 1500)
	pn := wire.PacketNumber(0)
	allocs := testing.AllocsPerRun(100, func() {
		b := h.Append(buf[:0], pn, 2)
		b = append(b, make([]byte, 1200)...)
		out, err := client.Seal(b, 9, 2, pn)
		if err != nil {
			t.Fatal(err)
		}
		rx = append(rx[:0], out...)
		if _, _, err := server.Open(time.Time{}, rx, 9, pn-1); err != nil {
			t.Fatal(err)
		}
		pn++
	})
	if allocs != 0 {
		t.Fatalf("Seal+Open allocated %v times per packet", allocs)
	}
}

// A server's 1-RTT keys seal 0.5-RTT packets before the client's secret is
// known (RFC 9001, Section 5.7); they open nothing until SetReadSecret, and
// then work like keys made with both secrets.
func TestOneRTTWriteKeysBeforeReadSecret(t *testing.T) {
	suite := tls.TLS_AES_128_GCM_SHA256
	c2s, s2c := bytes.Repeat([]byte{0x11}, 32), bytes.Repeat([]byte{0x22}, 32)
	client, err := NewOneRTTKeys(suite, wire.Version1, c2s, s2c)
	if err != nil {
		t.Fatal(err)
	}
	server, err := NewOneRTTWriteKeys(suite, wire.Version1, s2c)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	if server.CanOpen() {
		t.Fatal("write-only keys claim to open")
	}
	if _, err := openPacket(server, now, sealPacket(t, client, 0), wire.InvalidPacketNumber); !errors.Is(err, ErrKeysNotAvailable) {
		t.Fatalf("open before the read secret: %v", err)
	}
	if _, err := openPacket(client, now, sealPacket(t, server, 0), wire.InvalidPacketNumber); err != nil {
		t.Fatalf("client cannot open a 0.5-RTT packet: %v", err)
	}
	if err := server.SetReadSecret(suite, wire.Version1, c2s); err != nil {
		t.Fatal(err)
	}
	if pn, err := openPacket(server, now, sealPacket(t, client, 1), wire.InvalidPacketNumber); err != nil || pn != 1 {
		t.Fatalf("open after the read secret: %v %v", pn, err)
	}
}

// Released keys come back on first use, across key updates and for every
// suite: packets sealed after Release open on a peer that kept its keys,
// a key update after Release is followed with the next keys that Release
// derived again, and a peer's update is followed by released keys.
func TestOneRTTKeysRelease(t *testing.T) {
	for _, suite := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		t.Run(tls.CipherSuiteName(suite), func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			client, server := newOneRTTPair(t, suite)
			client.SetHandshakeConfirmed()
			server.SetHandshakeConfirmed()
			// Keys are expanded on first use: new ones are as released.
			if !server.Released() || !server.CanOpen() {
				t.Fatal("new keys expanded, or cannot open")
			}
			if server.Release() {
				t.Fatal("Release of keys never expanded reported a release")
			}
			if pn, err := openPacket(server, t0, sealPacket(t, client, 0), -1); err != nil || pn != 0 {
				t.Fatalf("first open: pn %d, %v", pn, err)
			}
			if server.Released() {
				t.Fatal("keys still released after Open")
			}
			if server.seal != nil || server.next == nil {
				t.Fatal("Open expanded the write keys, or not the next read keys")
			}
			if !server.Release() || !server.Released() || !server.CanOpen() {
				t.Fatal("Release of expanded keys failed")
			}
			if server.Release() {
				t.Fatal("second Release reported a release")
			}
			if pn, err := openPacket(server, t0, sealPacket(t, client, 1), 0); err != nil || pn != 1 {
				t.Fatalf("open after Release: pn %d, %v", pn, err)
			}
			server.Release()
			if _, err := openPacket(client, t0, sealPacket(t, server, 0), -1); err != nil {
				t.Fatalf("open of a packet sealed after Release: %v", err)
			}

			// The client updates; the released server follows with the
			// next keys derived again.
			client.OnAcked(t0, 0)
			if err := client.Update(t0); err != nil {
				t.Fatal(err)
			}
			server.Release()
			if _, err := openPacket(server, t0, sealPacket(t, client, 1), 0); err != nil || server.KeyPhase() != 1 {
				t.Fatalf("update after Release: %v, phase %d", err, server.KeyPhase())
			}
			// Previous keys are kept for 3 PTO: no Release meanwhile.
			if server.Release() {
				t.Fatal("Release with previous keys kept")
			}
			server.OnTimeout(t0.Add(time.Hour))
			if !server.Release() {
				t.Fatal("Release after the previous keys went failed")
			}
			if _, err := openPacket(client, t0, sealPacket(t, server, 1), 1); err != nil || client.Updates() != 1 {
				t.Fatalf("client opening phase 1 after the server's Release: %v", err)
			}

			// A released endpoint initiates an update.
			server.OnAcked(t0, 1)
			client.OnTimeout(t0.Add(time.Hour))
			server.Release()
			if err := server.Update(t0.Add(time.Hour)); err != nil || server.KeyPhase() != 0 {
				t.Fatalf("update from released keys: %v, phase %d", err, server.KeyPhase())
			}
			if _, err := openPacket(client, t0.Add(time.Hour), sealPacket(t, server, 2), 1); err != nil || client.KeyPhase() != 0 {
				t.Fatalf("client following the released server's update: %v, phase %d", err, client.KeyPhase())
			}
		})
	}
}
