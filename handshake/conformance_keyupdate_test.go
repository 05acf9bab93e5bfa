package handshake

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"
)

// RFC 9001, Section 6.4: "An endpoint that successfully removes protection
// with old keys when newer keys were used for packets with lower packet
// numbers MUST treat this as a connection error of type KEY_UPDATE_ERROR."
// The previous keys are tried only for packet numbers below the first of
// the current phase, so a packet of the old phase with a higher number is
// never opened with them: it fails authentication, and the keys stay as
// they were.
func TestOldKeysOnlyBelowNewPhase(t *testing.T) {
	t0 := time.Unix(1000, 0)
	client, server := newOneRTTPair(t, tls.TLS_AES_128_GCM_SHA256)
	client.SetHandshakeConfirmed()
	server.SetHandshakeConfirmed()
	if _, err := openPacket(server, t0, sealPacket(t, client, 0), -1); err != nil {
		t.Fatal(err)
	}
	late := sealPacket(t, client, 10) // phase 0, number 10
	client.OnAcked(t0, 0)
	if err := client.Update(t0); err != nil {
		t.Fatal(err)
	}
	if _, err := openPacket(server, t0, sealPacket(t, client, 5), 0); err != nil || server.KeyPhase() != 1 {
		t.Fatalf("phase 1 packet 5: %v, server phase %d", err, server.KeyPhase())
	}
	if _, err := openPacket(server, t0, late, 5); !errors.Is(err, ErrDecryptionFailed) {
		t.Fatalf("phase 0 packet 10 after phase 1 packet 5: %v, want a decryption failure", err)
	}
	if server.KeyPhase() != 1 || server.Updates() != 1 {
		t.Fatalf("server phase %d, updates %d after the old packet", server.KeyPhase(), server.Updates())
	}
}
