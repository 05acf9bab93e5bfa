package quic

import (
	"crypto/tls"

	"github.com/quicstack/quic/wire"
)

// versionedSessionCache keeps a client's TLS sessions apart by QUIC
// version: "Clients MUST NOT use a session ticket or token from a QUIC
// version 1 connection to initiate a QUIC version 2 connection, and vice
// versa. When a connection includes compatible version negotiation, any
// issued server tokens are considered to originate from the negotiated
// version" (RFC 9369, Section 5). It wraps the application's
// tls.ClientSessionCache for one connection: Get looks up sessions of the
// version the connection starts in, Put stores under the version it
// negotiated.
type versionedSessionCache struct {
	inner tls.ClientSessionCache
	first wire.Version
	// state is the connection; Put runs on its goroutine (crypto/tls
	// stores sessions while the connection processes CRYPTO data).
	state *connState
}

func (v *versionedSessionCache) Get(key string) (*tls.ClientSessionState, bool) {
	return v.inner.Get(key + "|" + v.first.String())
}

func (v *versionedSessionCache) Put(key string, cs *tls.ClientSessionState) {
	ver := v.first
	if v.state != nil {
		ver = v.state.version
	}
	v.inner.Put(key+"|"+ver.String(), cs)
}

// firstVersionFor returns the version a client starts a connection in:
// the first of versions, unless the session cache holds no session of
// that version for the server but one of another of versions (a server
// upgraded the last connection, RFC 9368): then that version, so that
// the session can be resumed, with 0-RTT if it allows, since a session
// must not be used to start a connection in another version (RFC 9369,
// Section 5). crypto/tls names a QUIC client's sessions by
// tls.Config.ServerName. fromSession reports whether a session decided.
func firstVersionFor(tc *tls.Config, versions []wire.Version) (v wire.Version, fromSession bool) {
	first := versions[0]
	cache := tc.ClientSessionCache
	if cache == nil || !first.IsSupported() {
		return first, false
	}
	if _, ok := cache.Get(tc.ServerName + "|" + first.String()); ok {
		return first, true
	}
	for _, v := range versions[1:] {
		if _, ok := cache.Get(tc.ServerName + "|" + v.String()); ok && v.IsSupported() {
			return v, true
		}
	}
	return first, false
}
