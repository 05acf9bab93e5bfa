package handshake

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"time"
)

// A ticket stamp is this package's entry in a session ticket's
// tls.SessionState.Extra: a random ID unique to the ticket and its issue
// time, which anti-replay stores key 0-RTT acceptance on ("single-use
// tickets", RFC 8446, Section 8.1) and limit to a window after issue.

// ticketStampPrefix marks the entry, which layers sharing Extra
// recognise by its prefix (see sessionExtraPrefix).
var ticketStampPrefix = []byte("quicstack/ticket-stamp/v1:")

// TicketIDLen is the length of a session ticket's ID.
const TicketIDLen = 16

func newTicketStamp(now time.Time) []byte {
	b := make([]byte, len(ticketStampPrefix)+TicketIDLen+8)
	n := copy(b, ticketStampPrefix)
	rand.Read(b[n : n+TicketIDLen])
	binary.BigEndian.PutUint64(b[n+TicketIDLen:], uint64(now.UnixNano()))
	return b
}

// findTicketStamp returns the ID and issue time of a session's ticket.
func findTicketStamp(ss *tls.SessionState) (id []byte, issued time.Time, ok bool) {
	for _, e := range ss.Extra {
		if b, found := bytes.CutPrefix(e, ticketStampPrefix); found && len(b) == TicketIDLen+8 {
			return b[:TicketIDLen], time.Unix(0, int64(binary.BigEndian.Uint64(b[TicketIDLen:]))), true
		}
	}
	return nil, time.Time{}, false
}
