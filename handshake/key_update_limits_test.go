package handshake

import (
	"bytes"
	"crypto/tls"
	"errors"
	"testing"

	"github.com/quicstack/quic/wire"
)

// TestNextSecretRFC checks the "quic ku" / "quicv2 ku" output listed in
// RFC 9001 and RFC 9369, Appendix A.5, and that the derivation is
// deterministic and yields a new value.
func TestNextSecretRFC(t *testing.T) {
	for _, vs := range rfcVectorSets {
		secret := unhex(t, vs.chachaSecret)
		next, err := NextSecret(tls.TLS_CHACHA20_POLY1305_SHA256, vs.version, secret)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(next, unhex(t, vs.chachaKU)) {
			t.Errorf("%s: ku = %x, want %s", vs.rfc, next, vs.chachaKU)
		}
		again, _ := NextSecret(tls.TLS_CHACHA20_POLY1305_SHA256, vs.version, secret)
		if !bytes.Equal(again, next) {
			t.Errorf("%s: NextSecret not deterministic", vs.rfc)
		}
		if bytes.Equal(next, secret) {
			t.Errorf("%s: NextSecret returned its input", vs.rfc)
		}
	}
}

func TestNextSecretSuites(t *testing.T) {
	for _, s := range suites {
		secret := testSecret(s.id, 2)
		n1, err := NextSecret(s.id, wire.Version1, secret)
		if err != nil {
			t.Fatal(err)
		}
		n2, err := NextSecret(s.id, wire.Version2, secret)
		if err != nil {
			t.Fatal(err)
		}
		if len(n1) != len(secret) || bytes.Equal(n1, n2) || bytes.Equal(n1, secret) {
			t.Errorf("%s: next secrets %x / %x", s.name, n1, n2)
		}
		// Generations do not cycle quickly.
		seen := map[string]bool{string(secret): true}
		cur := secret
		for range 16 {
			cur, _ = NextSecret(s.id, wire.Version1, cur)
			if seen[string(cur)] {
				t.Fatalf("%s: key update secret repeated", s.name)
			}
			seen[string(cur)] = true
		}
	}
}

func TestNextSecretErrors(t *testing.T) {
	secret := testSecret(tls.TLS_AES_128_GCM_SHA256, 0)
	if _, err := NextSecret(tls.TLS_AES_128_GCM_SHA256+3, wire.Version1, secret); !errors.Is(err, ErrUnsupportedCipherSuite) {
		t.Errorf("CCM suite: %v", err)
	}
	if _, err := NextSecret(tls.TLS_AES_128_GCM_SHA256, 0x1234, secret); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("unknown version: %v", err)
	}
	if _, err := NextSecret(tls.TLS_AES_256_GCM_SHA384, wire.Version1, secret); err == nil {
		t.Error("32-byte secret accepted for a SHA-384 suite")
	}
}

// TestSealerOpenerNext checks a key update end to end: the next Sealer and
// Opener derive their AEAD key and IV from NextSecret, keep the header
// protection key ("The header protection key is not updated." RFC 9001,
// Section 6.1), and packets of one generation do not open with the other.
func TestSealerOpenerNext(t *testing.T) {
	for _, s := range suites {
		for _, v := range versions {
			secret := testSecret(s.id, 6)
			seal0, open0, err := NewKeys(s.id, v, secret)
			if err != nil {
				t.Fatal(err)
			}
			seal1, err := seal0.Next()
			if err != nil {
				t.Fatal(err)
			}
			open1, err := open0.Next()
			if err != nil {
				t.Fatal(err)
			}
			want, _ := NextSecret(s.id, v, secret)
			if !bytes.Equal(seal1.p.secret, want) || !bytes.Equal(open1.p.secret, want) {
				t.Errorf("%s/%v: Next did not use NextSecret", s.name, v)
			}
			fromSecret, _ := NewSealer(s.id, v, want)
			if seal1.p.iv != fromSecret.p.iv {
				t.Errorf("%s/%v: next IV differs from the IV of the next secret", s.name, v)
			}
			if seal1.p.iv == seal0.p.iv {
				t.Errorf("%s/%v: IV unchanged by key update", s.name, v)
			}
			if seal1.p.hp.block != seal0.p.hp.block || seal1.p.hp.chachaKey != seal0.p.hp.chachaKey {
				t.Errorf("%s/%v: header protection key changed by key update", s.name, v)
			}

			// Header protection is shared, so the old Opener reveals the
			// header of a new-generation packet (and its key phase), but
			// only the new Opener authenticates it.
			packet, pnOffset := testPacket(false, 2, 300, []byte("after key update"), 1)
			orig := append([]byte{}, packet...)
			sealed := seal1.Seal(packet, pnOffset, 2, 300)
			probe := append([]byte{}, sealed...)
			if n, err := open0.RemoveHeaderProtection(probe, pnOffset); err != nil || n != 2 || !bytes.Equal(probe[:pnOffset+2], orig[:pnOffset+2]) {
				t.Errorf("%s/%v: old header protection key cannot reveal the new header", s.name, v)
			}
			if _, err := open0.Open(probe, pnOffset, 2, 300); err == nil {
				t.Errorf("%s/%v: old keys open a new-generation packet", s.name, v)
			}
			if !openAny(open1, sealed, pnOffset) {
				t.Errorf("%s/%v: next keys do not open a new-generation packet", s.name, v)
			}
		}
	}
}

func TestAEADLimits(t *testing.T) {
	for _, c := range []struct {
		suite                      uint16
		confidentiality, integrity uint64
	}{
		{tls.TLS_AES_128_GCM_SHA256, 1 << 23, 1 << 52},
		{tls.TLS_AES_256_GCM_SHA384, 1 << 23, 1 << 52},
		{tls.TLS_CHACHA20_POLY1305_SHA256, 1 << 62, 1 << 36},
		{tls.TLS_AES_128_GCM_SHA256 + 3, 0, 0},
	} {
		if got := ConfidentialityLimit(c.suite); got != c.confidentiality {
			t.Errorf("ConfidentialityLimit(%#x) = %d, want %d", c.suite, got, c.confidentiality)
		}
		if got := IntegrityLimit(c.suite); got != c.integrity {
			t.Errorf("IntegrityLimit(%#x) = %d, want %d", c.suite, got, c.integrity)
		}
	}
	// The ChaCha20 confidentiality limit can never be reached: packet
	// numbers stop at 2^62-1.
	if uint64(wire.MaxPacketNumber) >= ChaCha20Poly1305ConfidentialityLimit {
		t.Error("ChaCha20Poly1305ConfidentialityLimit is reachable")
	}
}
