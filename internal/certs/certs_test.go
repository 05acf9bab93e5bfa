package certs

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

func TestSelfSignedAndLoad(t *testing.T) {
	c, pool, err := SelfSigned(DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range DefaultHosts {
		if err := c.Leaf.VerifyHostname(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if _, err := c.Leaf.Verify(x509VerifyOptions(pool)); err != nil {
		t.Errorf("the pool does not verify the certificate: %v", err)
	}
	h := sha256.Sum256(c.Leaf.RawSubjectPublicKeyInfo)
	if SPKIHash(c.Leaf) != base64.StdEncoding.EncodeToString(h[:]) || len(SPKIHash(c.Leaf)) != 44 {
		t.Errorf("SPKIHash %q", SPKIHash(c.Leaf))
	}
	dir := t.TempDir()
	certFile := filepath.Join(dir, "cert.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600)
	if _, err := LoadPool(certFile); err != nil {
		t.Error(err)
	}
	if _, err := LoadPool(filepath.Join(dir, "none")); err == nil {
		t.Error("LoadPool of a missing file succeeded")
	}
	if _, err := Load(certFile, ""); err == nil {
		t.Error("Load without a key succeeded")
	}
}
