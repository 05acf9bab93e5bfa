package handshake

import (
	"crypto/tls"
	"slices"
)

// EarlyState returns, on a server once the ClientHello was processed
// and before the handshake completes, what is known of the TLS state: the
// application protocol crypto/tls chose and the server name the client
// asked for. It returns nil before, and on a client. The connection's
// goroutine may call it after HandleCrypto returns.
func (s *CryptoSetup) EarlyState() *tls.ConnectionState { return s.early }

// noteClientHello records the early state of a ClientHello that the
// server answers with cfg, the config crypto/tls goes on with.
func (s *CryptoSetup) noteClientHello(hello *tls.ClientHelloInfo, cfg *tls.Config) {
	s.early = &tls.ConnectionState{
		ServerName:         hello.ServerName,
		NegotiatedProtocol: chosenALPN(cfg.NextProtos, hello.SupportedProtos),
	}
}

// chosenALPN is the protocol crypto/tls's server picks: the first of its
// own protocols that the client offers (the server's preference, as in
// RFC 7301, Section 3.2, "the server will select one of the protocols
// advertised by the client"). "" when there is none, which fails the
// handshake of a QUIC connection (RFC 9001, Section 8.1).
func chosenALPN(server, client []string) string {
	for _, p := range server {
		if slices.Contains(client, p) {
			return p
		}
	}
	return ""
}
