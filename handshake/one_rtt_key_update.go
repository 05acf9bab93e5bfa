package handshake

import (
	"errors"
	"time"

	"github.com/quicstack/quic/wire"
)

// The 1-RTT keys and the key update (RFC 9001, Section 6): initiating an
// update (6.1, at most one per three PTOs and only once the previous one
// was acknowledged), following the peer's (6.2, 6.3), keeping the previous
// read keys for reordered packets until three PTOs pass (6.5), and
// counting what the AEAD limits allow (6.6). The next secret and the limits
// are key_update_limits.go.

// ErrKeyUpdateNotAllowed is returned by OneRTTKeys.Update when RFC 9001,
// Section 6.1 forbids initiating a key update now.
var ErrKeyUpdateNotAllowed = errors.New("handshake: key update not allowed yet")

// ErrKeysNotAvailable is returned by OneRTTKeys.Open before the read
// secret was set (see NewOneRTTWriteKeys): the packet is to be kept until
// it is.
var ErrKeysNotAvailable = errors.New("handshake: 1-RTT read keys not available yet")

var errReadSuiteMismatch = errors.New("handshake: 1-RTT read secret for another cipher suite or version than the write secret")

// OneRTTKeys protects and unprotects 1-RTT packets across key updates
// (RFC 9001, Section 6). It holds the current write keys and three sets of
// read keys: the current ones, the previous ones for packets delayed across
// an update, and the next ones, derived in advance so that a packet
// initiating an update takes as long to process as any other ("Endpoints
// responding to an apparent key update MUST NOT generate a timing
// side-channel signal", Section 6.3). The header protection key never
// changes (Section 6.1), so header protection is always removed with the
// current read keys.
//
// The write keys of the next phase are derived only when an update is
// initiated or followed: sending reveals nothing about received packets.
//
// Each direction's keys are expanded (AEAD and header protection cipher,
// about 1.5 KB, and the next read keys with the current ones) when first
// used: a connection that closes after its handshake, or a server that
// sends nothing before the client's close, does not derive keys it never
// uses. An idle connection can Release the expanded keys again and keep
// the secrets they come from; see Release.
//
// OneRTTKeys never reads the clock: methods that depend on time take now.
// Like all protocol state, it is owned by the connection's goroutine and is
// not safe for concurrent use. Sealing and opening allocate nothing; an
// update derives new keys and allocates once, and so does the first Seal
// or Open of each direction, at first and after Release.
type OneRTTKeys struct {
	seal       *Sealer
	writePhase uint8 // Key Phase bit of packets sealed now
	sealed     uint64
	// firstSent is the first packet number sealed in the current write
	// phase; an ACK at or above it confirms the peer has those keys.
	firstSent wire.PacketNumber
	acked     bool

	open, prev, next *Opener
	readPhase        uint8
	// firstRecv is the lowest packet number opened in the current read
	// phase: a packet of the other phase below it is delayed, one above
	// it initiates an update (Section 6.5).
	firstRecv   wire.PacketNumber
	prevDiscard time.Time // when prev goes; zero when there is no prev

	confirmed     bool
	updates       int       // completed or initiated updates
	remoteUpdates int       // of updates, those the peer initiated
	updateAllowed time.Time // earliest next initiation (Section 6.5: 3 PTO)
	pto           time.Duration

	confLimit  uint64 // packets per write key
	integLimit uint64 // failed decryptions per connection
	autoUpdate uint64 // initiate an update after this many packets
	failed     uint64

	// What expands the keys on first use and after Release: the cipher
	// suite and version, the header protection keys (which never change,
	// Section 6.1; the first keyLen bytes are used), and the secret of the
	// current phase of each direction whose keys are not expanded (seal or
	// open nil).
	suite                   uint16
	version                 wire.Version
	writeHP, readHP         [maxKeyLen]byte
	writeSecret, readSecret []byte
}

// NewOneRTTKeys returns the 1-RTT keys for the write and read secrets that
// TLS provided at LevelApplication, for cipher suite suite in version v.
// The secrets are retained to derive the following key phases.
func NewOneRTTKeys(suite uint16, v wire.Version, writeSecret, readSecret []byte) (*OneRTTKeys, error) {
	k, err := NewOneRTTWriteKeys(suite, v, writeSecret)
	if err != nil {
		return nil, err
	}
	if err := k.SetReadSecret(suite, v, readSecret); err != nil {
		return nil, err
	}
	return k, nil
}

// NewOneRTTWriteKeys returns 1-RTT keys that can seal but not yet open,
// for a server, which has its 1-RTT write secret once it sent its Finished
// but the client's only after the client's Finished: "a server can send
// 1-RTT packets ... before the handshake is complete" (0.5-RTT data,
// RFC 9001, Sections 4.1.1 and 5.7). Open returns ErrKeysNotAvailable until
// SetReadSecret.
func NewOneRTTWriteKeys(suite uint16, v wire.Version, writeSecret []byte) (*OneRTTKeys, error) {
	k := &OneRTTKeys{
		firstSent: wire.InvalidPacketNumber, firstRecv: wire.InvalidPacketNumber,
		confLimit: ConfidentialityLimit(suite), integLimit: IntegrityLimit(suite),
		pto:   time.Second,
		suite: suite, version: v,
	}
	if err := k.keepSecret(&k.writeHP, writeSecret); err != nil {
		return nil, err
	}
	k.writeSecret = writeSecret
	// Start updating at half the confidentiality limit, leaving the other
	// half for the peer to acknowledge the packet that makes updating
	// possible ("Endpoints MUST initiate a key update before sending more
	// protected packets than the confidentiality limit ... permits").
	k.autoUpdate = k.confLimit / 2
	return k, nil
}

// SetReadSecret installs the read keys of keys made by NewOneRTTWriteKeys.
// The read keys, and the next ones, are expanded by the first Open.
func (k *OneRTTKeys) SetReadSecret(suite uint16, v wire.Version, readSecret []byte) error {
	if suite != k.suite || v != k.version {
		return errReadSuiteMismatch
	}
	if err := k.keepSecret(&k.readHP, readSecret); err != nil {
		return err
	}
	k.readSecret = readSecret
	return nil
}

// keepSecret checks a direction's first secret and derives its header
// protection key into hp, which every later key phase keeps.
func (k *OneRTTKeys) keepSecret(hp *[maxKeyLen]byte, secret []byte) error {
	s := suiteFor(k.suite)
	if s == nil {
		return ErrUnsupportedCipherSuite
	}
	vp := paramsFor(k.version)
	if vp == nil {
		return ErrUnsupportedVersion
	}
	if len(secret) != s.hash.size() {
		return errSecretLen
	}
	return deriveHPKey(s, vp, secret, hp[:s.keyLen])
}

// CanOpen reports whether the read keys are installed.
func (k *OneRTTKeys) CanOpen() bool { return k.open != nil || k.readSecret != nil }

// Release drops the expanded keys, for a connection that has been idle:
// the current write keys and the current and next read keys, which
// together hold about 3 KB in AES-GCM and AES header protection state. It
// keeps the secrets of the current phase and the header protection keys;
// the next Seal, Update or MaybeUpdate derives the write keys again, and
// the next Open the current and next read keys, whatever the packet. It
// does nothing, and reports false, while the read keys are not installed,
// the previous read keys are still kept after an update, or no keys are
// expanded.
//
// Deriving keys as part of packet processing "creates a timing signal
// that could be used by an attacker to learn when key updates happen and
// thus leak the value of the Key Phase bit" (RFC 9001, Section 6.3); the
// next read keys are therefore derived with the current ones, before the
// first packet after Release is looked at, so that the time it takes
// depends only on the connection having been idle, never on the packet's
// Key Phase bit (Section 9.5), and the next keys are available, as
// "endpoints are generally expected to have current and next receive
// packet protection keys available" (Section 6.3).
func (k *OneRTTKeys) Release() bool {
	if !k.CanOpen() || k.prev != nil || k.Released() {
		return false
	}
	if k.seal != nil {
		k.writeSecret, k.seal = k.seal.p.secret, nil
	}
	if k.open != nil {
		k.readSecret, k.open, k.next = k.open.p.secret, nil, nil
	}
	return true
}

// Released reports whether no keys are expanded: after Release, or before
// the first Seal and Open, until one of them expands its direction's keys.
func (k *OneRTTKeys) Released() bool { return k.seal == nil && k.open == nil }

// expandWrite derives the write keys of the current phase, if they are
// not expanded.
func (k *OneRTTKeys) expandWrite() error {
	if k.seal != nil {
		return nil
	}
	s, vp := suiteFor(k.suite), paramsFor(k.version)
	p, err := newProtectionHP(s, vp, k.writeSecret, k.writeHP[:s.keyLen])
	if err != nil {
		return err
	}
	k.seal, k.writeSecret = &Sealer{p: p}, nil
	return nil
}

// expandRead derives the current and next read keys, if the read secret
// is known and they are not expanded. Both are derived before any packet
// is looked at, so that the time it takes never depends on a packet's Key
// Phase bit (RFC 9001, Section 9.5), and the next keys are available, as
// "endpoints are generally expected to have current and next receive
// packet protection keys available" (Section 6.3).
func (k *OneRTTKeys) expandRead() error {
	if k.open != nil || k.readSecret == nil {
		return nil
	}
	s, vp := suiteFor(k.suite), paramsFor(k.version)
	p, err := newProtectionHP(s, vp, k.readSecret, k.readHP[:s.keyLen])
	if err != nil {
		return err
	}
	open := &Opener{p: p}
	next, err := open.Next()
	if err != nil {
		return err
	}
	k.open, k.next, k.readSecret = open, next, nil
	return nil
}

// SetHandshakeConfirmed records that the handshake is confirmed
// (RFC 9001, Section 4.1.2): "An endpoint MUST NOT initiate a key update
// prior to having confirmed the handshake".
func (k *OneRTTKeys) SetHandshakeConfirmed() { k.confirmed = true }

// SetPTO tells the keys the connection's current probe timeout, which sets
// how long previous read keys are kept and how long to wait between
// updates (RFC 9001, Section 6.5). The default is one second.
func (k *OneRTTKeys) SetPTO(pto time.Duration) { k.pto = pto }

// SetUpdateInterval makes the endpoint initiate a key update every n
// packets it sends (n > 0), when allowed. By default it updates after half
// the AEAD's confidentiality limit: 2^22 packets for AES-GCM, never for
// ChaCha20-Poly1305. Smaller values exercise key updates in tests and
// interop runs; n is capped at the default.
func (k *OneRTTKeys) SetUpdateInterval(n uint64) {
	if n > 0 {
		k.autoUpdate = min(n, k.confLimit/2)
	}
}

// KeyPhase returns the Key Phase bit that packets sealed now carry.
func (k *OneRTTKeys) KeyPhase() uint8 { return k.writePhase }

// Updates returns how many key updates this endpoint initiated or followed.
func (k *OneRTTKeys) Updates() int { return k.updates }

// RemoteUpdates returns how many of the Updates the peer initiated.
func (k *OneRTTKeys) RemoteUpdates() int { return k.remoteUpdates }

// FailedDecryptions returns how many packets failed authentication.
func (k *OneRTTKeys) FailedDecryptions() uint64 { return k.failed }

// Overhead returns the bytes sealing adds to a packet: the AEAD tag.
func (k *OneRTTKeys) Overhead() int { return tagLen }

// canUpdate reports whether RFC 9001, Sections 6.1 and 6.5 allow
// initiating an update at now: the handshake is confirmed, a packet sent
// with the current keys was acknowledged ("An endpoint MUST NOT initiate a
// subsequent key update unless it has received an acknowledgment for a
// packet that was sent protected with keys from the current key phase"),
// the peer's reply to the previous update arrived, and three PTOs passed
// since that update was confirmed.
func (k *OneRTTKeys) canUpdate(now time.Time) bool {
	return k.confirmed && k.acked && k.writePhase == k.readPhase && !now.Before(k.updateAllowed)
}

// Update initiates a key update now, or returns ErrKeyUpdateNotAllowed.
func (k *OneRTTKeys) Update(now time.Time) error {
	if !k.canUpdate(now) {
		return ErrKeyUpdateNotAllowed
	}
	return k.updateWrite()
}

// MaybeUpdate initiates a key update if the current keys have sealed as
// many packets as the update interval and an update is allowed. Packers
// call it before writing a packet's header. It reports whether it updated.
func (k *OneRTTKeys) MaybeUpdate(now time.Time) bool {
	if k.sealed < k.autoUpdate || !k.canUpdate(now) {
		return false
	}
	return k.updateWrite() == nil
}

func (k *OneRTTKeys) updateWrite() error {
	if err := k.expandWrite(); err != nil {
		return err
	}
	seal, err := k.seal.Next()
	if err != nil {
		return err
	}
	k.seal = seal
	k.writePhase ^= 1
	k.sealed = 0
	k.firstSent = wire.InvalidPacketNumber
	k.acked = false
	k.updates++
	return nil
}

// errAEADLimit is the connection error of RFC 9001, Section 6.6.
var errAEADLimit = &wire.TransportError{Code: wire.AEADLimitReached, Reason: "AEAD usage limit reached"}

// Seal protects a short-header packet in place, like Sealer.Seal, after
// setting its Key Phase bit to KeyPhase(). Past the confidentiality limit
// of the current key it returns an AEAD_LIMIT_REACHED error instead: "If a
// key update is not possible or integrity limits are reached, the endpoint
// MUST stop using the connection" (RFC 9001, Section 6.6).
func (k *OneRTTKeys) Seal(packet []byte, pnOffset, pnLen int, pn wire.PacketNumber) ([]byte, error) {
	if k.sealed >= k.confLimit {
		return nil, errAEADLimit
	}
	if err := k.expandWrite(); err != nil {
		return nil, err
	}
	packet[0] = packet[0]&^0x04 | k.writePhase<<2
	out := k.seal.Seal(packet, pnOffset, pnLen, pn)
	if k.firstSent == wire.InvalidPacketNumber {
		k.firstSent = pn
	}
	k.sealed++
	return out, nil
}

// OnAcked is told the largest packet number of each ACK frame received in
// the application data space, at time now.
func (k *OneRTTKeys) OnAcked(now time.Time, largest wire.PacketNumber) {
	if k.acked || k.firstSent == wire.InvalidPacketNumber || largest < k.firstSent {
		return
	}
	k.acked = true
	if k.updates > 0 {
		// "Endpoints SHOULD wait three times the PTO before initiating a
		// key update after receiving an acknowledgment that confirms that
		// the previous key update was received." (Section 6.5)
		k.updateAllowed = now.Add(3 * k.pto)
	}
}

// Open removes header protection and packet protection from a short-header
// packet in place (RFC 9001, Sections 5.4, 5.5 and 6). largest is the
// largest packet number received so far in the application data space, for
// decoding the truncated packet number. It returns the full packet number
// and the payload.
//
// A packet whose Key Phase bit differs from the current read phase is
// opened with the previous keys if its number is below the first number of
// the current phase, and otherwise with the next keys; if that succeeds, the
// peer has updated its keys, and the write keys follow ("The endpoint MUST
// update its send keys to the corresponding key phase in response",
// Section 6.2).
//
// Errors: ErrPacketTooShort or ErrDecryptionFailed mean the packet is to be
// dropped; a *wire.TransportError with AEAD_LIMIT_REACHED means the
// connection must close (Section 6.6). Open counts failed decryptions; the
// connection adds those of other levels to apply the limit "across all
// keys".
func (k *OneRTTKeys) Open(now time.Time, packet []byte, pnOffset int, largest wire.PacketNumber) (wire.PacketNumber, []byte, error) {
	if err := k.expandRead(); err != nil {
		return 0, nil, err
	}
	if k.open == nil {
		return 0, nil, ErrKeysNotAvailable
	}
	if k.failed > k.integLimit {
		return 0, nil, errAEADLimit
	}
	k.discardPrev(now)
	pnLen, err := k.open.RemoveHeaderProtection(packet, pnOffset)
	if err != nil {
		return 0, nil, err
	}
	trunc, _ := wire.ParseTruncatedPacketNumber(packet[pnOffset:], pnLen)
	pn := wire.DecodePacketNumber(largest, trunc, pnLen)
	o := k.open
	isNext := false
	if KeyPhase(packet[0]) != k.readPhase {
		if k.prev != nil && pn < k.firstRecv {
			o = k.prev
		} else {
			o, isNext = k.next, true
		}
	}
	payload, err := o.Open(packet, pnOffset, pnLen, pn)
	if err != nil {
		k.failed++
		if k.failed > k.integLimit {
			return 0, nil, errAEADLimit
		}
		return 0, nil, err
	}
	switch {
	case isNext:
		if err := k.rotateRead(now, pn); err != nil {
			return 0, nil, err
		}
	case o == k.open && (k.firstRecv == wire.InvalidPacketNumber || pn < k.firstRecv):
		k.firstRecv = pn
	}
	return pn, payload, nil
}

// rotateRead promotes the next read keys after a packet opened with them.
func (k *OneRTTKeys) rotateRead(now time.Time, pn wire.PacketNumber) error {
	next, err := k.next.Next()
	if err != nil {
		return err
	}
	k.prev, k.open, k.next = k.open, k.next, next
	k.readPhase ^= 1
	k.firstRecv = pn
	// "An endpoint SHOULD retain old read keys for no more than three
	// times the PTO after having received a packet protected using the new
	// keys." (Section 6.5)
	k.prevDiscard = now.Add(3 * k.pto)
	if k.writePhase != k.readPhase {
		// The peer initiated this update; follow it.
		k.remoteUpdates++
		return k.updateWrite()
	}
	return nil
}

// NextDeadline returns when OnTimeout must next be called: when the
// previous read keys are to be discarded, or the zero time if never.
func (k *OneRTTKeys) NextDeadline() time.Time { return k.prevDiscard }

// OnTimeout discards the previous read keys once their time has come.
func (k *OneRTTKeys) OnTimeout(now time.Time) { k.discardPrev(now) }

func (k *OneRTTKeys) discardPrev(now time.Time) {
	if k.prev != nil && !now.Before(k.prevDiscard) {
		k.prev, k.prevDiscard = nil, time.Time{}
	}
}
