package quic

import (
	"encoding/binary"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// Checks on the CRYPTO data handed to crypto/tls, so that violations of
// RFC 9001 close the connection with the codes it names rather than
// crypto/tls's internal_error (CRYPTO_ERROR 0x150): data at a previous
// encryption level (Section 4.1.3), and the TLS messages that may not come
// after the handshake (Sections 4.4, 4.6.1 and 6).

// TLS handshake message types (RFC 8446, Section 4).
const (
	tlsNewSessionTicket   = 4
	tlsCertificateRequest = 13
	tlsKeyUpdate          = 24
	// tlsExtEarlyData is the early_data extension (RFC 8446, Section
	// 4.2.10).
	tlsExtEarlyData = 42
	// maxPostHandshakeMessage bounds a post-handshake message, header
	// excluded, as crypto/tls does (its maxHandshake, 64 KiB).
	maxPostHandshakeMessage = 64 << 10
)

// checkCryptoLevel applies RFC 9001, Section 4.1.3 to a CRYPTO frame at
// level, whose received data so far ends at highest: "If the packet is
// from a previously installed encryption level, it MUST NOT contain data
// that extends past the end of previously received data in that flow.
// Implementations MUST treat any violations of this requirement as a
// connection error of type PROTOCOL_VIOLATION." Retransmissions of what
// was received pass.
func (c *connState) checkCryptoLevel(level handshake.EncryptionLevel, highest uint64, f wire.CryptoFrame) error {
	if level < c.cryptoReadLevel && f.Offset+uint64(len(f.Data)) > highest {
		return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto,
			Reason: "new CRYPTO data at a previous encryption level"}
	}
	return nil
}

// onReadLevel records that TLS reads at level now, and applies RFC 9001,
// Section 4.1.3: "When TLS provides keys for a higher encryption level, if
// there is data from a previous encryption level that TLS has not
// consumed, this MUST be treated as a connection error of type
// PROTOCOL_VIOLATION." Data crypto/tls itself holds is its own check
// (handshake: its "handshake buffer not empty" error is mapped to
// PROTOCOL_VIOLATION); this one covers the data buffered here out of
// order.
func (c *connState) onReadLevel(level handshake.EncryptionLevel) error {
	if level <= c.cryptoReadLevel {
		return nil
	}
	c.cryptoReadLevel = level
	for s := ackhandler.SpaceInitial; s <= ackhandler.SpaceApplication; s++ {
		if lvl := [...]handshake.EncryptionLevel{handshake.LevelInitial, handshake.LevelHandshake, handshake.LevelApplication}[s]; lvl >= level {
			break
		}
		if cs := c.spaces[s].crypto; cs != nil && cs.recv.highest() > cs.recv.readOffset() {
			return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto,
				Reason: "CRYPTO data left at a previous encryption level"}
		}
	}
	return nil
}

// handleTLSData passes in-order CRYPTO data of level to TLS. After the
// handshake (1-RTT CRYPTO data is only read then), it passes whole TLS
// messages only, once checked (checkPostHandshake); a message split over
// CRYPTO frames waits, copied, in the stream's partial buffer until it is
// whole.
func (c *connState) handleTLSData(level handshake.EncryptionLevel, data []byte) error {
	if level != handshake.LevelApplication {
		return c.tls.HandleCrypto(level, data)
	}
	cs := c.spaces[ackhandler.SpaceApplication].cryptoStream()
	for len(data) > 0 {
		if len(cs.partial) == 0 {
			if n := wholeTLSMessages(data); n > 0 {
				if err := c.handleTLSMessages(level, data[:n]); err != nil {
					return err
				}
				data = data[n:]
				continue
			}
		}
		need := 4
		if len(cs.partial) >= 4 {
			need = 4 + tlsMessageLen(cs.partial)
		}
		if need > 4+maxPostHandshakeMessage {
			return &wire.TransportError{Code: wire.CryptoBufferExceeded, FrameType: wire.FrameTypeCrypto,
				Reason: "post-handshake TLS message too large"}
		}
		k := min(need-len(cs.partial), len(data))
		cs.partial = append(cs.partial, data[:k]...)
		data = data[k:]
		if len(cs.partial) >= 4 && len(cs.partial) == 4+tlsMessageLen(cs.partial) {
			msg := cs.partial
			cs.partial = nil
			if err := c.handleTLSMessages(level, msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// handleTLSMessages checks whole post-handshake TLS messages and passes
// them to TLS.
func (c *connState) handleTLSMessages(level handshake.EncryptionLevel, msgs []byte) error {
	for b := msgs; len(b) > 0; b = b[4+tlsMessageLen(b):] {
		if err := checkPostHandshake(c.role, b[0], b[4:4+tlsMessageLen(b)]); err != nil {
			return err
		}
	}
	return c.tls.HandleCrypto(level, msgs)
}

// tlsMessageLen returns the body length of the TLS handshake message
// whose 4-byte header starts b.
func tlsMessageLen(b []byte) int { return int(b[1])<<16 | int(b[2])<<8 | int(b[3]) }

// wholeTLSMessages returns the length of the whole TLS handshake messages
// at the start of b.
func wholeTLSMessages(b []byte) int {
	n := 0
	for len(b)-n >= 4 {
		m := 4 + tlsMessageLen(b[n:])
		if len(b)-n < m {
			break
		}
		n += m
	}
	return n
}

// checkPostHandshake checks a TLS handshake message of type typ received
// after the handshake:
//
//   - "Endpoints MUST treat the receipt of a TLS KeyUpdate message as a
//     connection error of type 0x010a, equivalent to a fatal TLS alert of
//     unexpected_message" (RFC 9001, Section 6);
//   - "servers MUST NOT send post-handshake TLS CertificateRequest
//     messages, and clients MUST treat receipt of such messages as a
//     connection error of type PROTOCOL_VIOLATION" (Section 4.4);
//   - "A client MUST treat receipt of a NewSessionTicket that contains an
//     early_data extension with any other value [than 0xffffffff] as a
//     connection error of type PROTOCOL_VIOLATION" (Section 4.6.1),
//     whatever crypto/tls would do (it stored a ticket whose value was 0);
//   - a client may receive nothing else after the handshake, and a server
//     nothing at all: unexpected_message (RFC 8446, Section 6.2).
func checkPostHandshake(role wire.Role, typ byte, body []byte) error {
	switch {
	case typ == tlsKeyUpdate:
		return &wire.TransportError{Code: wire.CryptoError(alertUnexpectedMessage), FrameType: wire.FrameTypeCrypto,
			Reason: "TLS KeyUpdate message"}
	case role == wire.RoleClient && typ == tlsCertificateRequest:
		return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto,
			Reason: "post-handshake TLS CertificateRequest"}
	case role == wire.RoleClient && typ == tlsNewSessionTicket:
		if v, ok := ticketMaxEarlyData(body); ok && v != 0xffffffff {
			return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto,
				Reason: "NewSessionTicket with max_early_data_size other than 0xffffffff"}
		}
		return nil // crypto/tls checks the rest
	}
	return &wire.TransportError{Code: wire.CryptoError(alertUnexpectedMessage), FrameType: wire.FrameTypeCrypto,
		Reason: "unexpected post-handshake TLS message"}
}

// alertUnexpectedMessage is the TLS alert unexpected_message (RFC 8446,
// Section 6).
const alertUnexpectedMessage = 10

// ticketMaxEarlyData returns the max_early_data_size of the early_data
// extension of a NewSessionTicket body (RFC 8446, Section 4.6.1), and
// whether it has one: one of another length reports 0. A malformed body
// reports none; crypto/tls rejects it.
func ticketMaxEarlyData(body []byte) (uint32, bool) {
	// ticket_lifetime (4), ticket_age_add (4), ticket_nonce<0..255>,
	// ticket<1..2^16-1>, extensions<0..2^16-2>.
	b := body
	if len(b) < 9 {
		return 0, false
	}
	b = b[8:]
	if n := int(b[0]); len(b) < 1+n {
		return 0, false
	} else {
		b = b[1+n:]
	}
	if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
		return 0, false
	}
	b = b[2+int(binary.BigEndian.Uint16(b)):]
	if len(b) < 2 || len(b) != 2+int(binary.BigEndian.Uint16(b)) {
		return 0, false
	}
	for exts := b[2:]; len(exts) >= 4; {
		typ, n := binary.BigEndian.Uint16(exts), int(binary.BigEndian.Uint16(exts[2:]))
		if len(exts) < 4+n {
			return 0, false
		}
		if typ == tlsExtEarlyData {
			if n != 4 {
				return 0, true
			}
			return binary.BigEndian.Uint32(exts[4:]), true
		}
		exts = exts[4+n:]
	}
	return 0, false
}
