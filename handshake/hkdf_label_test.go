package handshake

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestHKDFLabel checks the HkdfLabel encodings listed in RFC 9001,
// Appendix A.1 and RFC 9369, Appendix A.1.
func TestHKDFLabel(t *testing.T) {
	lengths := map[string]int{
		"client in": 32, "server in": 32,
		"quic key": 16, "quic iv": 12, "quic hp": 16,
		"quicv2 key": 16, "quicv2 iv": 12, "quicv2 hp": 16,
	}
	for _, vs := range rfcVectorSets {
		for label, want := range vs.labels {
			n, ok := lengths[label]
			if !ok {
				t.Fatalf("%s: no length for label %q", vs.rfc, label)
			}
			if got := hex.EncodeToString(appendHKDFLabel(nil, n, label)); got != want {
				t.Errorf("%s: hkdfLabel(%d, %q) = %s, want %s", vs.rfc, n, label, got, want)
			}
		}
	}
}

// TestHKDFExpandLabel checks HKDF-Expand-Label against the key, IV and
// header protection key of the client Initial secret in Appendix A.1.
func TestHKDFExpandLabel(t *testing.T) {
	for _, vs := range rfcVectorSets {
		p := paramsFor(vs.version)
		secret := unhex(t, vs.clientSecret)
		for _, c := range []struct {
			label string
			n     int
			want  string
		}{
			{p.keyLabel, 16, vs.clientKey},
			{p.ivLabel, 12, vs.clientIV},
			{p.hpLabel, 16, vs.clientHP},
		} {
			got, err := expandLabel(kdfSHA256, secret, c.label, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, unhex(t, c.want)) {
				t.Errorf("%s: HKDF-Expand-Label(%q) = %x, want %s", vs.rfc, c.label, got, c.want)
			}
		}
	}
}

func TestHKDFLabelOutOfRange(t *testing.T) {
	for _, c := range []struct {
		n     int
		label string
	}{{-1, "x"}, {1 << 16, "x"}, {16, string(make([]byte, 250))}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("hkdfLabel(%d, len %d) did not panic", c.n, len(c.label))
				}
			}()
			appendHKDFLabel(nil, c.n, c.label)
		}()
	}
}
