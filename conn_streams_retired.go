package quic

import (
	"strconv"

	"github.com/quicstack/quic/wire"
)

// retiredFinalSizes remembers the final sizes of the receiving parts of
// the last retiredFinalSizesLen streams retired, so that data beyond the
// final size of a stream already forgotten is still caught: "A receiver
// SHOULD treat receipt of data at or beyond the final size as an error of
// type FINAL_SIZE_ERROR, even after a stream is closed" (RFC 9000, Section
// 4.5). The RFC leaves this optional "because requiring that an endpoint
// generate these errors also means that the endpoint needs to maintain the
// final size state for closed streams, which could mean a significant
// state commitment": this keeps a fixed 512 bytes, made at the first
// retirement, and checks the streams retired last, which are those a
// peer's retransmissions still reach. Frames for streams retired before
// them are ignored, as before, and so are all once a quiet connection
// released its memory (streamsMap.releaseIdle drops the table).
//
// It belongs to the connection goroutine.
type retiredFinalSizes struct {
	ids   [retiredFinalSizesLen]wire.StreamID
	sizes [retiredFinalSizesLen]uint64
	n     int // entries used, up to retiredFinalSizesLen
	next  int // the slot the next entry takes
}

const retiredFinalSizesLen = 32

// add remembers the final size of stream id.
func (r *retiredFinalSizes) add(id wire.StreamID, size uint64) {
	r.ids[r.next], r.sizes[r.next] = id, size
	r.next = (r.next + 1) % retiredFinalSizesLen
	r.n = min(r.n+1, retiredFinalSizesLen)
}

// lookup returns the final size remembered for stream id.
func (r *retiredFinalSizes) lookup(id wire.StreamID) (uint64, bool) {
	for i := range r.n {
		if r.ids[i] == id {
			return r.sizes[i], true
		}
	}
	return 0, false
}

// rememberFinalSize records the final size of the receiving part of s,
// which is being retired. Its receiving part is finished, so the size is
// known. Connection goroutine, m.mu not held.
func (m *streamsMap) rememberFinalSize(s *stream) {
	if !s.hasRecv {
		return
	}
	s.mu.Lock()
	size, known := s.recvFC.FinalSize()
	s.mu.Unlock()
	if !known {
		return
	}
	if m.retiredSizes == nil {
		m.retiredSizes = new(retiredFinalSizes)
	}
	m.retiredSizes.add(s.id, size)
}

// checkRetired checks a STREAM frame ending at end (with FIN if fin) or a
// RESET_STREAM (reset) for stream id, which is closed, against its final
// size if it is remembered: data beyond it, or another final size, is a
// FINAL_SIZE_ERROR (RFC 9000, Section 4.5: "If a RESET_STREAM or STREAM
// frame is received indicating a change in the final size for the stream,
// an endpoint SHOULD respond with an error of type FINAL_SIZE_ERROR").
// Connection goroutine.
func (m *streamsMap) checkRetired(id wire.StreamID, end uint64, fin bool, ft wire.FrameType) error {
	if m.retiredSizes == nil {
		return nil
	}
	size, ok := m.retiredSizes.lookup(id)
	if !ok {
		return nil
	}
	reason := ""
	switch {
	case end > size:
		reason = "data beyond the final size of closed stream " + strconv.FormatUint(uint64(id), 10)
	case fin && end != size:
		reason = "final size of closed stream " + strconv.FormatUint(uint64(id), 10) + " changed"
	default:
		return nil
	}
	return &wire.TransportError{Code: wire.FinalSizeError, FrameType: ft, Reason: reason}
}
