package handshake

import (
	"crypto/cipher"
	"encoding/binary"

	"github.com/quicstack/quic/wire"
)

// ivLen is the length of the packet protection IV: "The Length provided
// with "quic iv" is the minimum length of the AEAD nonce or 8 bytes if that
// is larger" (RFC 9001, Section 5.1). All three suites use 12-byte nonces.
const ivLen = 12

// tagLen is the AEAD expansion: the suites QUIC uses "have a 16-byte
// authentication tag and produce an output 16 bytes larger than their
// input" (RFC 9001, Section 5.3).
const tagLen = 16

// protection is the key material of one direction at one encryption level:
// the AEAD, its IV and the header protection key (RFC 9001, Section 5.1),
// plus what is needed to derive the next key generation.
type protection struct {
	suite   *suiteParams
	version *versionParams
	secret  []byte // traffic secret the AEAD key and IV come from
	// aead is nil until the keys are derived from secret: Initial keys
	// are derived on first use (see newLazyProtection).
	aead  cipher.AEAD
	iv    [ivLen]byte
	nonce [ivLen]byte // scratch for the per-packet nonce
	hp    headerProtector
}

// maxKeyLen is the longest AEAD or header protection key: 32 bytes for
// AES-256 and ChaCha20.
const maxKeyLen = 32

// newProtection derives key, IV and header protection key from secret.
func newProtection(suite uint16, v wire.Version, secret []byte) (protection, error) {
	var hpKey [maxKeyLen]byte
	defer clear(hpKey[:])
	return newProtectionKeepHP(suite, v, secret, &hpKey)
}

// newProtectionKeepHP is newProtection that leaves the header protection
// key in hpKey (its first keyLen bytes), for a caller that keeps it.
func newProtectionKeepHP(suite uint16, v wire.Version, secret []byte, hpKey *[maxKeyLen]byte) (protection, error) {
	s := suiteFor(suite)
	if s == nil {
		return protection{}, ErrUnsupportedCipherSuite
	}
	vp := paramsFor(v)
	if vp == nil {
		return protection{}, ErrUnsupportedVersion
	}
	if len(secret) != s.hash.size() {
		return protection{}, errSecretLen
	}
	return newProtectionFrom(s, vp, secret, hpKey)
}

// newProtectionFrom derives the AEAD key, the IV and the header protection
// key from secret (with one keyed HMAC for the three), builds the
// protection and leaves the header protection key in hpKey.
func newProtectionFrom(s *suiteParams, vp *versionParams, secret []byte, hpKey *[maxKeyLen]byte) (protection, error) {
	var key [maxKeyLen]byte
	defer clear(key[:])
	p := protection{suite: s, version: vp}
	if err := deriveKeys(s, vp, secret, &key, &p.iv, hpKey[:s.keyLen]); err != nil {
		return protection{}, err
	}
	var err error
	if p.aead, err = s.newAEAD(key[:s.keyLen]); err != nil {
		return protection{}, err
	}
	if p.hp, err = newHeaderProtector(s, hpKey[:s.keyLen]); err != nil {
		return protection{}, err
	}
	p.secret = secret
	return p, nil
}

// newLazyProtection returns a protection for secret whose keys are
// derived when it is first used ([protection.ready]). Initial keys are made
// this way: they protect nothing secret (anyone who sees the client's first
// Initial can derive them, RFC 9001, Section 5.2), so when they are derived
// leaks nothing, and a connection makes some it never uses: a server the
// first version's write keys when it upgrades the version before sending,
// a client the first version's read keys when the server does. The
// secret's length must have been checked against the suite.
func newLazyProtection(s *suiteParams, vp *versionParams, secret []byte) protection {
	return protection{suite: s, version: vp, secret: secret}
}

// ready derives the keys of a protection made by newLazyProtection, if that
// has not happened yet. Derivation fails only for inputs that
// newLazyProtection's callers rule out, so ready panics if it does.
func (p *protection) ready() {
	if p.aead == nil {
		p.derive()
	}
}

// derive is the slow path of ready, kept apart so that ready inlines.
func (p *protection) derive() {
	var hpKey [maxKeyLen]byte
	defer clear(hpKey[:])
	q, err := newProtectionFrom(p.suite, p.version, p.secret, &hpKey)
	if err != nil {
		panic("handshake: deriving Initial keys: " + err.Error())
	}
	*p = q
}

// newProtectionHP derives key and IV from secret and takes the header
// protection key as given: after a key update the secret is no longer the
// one the header protection key came from (RFC 9001, Section 6.1).
func newProtectionHP(s *suiteParams, vp *versionParams, secret, hpKey []byte) (protection, error) {
	p := protection{suite: s, version: vp}
	if err := p.setSecret(secret); err != nil {
		return protection{}, err
	}
	var err error
	if p.hp, err = newHeaderProtector(s, hpKey); err != nil {
		return protection{}, err
	}
	return p, nil
}

// deriveKeyIV derives the AEAD key (the first s.keyLen bytes of key) and
// the IV from a traffic secret: "The current encryption level secret and
// the label "quic key" are input to the KDF to produce the AEAD key; the
// label "quic iv" is used to derive the Initialization Vector (IV)"
// (RFC 9001, Section 5.1; "quicv2 key" and "quicv2 iv" in version 2,
// RFC 9369, Section 3.3.2).
func deriveKeyIV(s *suiteParams, vp *versionParams, secret []byte, key *[maxKeyLen]byte, iv *[ivLen]byte) error {
	return s.hash.hkdfExpandLabels(secret, labelOut{key[:s.keyLen], vp.keyLabel}, labelOut{iv[:], vp.ivLabel})
}

// deriveKeys is deriveKeyIV and deriveHPKey together, hp being s.keyLen
// bytes long.
func deriveKeys(s *suiteParams, vp *versionParams, secret []byte, key *[maxKeyLen]byte, iv *[ivLen]byte, hp []byte) error {
	return s.hash.hkdfExpandLabels(secret,
		labelOut{key[:s.keyLen], vp.keyLabel}, labelOut{iv[:], vp.ivLabel}, labelOut{hp, vp.hpLabel})
}

// deriveHPKey derives the header protection key from a traffic secret into
// dst, which is s.keyLen bytes long: "The header protection key uses the
// "quic hp" label" (RFC 9001, Section 5.1; "quicv2 hp" in version 2).
func deriveHPKey(s *suiteParams, vp *versionParams, secret, dst []byte) error {
	return s.hash.hkdfExpandLabel(dst, secret, vp.hpLabel)
}

// setSecret derives the AEAD key and the IV from secret, leaving the header
// protection key alone.
func (p *protection) setSecret(secret []byte) error {
	var key [maxKeyLen]byte
	defer clear(key[:])
	if err := deriveKeyIV(p.suite, p.version, secret, &key, &p.iv); err != nil {
		return err
	}
	aead, err := p.suite.newAEAD(key[:p.suite.keyLen])
	if err != nil {
		return err
	}
	p.secret = secret
	p.aead = aead
	return nil
}

// next returns the protection of the next key phase: a new AEAD key and IV
// from the next secret, with the same header protection key.
func (p *protection) next() (protection, error) {
	p.ready()
	secret, err := expandLabel(p.suite.hash, p.secret, p.version.kuLabel, p.suite.hash.size())
	if err != nil {
		return protection{}, err
	}
	n := protection{suite: p.suite, version: p.version, hp: p.hp}
	// "The header protection key is not updated." RFC 9001, Section 6.1
	if err := n.setSecret(secret); err != nil {
		return protection{}, err
	}
	return n, nil
}

// nonceFor returns the AEAD nonce of packet number pn in p's scratch area:
// "The 62 bits of the reconstructed QUIC packet number in network byte
// order are left-padded with zeros to the size of the IV. The exclusive OR
// of the padded packet number and the IV forms the AEAD nonce." RFC 9001,
// Section 5.3
func (p *protection) nonceFor(pn wire.PacketNumber) []byte {
	p.nonce = p.iv
	// One 64-bit XOR of the last 8 bytes rather than a byte loop: this
	// runs for every packet sealed and opened.
	tail := p.nonce[ivLen-8:]
	binary.BigEndian.PutUint64(tail, binary.BigEndian.Uint64(tail)^uint64(pn))
	return p.nonce[:]
}

// A Sealer applies packet protection and header protection to packets this
// endpoint sends at one encryption level (RFC 9001, Sections 5.3 and 5.4).
//
// Sealer and [Opener] are two types rather than one with two halves because
// each traffic secret protects one direction: TLS hands QUIC a write secret
// and a read secret per encryption level, and the keys of the two
// directions are always distinct.
//
// A Sealer is not safe for concurrent use: it reuses a scratch area for the
// nonce and the mask so that sealing does not allocate.
type Sealer struct {
	p protection
}

// An Opener removes header protection and packet protection from packets
// this endpoint receives at one encryption level (RFC 9001, Sections 5.3,
// 5.4 and 5.5).
//
// An Opener is not safe for concurrent use: it reuses a scratch area for
// the nonce and the mask so that opening does not allocate.
type Opener struct {
	p protection
}

// NewSealer returns a Sealer for the traffic secret of the cipher suite
// suite (a crypto/tls cipher suite ID: tls.TLS_AES_128_GCM_SHA256,
// tls.TLS_AES_256_GCM_SHA384 or tls.TLS_CHACHA20_POLY1305_SHA256) in QUIC
// version v. The key, IV and header protection key are derived with the
// labels "quic key", "quic iv" and "quic hp" in version 1 (RFC 9001,
// Section 5.1) and "quicv2 key", "quicv2 iv" and "quicv2 hp" in version 2
// (RFC 9369, Section 3.3.2).
//
// secret must be as long as the suite's hash output (32 bytes, or 48 for
// TLS_AES_256_GCM_SHA384). The Sealer keeps a reference to it for
// [Sealer.Next]; the caller must not modify it afterwards.
func NewSealer(suite uint16, v wire.Version, secret []byte) (*Sealer, error) {
	p, err := newProtection(suite, v, secret)
	if err != nil {
		return nil, err
	}
	return &Sealer{p: p}, nil
}

// NewOpener returns an Opener for the traffic secret of the cipher suite
// suite in QUIC version v, like [NewSealer] does for a Sealer.
func NewOpener(suite uint16, v wire.Version, secret []byte) (*Opener, error) {
	p, err := newProtection(suite, v, secret)
	if err != nil {
		return nil, err
	}
	return &Opener{p: p}, nil
}

// NewKeys returns a Sealer and an Opener over the same traffic secret: the
// two ends of one direction, as when a test or a loopback peer protects
// and unprotects the same packets. The key material is derived once. Each
// end of a real connection needs a [NewSealer] for its write secret and a
// [NewOpener] for its read secret instead.
func NewKeys(suite uint16, v wire.Version, secret []byte) (*Sealer, *Opener, error) {
	p, err := newProtection(suite, v, secret)
	if err != nil {
		return nil, nil, err
	}
	return &Sealer{p: p}, &Opener{p: p}, nil
}

// NewInitialKeys returns the Sealer and the Opener for Initial packets of
// QUIC version v, given the Destination Connection ID of the client's first
// Initial packet (or the server's Source Connection ID of a Retry). A client
// seals with the client Initial secret and opens with the server one; a
// server the other way round (RFC 9001, Section 5.2). Initial packets use
// AEAD_AES_128_GCM and AES header protection: "Prior to TLS selecting a
// cipher suite, AES header protection is used (Section 5.4.3), matching
// the AEAD_AES_128_GCM packet protection." RFC 9001, Section 5.4.1
//
// NewInitialKeys panics under the same conditions as [InitialSecrets].
//
// Only the secrets are derived here; the AEAD and header protection keys of
// each direction are derived when the Sealer or the Opener is first used,
// so that keys a connection never uses cost nothing.
func NewInitialKeys(v wire.Version, clientDstConnID []byte, isClient bool) (seal *Sealer, open *Opener) {
	client, server := InitialSecrets(v, clientDstConnID)
	if !isClient {
		client, server = server, client
	}
	s, vp := &suiteAES128GCM, paramsFor(v)
	keys := &struct {
		Sealer
		Opener
	}{Sealer{newLazyProtection(s, vp, client)}, Opener{newLazyProtection(s, vp, server)}}
	return &keys.Sealer, &keys.Opener
}

// Suite returns the TLS cipher suite ID of s.
func (s *Sealer) Suite() uint16 { return s.p.suite.id }

// Suite returns the TLS cipher suite ID of o.
func (o *Opener) Suite() uint16 { return o.p.suite.id }

// Overhead returns the number of bytes [Sealer.Seal] adds to a packet: the
// 16-byte authentication tag (RFC 9001, Section 5.3).
func (s *Sealer) Overhead() int { return tagLen }

// Overhead returns the number of bytes of a protected packet that are not
// payload after [Opener.Open]: the 16-byte authentication tag.
func (o *Opener) Overhead() int { return tagLen }

// Next returns the Sealer of the next key phase (RFC 9001, Section 6.1):
// its AEAD key and IV come from the secret [NextSecret] derives from s's
// secret, and it keeps s's header protection key, because "The header
// protection key is not updated." s itself is unchanged. Key updates only
// apply to 1-RTT keys.
func (s *Sealer) Next() (*Sealer, error) {
	p, err := s.p.next()
	if err != nil {
		return nil, err
	}
	return &Sealer{p: p}, nil
}

// Next returns the Opener of the next key phase, like [Sealer.Next].
func (o *Opener) Next() (*Opener, error) {
	p, err := o.p.next()
	if err != nil {
		return nil, err
	}
	return &Opener{p: p}, nil
}
