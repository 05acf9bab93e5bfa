package handshake

import (
	"bytes"
	"crypto/tls"
	"errors"
	"testing"

	"github.com/quicstack/quic/wire"
)

// TestPacketKeysRFC checks the key, IV and header protection key derived
// from the Initial secrets (Appendix A.1) and from the ChaCha20-Poly1305
// secret (Appendix A.5) of RFC 9001 and RFC 9369, and that the Sealer built
// from each secret holds that IV.
func TestPacketKeysRFC(t *testing.T) {
	for _, vs := range rfcVectorSets {
		for _, c := range []struct {
			name        string
			suite       uint16
			secret      string
			key, iv, hp string
		}{
			{"client Initial", tls.TLS_AES_128_GCM_SHA256, vs.clientSecret, vs.clientKey, vs.clientIV, vs.clientHP},
			{"server Initial", tls.TLS_AES_128_GCM_SHA256, vs.serverSecret, vs.serverKey, vs.serverIV, vs.serverHP},
			{"A.5 ChaCha20", tls.TLS_CHACHA20_POLY1305_SHA256, vs.chachaSecret, vs.chachaKey, vs.chachaIV, vs.chachaHP},
		} {
			s, vp := suiteFor(c.suite), paramsFor(vs.version)
			secret := unhex(t, c.secret)
			var keyBuf [maxKeyLen]byte
			var ivBuf [ivLen]byte
			if err := deriveKeyIV(s, vp, secret, &keyBuf, &ivBuf); err != nil {
				t.Fatal(err)
			}
			key, iv := keyBuf[:s.keyLen], ivBuf[:]
			hp := make([]byte, s.keyLen)
			if err := deriveHPKey(s, vp, secret, hp); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(key, unhex(t, c.key)) {
				t.Errorf("%s %s: key = %x, want %s", vs.rfc, c.name, key, c.key)
			}
			if !bytes.Equal(iv, unhex(t, c.iv)) {
				t.Errorf("%s %s: iv = %x, want %s", vs.rfc, c.name, iv, c.iv)
			}
			if !bytes.Equal(hp, unhex(t, c.hp)) {
				t.Errorf("%s %s: hp = %x, want %s", vs.rfc, c.name, hp, c.hp)
			}
			seal, err := NewSealer(c.suite, vs.version, secret)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(seal.p.iv[:], iv) {
				t.Errorf("%s %s: Sealer IV = %x, want %x", vs.rfc, c.name, seal.p.iv, iv)
			}
		}
	}
}

// TestNonceRFC checks the nonce of RFC 9001 and RFC 9369, Appendix A.5.
func TestNonceRFC(t *testing.T) {
	for _, vs := range rfcVectorSets {
		s, err := NewSealer(tls.TLS_CHACHA20_POLY1305_SHA256, vs.version, unhex(t, vs.chachaSecret))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.p.nonceFor(chachaPN); !bytes.Equal(got, unhex(t, vs.chachaNonce)) {
			t.Errorf("%s: nonce = %x, want %s", vs.rfc, got, vs.chachaNonce)
		}
	}
}

// TestNonceMaxPacketNumber checks that all 62 bits of the packet number
// reach the nonce and nothing beyond them does.
func TestNonceMaxPacketNumber(t *testing.T) {
	s, err := NewSealer(tls.TLS_AES_128_GCM_SHA256, wire.Version1, testSecret(tls.TLS_AES_128_GCM_SHA256, 1))
	if err != nil {
		t.Fatal(err)
	}
	got := s.p.nonceFor(wire.MaxPacketNumber)
	want := s.p.iv
	want[4] ^= 0x3f
	for i := 5; i < 12; i++ {
		want[i] ^= 0xff
	}
	if !bytes.Equal(got, want[:]) {
		t.Errorf("nonce(2^62-1) = %x, want %x", got, want)
	}
}

// TestHeaderProtectionMaskRFC checks mask = header_protection(hp, sample)
// for the AES samples of Appendix A.2 and A.3 and the ChaCha20 sample of
// Appendix A.5.
func TestHeaderProtectionMaskRFC(t *testing.T) {
	for _, vs := range rfcVectorSets {
		for _, c := range []struct {
			name                 string
			suite                uint16
			secret, sample, mask string
		}{
			{"A.2", tls.TLS_AES_128_GCM_SHA256, vs.clientSecret, vs.clientSample, vs.clientMask},
			{"A.3", tls.TLS_AES_128_GCM_SHA256, vs.serverSecret, vs.serverSample, vs.serverMask},
			{"A.5", tls.TLS_CHACHA20_POLY1305_SHA256, vs.chachaSecret, vs.chachaSample, vs.chachaMask},
		} {
			o, err := NewOpener(c.suite, vs.version, unhex(t, c.secret))
			if err != nil {
				t.Fatal(err)
			}
			if got := o.p.hp.mask(unhex(t, c.sample)); !bytes.Equal(got, unhex(t, c.mask)) {
				t.Errorf("%s %s: mask = %x, want %s", vs.rfc, c.name, got, c.mask)
			}
		}
	}
}

// TestChaChaMaskCounterEdge checks that a sample whose counter is 2^32-1,
// the last block ChaCha20 can produce, gives a mask without panicking.
func TestChaChaMaskCounterEdge(t *testing.T) {
	o, err := NewOpener(tls.TLS_CHACHA20_POLY1305_SHA256, wire.Version1, testSecret(tls.TLS_CHACHA20_POLY1305_SHA256, 3))
	if err != nil {
		t.Fatal(err)
	}
	sample := bytes.Repeat([]byte{0xff}, 16)
	if m := o.p.hp.mask(sample); len(m) != 5 {
		t.Fatalf("mask length %d", len(m))
	}
}

func TestNewKeysErrors(t *testing.T) {
	good := testSecret(tls.TLS_AES_128_GCM_SHA256, 0)
	for _, c := range []struct {
		name   string
		suite  uint16
		v      wire.Version
		secret []byte
		want   error
	}{
		{"CCM suite", tls.TLS_AES_128_GCM_SHA256 + 3, wire.Version1, good, ErrUnsupportedCipherSuite},
		{"TLS 1.2 suite", tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, wire.Version1, good, ErrUnsupportedCipherSuite},
		{"draft version", tls.TLS_AES_128_GCM_SHA256, 0xff00001d, good, ErrUnsupportedVersion},
		{"short secret", tls.TLS_AES_128_GCM_SHA256, wire.Version1, good[:31], errSecretLen},
		{"SHA-256 secret for SHA-384 suite", tls.TLS_AES_256_GCM_SHA384, wire.Version1, good, errSecretLen},
	} {
		if _, err := NewSealer(c.suite, c.v, c.secret); !errors.Is(err, c.want) {
			t.Errorf("%s: NewSealer error %v, want %v", c.name, err, c.want)
		}
		if _, err := NewOpener(c.suite, c.v, c.secret); !errors.Is(err, c.want) {
			t.Errorf("%s: NewOpener error %v, want %v", c.name, err, c.want)
		}
		if _, _, err := NewKeys(c.suite, c.v, c.secret); !errors.Is(err, c.want) {
			t.Errorf("%s: NewKeys error %v, want %v", c.name, err, c.want)
		}
	}
}

// TestNewInitialKeysDirections checks that a client's Sealer matches the
// server's Opener and the other way round, and that they differ.
func TestNewInitialKeysDirections(t *testing.T) {
	cid := unhex(t, testConnID)
	for _, v := range versions {
		cs, co := NewInitialKeys(v, cid, true)
		ss, so := NewInitialKeys(v, cid, false)
		for _, p := range []*protection{&cs.p, &co.p, &ss.p, &so.p} {
			if p.aead != nil {
				t.Errorf("%v: Initial keys derived before first use", v)
			}
			p.ready()
		}
		if cs.p.iv != so.p.iv || ss.p.iv != co.p.iv || cs.p.iv == ss.p.iv {
			t.Errorf("%v: Initial key directions mixed up", v)
		}
		if cs.Suite() != tls.TLS_AES_128_GCM_SHA256 || co.Suite() != tls.TLS_AES_128_GCM_SHA256 {
			t.Errorf("%v: Initial suite %#x/%#x", v, cs.Suite(), co.Suite())
		}
		if cs.Overhead() != 16 || co.Overhead() != 16 {
			t.Errorf("%v: Overhead %d/%d", v, cs.Overhead(), co.Overhead())
		}
	}
}
