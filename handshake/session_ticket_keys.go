package handshake

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"time"
)

// Session tickets sealed with rotating keys (EpochKeys), for servers of a
// fleet that resume each other's sessions. A ticket is
//
//	epoch (8 bytes) | nonce (12 bytes) | AES-256-GCM(tls.SessionState.Bytes(), ad = epoch)
//
// It is sealed with the key of the epoch it is issued in; tickets of that
// epoch and of its two neighbours are accepted, so that a ticket issued
// just before a rotation, or by a server whose clock is slightly ahead,
// still resumes. Older tickets are ignored: the client does a full
// handshake, as with a ticket of another fleet. crypto/tls still applies
// its own limit on ticket age (7 days).

const ticketHeaderLen = 8 + 12

// ConfigureSessionTicketsAt sets c's WrapSession and UnwrapSession to seal
// session tickets with keys, in the epoch of the time now returns. now is
// called on the goroutine that runs the handshake; a connection passes its
// state machine's time (CryptoSetup.SetTime), so that nothing here reads
// the clock.
func ConfigureSessionTicketsAt(c *tls.Config, keys *EpochKeys, now func() time.Time) {
	c.WrapSession = func(_ tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		pt, err := ss.Bytes()
		if err != nil {
			return nil, err
		}
		e := keys.Epoch(now())
		b := make([]byte, ticketHeaderLen, ticketHeaderLen+len(pt)+16)
		binary.BigEndian.PutUint64(b, e)
		rand.Read(b[8:ticketHeaderLen])
		return keys.AEAD(e).Seal(b, b[8:ticketHeaderLen], pt, b[:8]), nil
	}
	c.UnwrapSession = func(identity []byte, _ tls.ConnectionState) (*tls.SessionState, error) {
		if len(identity) < ticketHeaderLen+16 {
			return nil, nil
		}
		e, cur := binary.BigEndian.Uint64(identity), keys.Epoch(now())
		if e+1 < cur || e > cur+1 {
			return nil, nil // rotated out: a full handshake
		}
		pt, err := keys.AEAD(e).Open(nil, identity[8:ticketHeaderLen], identity[ticketHeaderLen:], identity[:8])
		if err != nil {
			return nil, nil // not ours
		}
		ss, err := tls.ParseSessionState(pt)
		if err != nil {
			return nil, nil
		}
		return ss, nil
	}
}
