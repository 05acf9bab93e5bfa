package handshake

import (
	"context"
	"crypto/tls"
	"slices"

	"github.com/quicstack/quic/wire"
)

// extensionPSKKeyExchangeModes is the psk_key_exchange_modes extension
// (RFC 8446, Section 4.2.9).
const extensionPSKKeyExchangeModes = 45

// extensionPreSharedKey and extensionEarlyData are the pre_shared_key and
// early_data extensions (RFC 8446, Section 4.2): a ClientHello with the
// first tries to resume a session, with the second offers 0-RTT.
const (
	extensionPreSharedKey = 41
	extensionEarlyData    = 42
)

// helloObserverKey is the context key under which a server's CryptoSetup
// passes itself to the GetConfigForClient hook of observeClientHello.
type helloObserverKey struct{}

// observeClientHello wraps c.GetConfigForClient, which crypto/tls calls
// with every ClientHello a server receives, so that the connection's
// CryptoSetup learns whether the client offered psk_key_exchange_modes; the
// user's hook, if any, is called as before.
//
// A client without it cannot resume a session: "Servers SHOULD NOT send
// NewSessionTicket with tickets that are not compatible with the
// advertised modes" (RFC 8446, Section 4.2.9). crypto/tls's server follows
// this over TCP, but QUICConn.SendSessionTicket does not check, so the
// CryptoSetup does: a Go client without a ClientSessionCache, for one,
// omits the extension, and a server spares itself sealing a ticket and
// the client receiving one it would drop. Over TCP crypto/tls also
// requires psk_dhe_ke among the modes; ClientHelloInfo does not show them,
// so a client offering only psk_ke (none of Go's, BoringSSL's or NSS's
// does) still gets a ticket it cannot use.
func observeClientHello(c *tls.Config) {
	user := c.GetConfigForClient
	c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		// The hook runs on crypto/tls's handshake goroutine while the
		// connection's goroutine waits in QUICConn.HandleData, which
		// orders these writes before the connection's reads.
		s, _ := hello.Context().Value(helloObserverKey{}).(*CryptoSetup)
		if s != nil {
			s.helloSeen = true
			s.helloOffersPSK = slices.Contains(hello.Extensions, extensionPSKKeyExchangeModes)
			s.resumeOffered = slices.Contains(hello.Extensions, extensionPreSharedKey)
			s.helloOffersEarly = slices.Contains(hello.Extensions, extensionEarlyData)
		}
		var cfg *tls.Config
		var err error
		if user != nil {
			cfg, err = user(hello)
		}
		if s != nil && err == nil {
			if cfg != nil {
				s.noteClientHello(hello, cfg)
			} else {
				s.noteClientHello(hello, c)
			}
		}
		return cfg, err
	}
}

// observedContext returns the context a server's handshake starts with, in
// which observeClientHello's hook finds s.
func (s *CryptoSetup) observedContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, helloObserverKey{}, s)
}

// sendsSessionTicket reports whether a server sends a session ticket: not
// to a client whose ClientHello, as observeClientHello saw it, lacked
// psk_key_exchange_modes. Without the hook (a Config not made by
// PrepareTLSConfig) it does.
func (s *CryptoSetup) sendsSessionTicket() bool {
	return !s.helloSeen || s.helloOffersPSK
}

// ResumptionOffered reports whether the client tried to resume a session:
// on a server, its ClientHello carried a pre_shared_key extension (as
// observeClientHello saw it); on a client, a session was taken from its
// ClientSessionCache.
func (s *CryptoSetup) ResumptionOffered() bool { return s.resumeOffered }

// EarlyDataOffered reports whether 0-RTT was offered: on a server, the
// ClientHello carried the early_data extension; on a client, 0-RTT keys
// were installed.
func (s *CryptoSetup) EarlyDataOffered() bool {
	if s.role == wire.RoleClient {
		return s.earlyOffered
	}
	return s.helloOffersEarly
}
