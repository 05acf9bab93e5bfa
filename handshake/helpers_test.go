package handshake

import (
	"crypto/tls"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/quicstack/quic/wire"
)

// unhex decodes hex written with any whitespace, as in the RFC text.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// suites lists the cipher suites QUIC packet protection supports.
var suites = []struct {
	name string
	id   uint16
}{
	{"AES128GCM", tls.TLS_AES_128_GCM_SHA256},
	{"AES256GCM", tls.TLS_AES_256_GCM_SHA384},
	{"ChaCha20Poly1305", tls.TLS_CHACHA20_POLY1305_SHA256},
}

var versions = []wire.Version{wire.Version1, wire.Version2}

// testSecret returns a deterministic traffic secret of the right length for
// suite.
func testSecret(suite uint16, seed byte) []byte {
	b := make([]byte, suiteFor(suite).hash.size())
	for i := range b {
		b[i] = seed + byte(i)*7
	}
	return b
}

// withCap returns a copy of b with room for extra more bytes.
func withCap(b []byte, extra int) []byte {
	c := make([]byte, len(b), len(b)+extra)
	copy(c, b)
	return c
}
