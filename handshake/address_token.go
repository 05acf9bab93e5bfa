package handshake

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/quicstack/quic/wire"
)

// Address-validation tokens (RFC 9000, Section 8.1).
//
// A token is what a server hands a client so that a later Initial packet from
// the same address proves the address without another round trip: in a Retry
// packet (Section 8.1.2) or in a NEW_TOKEN frame for a future connection
// (Section 8.1.3). "A token SHOULD be constructed for the server to easily
// distinguish it from tokens that are sent in Retry packets" and "there is
// no need for a single well-defined format for the token because the server
// that generates the token also consumes it" (Section 8.1.1).
//
// Encoding: kind (4 bytes, in clear) | nonce (12 bytes) | AES-256-GCM
// sealed body | tag (16 bytes). The kind is 4 bytes so that a token of
// another server (of another implementation, at the same name before)
// passes for one of our Retry tokens, whose failure closes the connection
// with INVALID_TOKEN (Section 8.1.2), once in 2^32 rather than once in
// 256 times; other invalid tokens only leave the address unvalidated
// (Section 8.1.3). The body is the issue time (Unix microseconds,
// 8 bytes) and, for Retry tokens, the original destination connection ID and
// the Retry source connection ID, each with a one-byte length. The client's
// address is not stored: it is the additional authenticated data, so a token
// presented from another address fails authentication. Retry tokens bind the
// IP address and port (the client answers a Retry from the same socket);
// NEW_TOKEN tokens bind only the IP address, since the client's port
// changes between connections.

// The kinds of token: the first byte says which, the next three mark the
// format.
var (
	tokenKindRetry    = [tokenKindLen]byte{'R', 'q', 's', 't'}
	tokenKindNewToken = [tokenKindLen]byte{'N', 'q', 's', 't'}
)

const (
	tokenKindLen   = 4
	tokenNonceLen  = 12
	tokenTagLen    = 16
	tokenHeaderLen = tokenKindLen + tokenNonceLen
	tokenTimeLen   = 8
	// tokenMaxBodyLen is a Retry body with two 20-byte connection IDs.
	tokenMaxBodyLen = tokenTimeLen + 2*(1+wire.MaxConnectionIDLen)
	// MaxAddressTokenLen is the longest token a TokenProtector issues.
	MaxAddressTokenLen = tokenHeaderLen + tokenMaxBodyLen + tokenTagLen
	// tokenMaxClockSkew is how far in the future an issue time may lie, so
	// servers of a fleet with slightly different clocks accept each
	// other's tokens.
	tokenMaxClockSkew = 30 * time.Second
)

// Errors returned by TokenProtector.Open. All of them mean the token does not
// validate the client's address; a server that receives one in an Initial
// packet after a Retry closes with INVALID_TOKEN (RFC 9000, Section 8.1.2),
// and otherwise treats the client's address as unvalidated
// (Section 8.1.3).
var (
	// ErrTokenInvalid is returned for tokens that are malformed, forged,
	// issued by a server with another key, or presented from another
	// address.
	ErrTokenInvalid = errors.New("handshake: invalid address token")
	// ErrTokenExpired is returned for authentic tokens older than their
	// lifetime, or issued implausibly far in the future.
	ErrTokenExpired = errors.New("handshake: expired address token")
)

// An AddressToken is the content of a validated address token.
type AddressToken struct {
	// IsRetry reports whether the token was sent in a Retry packet rather
	// than a NEW_TOKEN frame.
	IsRetry bool
	// IssuedAt is when the token was made, to microsecond precision.
	IssuedAt time.Time
	// OriginalDestConnID is the destination connection ID of the client's
	// first Initial packet, which the server must echo in the
	// original_destination_connection_id transport parameter after a Retry
	// (RFC 9000, Section 7.3). Set for Retry tokens only.
	OriginalDestConnID wire.ConnectionID
	// RetrySrcConnID is the source connection ID of the Retry packet, for
	// the retry_source_connection_id transport parameter. Set for Retry
	// tokens only.
	RetrySrcConnID wire.ConnectionID
	// ID identifies the token, for servers that accept each token once
	// (RFC 9000, Section 8.1.4): its authentication tag, unique to the
	// token and the same for every server sharing the key.
	ID [16]byte
}

// A TokenProtector issues and validates address-validation tokens under one
// key. Servers of a fleet that share the key accept each other's tokens.
// A TokenProtector is safe for concurrent use.
type TokenProtector struct {
	aead    cipher.AEAD // the key, unless ring is set
	ring    *EpochKeys  // rotating keys (NewRotatingTokenProtector)
	scratch sync.Pool   // of *tokenScratch; keeps AEAD inputs off the heap
}

// tokenScratch holds the buffers that would escape through the cipher.AEAD
// interface if they lived on the stack.
type tokenScratch struct {
	ad   [tokenADLen]byte
	body [tokenMaxBodyLen]byte
}

func (p *TokenProtector) getScratch() *tokenScratch {
	if s, ok := p.scratch.Get().(*tokenScratch); ok {
		return s
	}
	return new(tokenScratch)
}

// NewTokenProtector returns a TokenProtector whose AES-256-GCM key is derived
// from key with HKDF-SHA256. key should hold at least 16 bytes of secret
// randomness; it may be any length, so operators can use a passphrase-sized
// secret from their configuration system.
func NewTokenProtector(key []byte) (*TokenProtector, error) {
	if len(key) == 0 {
		return nil, errors.New("handshake: empty token key")
	}
	k, err := hkdf.Key(sha256.New, key, nil, "quicstack address token v1", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &TokenProtector{aead: aead}, nil
}

// NewRotatingTokenProtector returns a TokenProtector whose key changes
// every epoch of keys: tokens are sealed with the key of the epoch they
// are issued in, and those of the two neighbouring epochs are accepted
// too, so that a token issued just before a rotation, or by a server of
// the fleet whose clock is slightly ahead, still validates.
func NewRotatingTokenProtector(keys *EpochKeys) *TokenProtector {
	return &TokenProtector{ring: keys}
}

// sealer returns the AEAD that seals tokens issued at now.
func (p *TokenProtector) sealer(now time.Time) cipher.AEAD {
	if p.ring == nil {
		return p.aead
	}
	return p.ring.AEAD(p.ring.Epoch(now))
}

// AppendRetryToken appends a token for a Retry packet sent to client at time
// now, remembering the client's original destination connection ID and the
// Retry packet's source connection ID (RFC 9000, Section 8.1.2).
func (p *TokenProtector) AppendRetryToken(b []byte, now time.Time, client netip.AddrPort, odcid, retrySrcConnID wire.ConnectionID) []byte {
	s := p.getScratch()
	defer p.scratch.Put(s)
	body := s.body[:]
	n := putTokenTime(body, now)
	body[n] = byte(odcid.Len())
	n++
	n += copy(body[n:], odcid.Bytes())
	body[n] = byte(retrySrcConnID.Len())
	n++
	n += copy(body[n:], retrySrcConnID.Bytes())
	return p.seal(b, tokenKindRetry, body[:n], tokenAD(&s.ad, tokenKindRetry[0], client), now)
}

// AppendNewToken appends a token for a NEW_TOKEN frame sent at time now to a
// client at address client, for use in a future connection
// (RFC 9000, Section 8.1.3).
func (p *TokenProtector) AppendNewToken(b []byte, now time.Time, client netip.Addr) []byte {
	s := p.getScratch()
	defer p.scratch.Put(s)
	n := putTokenTime(s.body[:], now)
	return p.seal(b, tokenKindNewToken, s.body[:n], tokenAD(&s.ad, tokenKindNewToken[0], netip.AddrPortFrom(client, 0)), now)
}

// IsRetryToken reports whether token looks like a Retry token of this
// format, without authenticating it, so a server can choose between the
// rules of RFC 9000, Section 8.1.2 and 8.1.3 before paying for decryption.
func IsRetryToken(token []byte) bool {
	return len(token) >= tokenKindLen && [tokenKindLen]byte(token) == tokenKindRetry
}

// Open authenticates token as presented by client at time now and returns
// its content. Retry tokens older than retryLifetime and NEW_TOKEN tokens
// older than newTokenLifetime return ErrTokenExpired; RFC 9000,
// Section 8.1.3 asks that Retry tokens have a short lifetime ("A token
// issued with NEW_TOKEN ... SHOULD include an expiration time"). Anything
// else that fails returns ErrTokenInvalid. Malformed tokens are rejected
// before any decryption; Open allocates at most one small buffer.
func (p *TokenProtector) Open(token []byte, client netip.AddrPort, now time.Time, retryLifetime, newTokenLifetime time.Duration) (AddressToken, error) {
	var t AddressToken
	if len(token) < tokenHeaderLen+tokenTimeLen+tokenTagLen || len(token) > MaxAddressTokenLen {
		return t, ErrTokenInvalid
	}
	kind := [tokenKindLen]byte(token)
	lifetime := newTokenLifetime
	switch kind {
	case tokenKindRetry:
		t.IsRetry = true
		lifetime = retryLifetime
	case tokenKindNewToken:
		client = netip.AddrPortFrom(client.Addr(), 0)
	default:
		return t, ErrTokenInvalid
	}
	s := p.getScratch()
	defer p.scratch.Put(s)
	body, err := p.open(s, token, tokenAD(&s.ad, kind[0], client), now)
	if err != nil || len(body) < tokenTimeLen {
		return t, ErrTokenInvalid
	}
	copy(t.ID[:], token[len(token)-tokenTagLen:])
	t.IssuedAt = time.UnixMicro(int64(binary.BigEndian.Uint64(body)))
	body = body[tokenTimeLen:]
	if t.IsRetry {
		var ok bool
		if t.OriginalDestConnID, body, ok = takeTokenConnID(body); !ok {
			return t, ErrTokenInvalid
		}
		if t.RetrySrcConnID, body, ok = takeTokenConnID(body); !ok {
			return t, ErrTokenInvalid
		}
	}
	if len(body) != 0 {
		return t, ErrTokenInvalid
	}
	if now.Sub(t.IssuedAt) > lifetime || t.IssuedAt.Sub(now) > tokenMaxClockSkew {
		return t, ErrTokenExpired
	}
	return t, nil
}

// open decrypts token into s.body: with the key, or with the keys of the
// epochs around now, the current one first.
func (p *TokenProtector) open(s *tokenScratch, token, ad []byte, now time.Time) ([]byte, error) {
	nonce, sealed := token[tokenKindLen:tokenHeaderLen], token[tokenHeaderLen:]
	if p.ring == nil {
		return p.aead.Open(s.body[:0], nonce, sealed, ad)
	}
	e := p.ring.Epoch(now)
	var err error
	for _, ep := range [...]uint64{e, e - 1, e + 1} {
		var body []byte
		if body, err = p.ring.AEAD(ep).Open(s.body[:0], nonce, sealed, ad); err == nil {
			return body, nil
		}
	}
	return nil, err
}

func (p *TokenProtector) seal(b []byte, kind [tokenKindLen]byte, body, ad []byte, now time.Time) []byte {
	b = append(b, kind[:]...)
	nonceAt := len(b)
	b = append(b, make([]byte, tokenNonceLen)...)
	nonce := b[nonceAt : nonceAt+tokenNonceLen]
	rand.Read(nonce) // never fails (crypto/rand, Go 1.24+)
	return p.sealer(now).Seal(b, nonce, body, ad)
}

// tokenADLen is kind + 16-byte IP address + 2-byte port.
const tokenADLen = 1 + 16 + 2

// tokenAD writes the additional authenticated data binding a token to its
// kind and the client's address. IPv4 addresses are used in their
// IPv4-mapped IPv6 form so that a dual-stack socket reporting either form
// gives the same result.
func tokenAD(ad *[tokenADLen]byte, kind byte, client netip.AddrPort) []byte {
	ad[0] = kind
	a16 := client.Addr().Unmap().As16() // IPv4 in IPv4-mapped form
	copy(ad[1:], a16[:])
	binary.BigEndian.PutUint16(ad[17:], client.Port())
	return ad[:]
}

func putTokenTime(b []byte, now time.Time) int {
	binary.BigEndian.PutUint64(b, uint64(now.UnixMicro()))
	return tokenTimeLen
}

func takeTokenConnID(b []byte) (wire.ConnectionID, []byte, bool) {
	if len(b) < 1 || int(b[0]) > wire.MaxConnectionIDLen || len(b) < 1+int(b[0]) {
		return wire.ConnectionID{}, nil, false
	}
	n := int(b[0])
	return wire.NewConnectionID(b[1 : 1+n]), b[1+n:], true
}
