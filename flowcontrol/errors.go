package flowcontrol

import (
	"strconv"

	"github.com/quicstack/quic/wire"
)

// fcError returns a *wire.TransportError whose reason is
// what + " " + a + rel + b, such as "stream data end 1001 exceeds limit 1000".
// It allocates, which is fine: it runs once, when the connection closes.
func fcError(code wire.TransportErrorCode, frame wire.FrameType, what string, a uint64, rel string, b uint64) error {
	buf := make([]byte, 0, len(what)+len(rel)+42)
	buf = append(buf, what...)
	buf = append(buf, ' ')
	buf = strconv.AppendUint(buf, a, 10)
	buf = append(buf, rel...)
	buf = strconv.AppendUint(buf, b, 10)
	return &wire.TransportError{Code: code, FrameType: frame, Reason: string(buf)}
}
