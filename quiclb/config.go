package quiclb

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
)

// UnroutableConfigID is the config rotation codepoint 0b111 of connection
// IDs that carry no server ID: "Servers with no active configuration MUST
// issue connection IDs with the reserved value of the three most
// significant bits set to 0b111 to signify the connection ID is
// unroutable" (draft-ietf-quic-load-balancers, Section 3.2).
const UnroutableConfigID = 7

// Limits of a Config (draft-ietf-quic-load-balancers, Section 5.3): "The
// nonce length MUST be at least 4 octets. The server ID length MUST be at
// least 1 octet. ... the server ID and nonce lengths MUST sum to 19 octets
// or less."
const (
	MinServerIDLen = 1
	MinNonceLen    = 4
	MaxPlaintext   = 19 // server ID + nonce
	KeyLen         = 16 // AES-128
)

// A Config is one QUIC-LB configuration (draft-ietf-quic-load-balancers,
// Section 5.3), shared by the servers of a fleet and its load balancers.
// A Config must not be modified once a Generator or Decoder uses it.
type Config struct {
	// ID is the config rotation codepoint, 0 to 6, written in the three
	// most significant bits of every connection ID (Section 3.1). It
	// lets load balancers hold the old and the new configuration while
	// servers move from one to the other.
	ID uint8
	// ServerIDLen is the length of server IDs in bytes, at least 1.
	ServerIDLen int
	// NonceLen is the length of the nonce that makes each connection ID
	// unique, at least 4. ServerIDLen+NonceLen is at most 19.
	NonceLen int
	// Key, if set, is the 16-byte AES key that encrypts server ID and
	// nonce. Without it they are in plaintext: "failure to define a key
	// means that observers can determine the assigned server of any
	// connection, significantly increasing the linkability of QUIC
	// address migration" (Section 5.3).
	Key []byte
	// OmitLength, if set, fills the five low bits of the first octet with
	// random bits instead of the length of the rest of the connection ID
	// (Section 3.3). Default false: the length is encoded, as the draft's
	// test vectors do.
	OmitLength bool
}

// Validate reports whether c is a valid configuration.
func (c *Config) Validate() error {
	switch {
	case c.ID > 6:
		return fmt.Errorf("quiclb: config ID %d not in 0..6 (0b111 is reserved for unroutable connection IDs)", c.ID)
	case c.ServerIDLen < MinServerIDLen:
		return fmt.Errorf("quiclb: server ID length %d is less than 1", c.ServerIDLen)
	case c.NonceLen < MinNonceLen:
		return fmt.Errorf("quiclb: nonce length %d is less than 4", c.NonceLen)
	case c.ServerIDLen+c.NonceLen > MaxPlaintext:
		return fmt.Errorf("quiclb: server ID and nonce lengths sum to %d, more than 19", c.ServerIDLen+c.NonceLen)
	case c.Key != nil && len(c.Key) != KeyLen:
		return fmt.Errorf("quiclb: key of %d bytes, want 16", len(c.Key))
	}
	return nil
}

// Len returns the length of the connection IDs of c: the first octet,
// the server ID and the nonce.
func (c *Config) Len() int { return 1 + c.ServerIDLen + c.NonceLen }

// Encrypted reports whether c has a key.
func (c *Config) Encrypted() bool { return c.Key != nil }

// firstOctet returns the first octet of a connection ID with the given
// random bits: "First Octet { Config Rotation (3), CID Len or Random Bits
// (5) }" (Section 3.4). The length is that of the connection ID "not
// including the first octet" (Section 3.3).
func (c *Config) firstOctet(random byte) byte {
	if c.OmitLength {
		return c.ID<<5 | random&0x1f
	}
	return c.ID<<5 | byte(c.ServerIDLen+c.NonceLen)
}

// ErrUnroutable is returned, wrapped, for a connection ID that carries no
// server ID a Decoder can read: "unroutable DCIDs"
// (draft-ietf-quic-load-balancers, Section 4.1).
var ErrUnroutable = errors.New("quiclb: unroutable connection ID")

// A codec encrypts and decrypts the plaintext block (server ID and
// nonce) of one configuration. It is immutable and safe for concurrent
// use.
type codec struct {
	cfg   Config
	block cipher.Block // nil without a key
	plen  int          // server ID + nonce length
}

func newCodec(c Config) (*codec, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	k := &codec{cfg: c, plen: c.ServerIDLen + c.NonceLen}
	if c.Key != nil {
		k.cfg.Key = append([]byte(nil), c.Key...)
		b, err := aes.NewCipher(k.cfg.Key)
		if err != nil {
			return nil, err
		}
		k.block = b
	}
	return k, nil
}
