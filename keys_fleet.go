package quic

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/quicstack/quic/handshake"
)

// DefaultKeyRotationPeriod is the rotation period of a KeySchedule made
// with a zero period: a day.
const DefaultKeyRotationPeriod = 24 * time.Hour

// MinMasterSecretLen is the shortest master secret a KeySchedule accepts.
const MinMasterSecretLen = 32

// A KeySchedule derives the keys that the servers of a fleet share from
// one master secret, so that distributing that secret is all it takes for
// any server to resume the sessions, accept the address tokens and reset
// the connections of any other:
//
//   - session-ticket keys (RFC 8446, Section 4.6.1), which rotate every
//     period: a ticket is sealed with the key of the period it is issued
//     in and accepted in that period and the next (and the one before,
//     for servers whose clocks differ slightly), so no client loses
//     resumption at a rotation, and a stolen ticket key is useless two
//     periods later;
//   - address-token keys (RFC 9000, Section 8.1), which rotate the same
//     way; and
//   - the stateless reset key (RFC 9000, Section 10.3), which does not
//     rotate, since connections keep the reset tokens they were given.
//
// Keys are derived with HKDF-SHA256 from the secret and the period's
// number, so servers agree without talking to each other as long as their
// clocks agree to within a period. Set it as Transport.Keys. A
// KeySchedule is immutable and safe for concurrent use.
type KeySchedule struct {
	tickets, tokens *handshake.EpochKeys
	reset           []byte
}

// NewKeySchedule returns the KeySchedule of secret, at least 32 bytes of
// secret randomness, with ticket and token keys rotating every period (0
// means DefaultKeyRotationPeriod; at least a second).
func NewKeySchedule(secret []byte, period time.Duration) (*KeySchedule, error) {
	if len(secret) < MinMasterSecretLen {
		return nil, fmt.Errorf("quic: master secret of %d bytes, want at least %d", len(secret), MinMasterSecretLen)
	}
	if period == 0 {
		period = DefaultKeyRotationPeriod
	}
	prk, err := hkdf.Extract(sha256.New, secret, []byte("quicstack fleet keys v1"))
	if err != nil {
		return nil, err
	}
	k := &KeySchedule{}
	if k.tickets, err = handshake.NewEpochKeys(prk, "session ticket epoch ", period); err != nil {
		return nil, err
	}
	if k.tokens, err = handshake.NewEpochKeys(prk, "address token epoch ", period); err != nil {
		return nil, err
	}
	if k.reset, err = hkdf.Expand(sha256.New, prk, "stateless reset", 32); err != nil {
		return nil, err
	}
	return k, nil
}

// LoadKeySchedule reads the master secret from a file and returns its
// KeySchedule (see NewKeySchedule). The file holds the secret in
// hexadecimal (64 or more digits, as `openssl rand -hex 32` writes it) or
// as at least 32 raw bytes; surrounding white space is ignored.
func LoadKeySchedule(path string, period time.Duration) (*KeySchedule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	secret := bytes.TrimSpace(b)
	if h, err := hex.DecodeString(string(secret)); err == nil && len(h) >= MinMasterSecretLen {
		secret = h
	}
	if len(secret) < MinMasterSecretLen {
		return nil, errors.New("quic: " + path + ": master secret shorter than 32 bytes")
	}
	return NewKeySchedule(secret, period)
}

// Period returns the rotation period of the ticket and token keys.
func (k *KeySchedule) Period() time.Duration { return k.tickets.Period() }

// StatelessResetKey returns the stateless reset key (a copy).
func (k *KeySchedule) StatelessResetKey() []byte { return append([]byte(nil), k.reset...) }

// ConfigureTLS makes c seal and open session tickets with the rotating
// ticket keys, by setting c.WrapSession and c.UnwrapSession; c.Time, if
// set, is the clock, else time.Now. A Transport with Keys seals its
// listeners' tickets with these keys itself, at each connection's time
// (handshake.Config.SessionTickets), unless the tls.Config given to Listen
// sets WrapSession or UnwrapSession.
func (k *KeySchedule) ConfigureTLS(c *tls.Config) {
	handshake.ConfigureSessionTickets(c, k.tickets)
}

// fleetKeys returns the stateless reset key and the address-token
// protector of t: from t.Keys for what t does not set itself, else nil.
func (t *Transport) fleetKeys() (reset []byte, tokens *handshake.TokenProtector) {
	if t.Keys == nil {
		return nil, nil
	}
	if len(t.StatelessResetKey) == 0 {
		reset = t.Keys.reset
	}
	if len(t.TokenKey) == 0 {
		tokens = handshake.NewRotatingTokenProtector(t.Keys.tokens)
	}
	return reset, tokens
}

// sessionTickets returns the ticket keys that t.Keys gives a listener's
// connections for its prepared tls.Config c, or nil: none unless c seals
// its tickets itself. Each connection seals with them at its own time
// (handshake.Config.SessionTickets).
func (t *Transport) sessionTickets(c *tls.Config) *handshake.EpochKeys {
	if t.Keys != nil && c.WrapSession == nil && c.UnwrapSession == nil {
		return t.Keys.tickets
	}
	return nil
}
