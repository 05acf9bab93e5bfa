package handshake

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"testing"

	"github.com/quicstack/quic/wire"
)

// TestInitialSecrets checks RFC 9001, Appendix A.1 and RFC 9369, Appendix
// A.1: the common initial secret (which checks the salt) and the client and
// server Initial secrets.
func TestInitialSecrets(t *testing.T) {
	for _, vs := range rfcVectorSets {
		cid := unhex(t, testConnID)
		initial, err := hkdf.Extract(sha256.New, cid, paramsFor(vs.version).initialSalt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(initial, unhex(t, vs.initialSecret)) {
			t.Errorf("%s: initial_secret = %x, want %s", vs.rfc, initial, vs.initialSecret)
		}
		client, server := InitialSecrets(vs.version, cid)
		if !bytes.Equal(client, unhex(t, vs.clientSecret)) {
			t.Errorf("%s: client_initial_secret = %x, want %s", vs.rfc, client, vs.clientSecret)
		}
		if !bytes.Equal(server, unhex(t, vs.serverSecret)) {
			t.Errorf("%s: server_initial_secret = %x, want %s", vs.rfc, server, vs.serverSecret)
		}
	}
}

// TestInitialSecretsConnIDLengths covers the 0 to 20 byte range the Note of
// RFC 9001, Section 5.2 allows, and that versions yield different secrets.
func TestInitialSecretsConnIDLengths(t *testing.T) {
	for n := 0; n <= wire.MaxConnectionIDLen; n++ {
		cid := bytes.Repeat([]byte{0xa5}, n)
		c1, s1 := InitialSecrets(wire.Version1, cid)
		c2, s2 := InitialSecrets(wire.Version2, cid)
		if len(c1) != 32 || len(s1) != 32 || bytes.Equal(c1, s1) || bytes.Equal(c1, c2) || bytes.Equal(s1, s2) {
			t.Errorf("len %d: secrets not distinct 32-byte values", n)
		}
	}
}

func TestInitialSecretsUnsupportedVersion(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("InitialSecrets(0xff00001d) did not panic")
		}
	}()
	InitialSecrets(0xff00001d, []byte{1, 2, 3, 4, 5, 6, 7, 8})
}
