package quic

import "strconv"

// closeBoth is Stream.Close: CloseWrite, then CancelRead(0), marking the
// stream so that a Read says it came after Close.
func (s *stream) closeBoth() {
	s.mu.Lock()
	s.closedBoth = !s.readCanceled && !s.resetRecvd && !s.eofRead
	s.mu.Unlock()
	s.closeWrite()
	s.cancelRead(0)
}

// readAfterCloseMessage is the error text of a Read on a stream after
// Stream.Close, meant for users who know quic-go's Close, which closes
// only the sending direction.
func readAfterCloseMessage(id StreamID) string {
	return "quic: Read on stream " + strconv.FormatInt(int64(id), 10) +
		" after Close, which closes both directions (unlike quic-go's, which closes only the sending one): " +
		"use CloseWrite to end the sending direction and keep reading"
}
