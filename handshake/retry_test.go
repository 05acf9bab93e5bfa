package handshake

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"sync"
	"testing"

	"github.com/quicstack/quic/wire"
)

// TestRetryRFC checks the Retry packets of RFC 9001 and RFC 9369, Appendix
// A.4, which answer the client Initial with Destination Connection ID
// 0x8394c8f03e515708: the tag computed over the pseudo-packet, the tag
// appended to the Retry packet, and verification.
func TestRetryRFC(t *testing.T) {
	odcid := unhex(t, testConnID)
	for _, vs := range rfcVectorSets {
		retry := unhex(t, vs.retry)
		body := retry[:len(retry)-RetryIntegrityTagLen]
		pseudo := append(append([]byte{byte(len(odcid))}, odcid...), body...)
		if tag := RetryIntegrityTag(vs.version, pseudo); !bytes.Equal(tag[:], retry[len(body):]) {
			t.Errorf("%s: tag = %x, want %x", vs.rfc, tag, retry[len(body):])
		}
		if got := AppendRetryIntegrityTag(append([]byte{}, body...), vs.version, odcid); !bytes.Equal(got, retry) {
			t.Errorf("%s: AppendRetryIntegrityTag = %x, want %x", vs.rfc, got, retry)
		}
		if !VerifyRetryIntegrity(vs.version, odcid, retry) {
			t.Errorf("%s: valid Retry rejected", vs.rfc)
		}
	}
}

// TestRetryRejects checks that Retry packets "that have a Retry Integrity
// Tag that cannot be validated" are rejected (RFC 9000, Section 17.2.5.2):
// any flipped bit, another ODCID, the other version's key, truncation, an
// unknown version.
func TestRetryRejects(t *testing.T) {
	odcid := unhex(t, testConnID)
	for _, vs := range rfcVectorSets {
		retry := unhex(t, vs.retry)
		buf := make([]byte, len(retry))
		for bit := range 8 * len(retry) {
			copy(buf, retry)
			buf[bit/8] ^= 1 << (bit % 8)
			if VerifyRetryIntegrity(vs.version, odcid, buf) {
				t.Errorf("%s: Retry with bit %d flipped accepted", vs.rfc, bit)
			}
		}
		other := append([]byte{}, odcid...)
		other[0] ^= 1
		for _, c := range []struct {
			name   string
			v      wire.Version
			odcid  []byte
			packet []byte
		}{
			{"other ODCID", vs.version, other, retry},
			{"ODCID prefix", vs.version, odcid[:7], retry},
			{"empty ODCID", vs.version, nil, retry},
			{"ODCID too long", vs.version, make([]byte, 21), retry},
			{"other version's key", wire.Version1 ^ wire.Version2 ^ vs.version, odcid, retry},
			{"unknown version", 0xff00001d, odcid, retry},
			{"truncated", vs.version, odcid, retry[:len(retry)-1]},
			{"tag only", vs.version, odcid, retry[len(retry)-16:]},
			{"shorter than tag", vs.version, odcid, retry[:15]},
			{"empty", vs.version, odcid, nil},
		} {
			if VerifyRetryIntegrity(c.v, c.odcid, c.packet) {
				t.Errorf("%s: %s accepted", vs.rfc, c.name)
			}
		}
	}
}

// TestRetryKeysDerived checks that the fixed Retry keys and nonces are the
// ones HKDF-Expand-Label derives from the published secrets (RFC 9001,
// Section 5.8; RFC 9369, Section 3.3.3).
func TestRetryKeysDerived(t *testing.T) {
	for _, c := range []struct {
		v      wire.Version
		secret string
		key    [16]byte
		nonce  [12]byte
	}{
		{wire.Version1, "d9c9943e6101fd200021506bcc02814c73030f25c79d71ce876eca876e6fca8e", retryKeyV1, retryNonceV1},
		{wire.Version2, "c4dd2484d681aefa4ff4d69c2c20299984a765a5d3c31982f38fc74162155e9f", retryKeyV2, retryNonceV2},
	} {
		p := paramsFor(c.v)
		key, err := expandLabel(kdfSHA256, unhex(t, c.secret), p.keyLabel, 16)
		if err != nil {
			t.Fatal(err)
		}
		nonce, err := expandLabel(kdfSHA256, unhex(t, c.secret), p.ivLabel, 12)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(key, c.key[:]) || !bytes.Equal(nonce, c.nonce[:]) {
			t.Errorf("%v: derived key %x nonce %x, want %x %x", c.v, key, nonce, c.key, c.nonce)
		}
	}
	// RFC 9369: "The secret is the sha256sum of "QUICv2 retry secret"."
	if sum := sha256.Sum256([]byte("QUICv2 retry secret")); !bytes.Equal(sum[:], unhex(t, "c4dd2484d681aefa4ff4d69c2c20299984a765a5d3c31982f38fc74162155e9f")) {
		t.Errorf("sha256(\"QUICv2 retry secret\") = %x", sum)
	}
}

// TestRetryTagIsGCM recomputes the v1 tag with a fresh AES-128-GCM, as a
// cross-check that the cached AEAD is the plain RFC 9001 construction.
func TestRetryTagIsGCM(t *testing.T) {
	b, _ := aes.NewCipher(retryKeyV1[:])
	aead, _ := cipher.NewGCM(b)
	pseudo := []byte("any pseudo-packet")
	want := aead.Seal(nil, retryNonceV1[:], nil, pseudo)
	if got := RetryIntegrityTag(wire.Version1, pseudo); !bytes.Equal(got[:], want) {
		t.Errorf("tag %x, want %x", got, want)
	}
}

func TestRetryUnsupportedVersionPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"RetryIntegrityTag":       func() { RetryIntegrityTag(0x1234, nil) },
		"AppendRetryIntegrityTag": func() { AppendRetryIntegrityTag(nil, 0x1234, nil) },
		"long ODCID":              func() { AppendRetryIntegrityTag(nil, wire.Version1, make([]byte, 21)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestRetryConcurrent runs verification from many goroutines, for the race
// detector: the cached AEADs are shared.
func TestRetryConcurrent(t *testing.T) {
	odcid := unhex(t, testConnID)
	var wg sync.WaitGroup
	for _, vs := range rfcVectorSets {
		retry := unhex(t, vs.retry)
		for range 8 {
			wg.Go(func() {
				for range 50 {
					if !VerifyRetryIntegrity(vs.version, odcid, retry) {
						t.Error("valid Retry rejected")
						return
					}
				}
			})
		}
	}
	wg.Wait()
}
