package main

import (
	"crypto/tls"
	"sync/atomic"

	"github.com/quicstack/quic/internal/certs"
)

// certificate holds the proxy's certificate, which reload replaces from
// its files without stopping anything: handshakes from then on use the
// new one, connections already made keep theirs.
type certificate struct {
	cur               atomic.Pointer[tls.Certificate]
	certFile, keyFile string // empty: a self-signed certificate, not reloaded
}

// get is tls.Config.GetCertificate.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cur.Load(), nil }

// reload reads the certificate files again; on error the certificate in
// use stays.
func (c *certificate) reload() error {
	if c.certFile == "" {
		return nil
	}
	cert, err := certs.Load(c.certFile, c.keyFile)
	if err != nil {
		return err
	}
	c.cur.Store(&cert)
	return nil
}
