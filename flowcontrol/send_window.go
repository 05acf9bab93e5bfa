package flowcontrol

// SendWindow is the sending side of one flow-control limit: the largest
// limit the peer granted for a stream (initial_max_stream_data_*,
// MAX_STREAM_DATA) or for the connection (initial_max_data, MAX_DATA), and
// the bytes sent against it. "Senders MUST NOT send data in excess of
// either limit" (RFC 9000, Section 4.1): a stream may send
// min(stream.Credit(), conn.Credit()) new bytes.
//
// It also decides when to send DATA_BLOCKED or STREAM_DATA_BLOCKED: as
// soon as the credit is zero while data waits, exactly once per limit
// value, and once more if that frame is lost while the limit is still
// current. Prompt BLOCKED frames let the receiver see a stall in one trip
// instead of an idle timeout.
//
// The zero value is a window with limit 0. A SendWindow is not safe for
// concurrent use.
type SendWindow struct {
	limit        uint64
	sent         uint64
	blockedLimit uint64 // the limit a BLOCKED frame was sent for
	blockedSent  bool
}

// NewSendWindow returns a window with the peer's initial limit, from its
// transport parameters.
func NewSendWindow(initialLimit uint64) *SendWindow {
	return &SendWindow{limit: initialLimit}
}

// Init resets w to the state NewSendWindow returns, without allocating.
func (w *SendWindow) Init(initialLimit uint64) { *w = SendWindow{limit: initialLimit} }

// Limit returns the largest limit the peer granted.
func (w *SendWindow) Limit() uint64 { return w.limit }

// Sent returns the credit used: the highest offset sent on a stream, or
// the sum of those for the connection.
func (w *SendWindow) Sent() uint64 { return w.sent }

// Credit returns how many more bytes may be sent now: limit − sent.
func (w *SendWindow) Credit() uint64 { return w.limit - w.sent }

// OnSent uses n bytes of credit, for new data only (retransmissions use
// none). It panics if n exceeds Credit: sending beyond the limit is a bug
// in the caller, never the peer's doing.
func (w *SendWindow) OnSent(n uint64) {
	if n > w.limit-w.sent {
		panic("flowcontrol: OnSent beyond the peer's limit")
	}
	w.sent += n
}

// OnMaxData handles a MAX_DATA or MAX_STREAM_DATA frame (or a transport
// parameter remembered for 0-RTT being replaced) carrying limit, and
// reports whether it raised the limit, so that blocked senders can be
// woken. "A sender MUST ignore any MAX_STREAM_DATA or MAX_DATA frames that
// do not increase flow control limits" (RFC 9000, Section 4.1).
func (w *SendWindow) OnMaxData(limit uint64) bool {
	if limit <= w.limit {
		return false
	}
	w.limit = limit
	return true
}

// Blocked reports whether a DATA_BLOCKED or STREAM_DATA_BLOCKED frame
// should be sent, and the limit it carries ("the connection-level limit at
// which blocking occurred", RFC 9000, Section 19.12). Call it when data is
// waiting to be sent: "A sender SHOULD send a STREAM_DATA_BLOCKED or
// DATA_BLOCKED frame to indicate to the receiver that it has data to write
// but is blocked by flow control limits" (RFC 9000, Section 4.1). It is
// true while the credit is zero and no BLOCKED frame for the current limit
// has been sent (or since OnBlockedLost or RearmBlocked).
func (w *SendWindow) Blocked() (limit uint64, ok bool) {
	if w.sent < w.limit || w.blockedSent && w.blockedLimit == w.limit {
		return 0, false
	}
	return w.limit, true
}

// OnBlockedSent records that a BLOCKED frame carrying limit was sent;
// Blocked returns false until the limit changes.
func (w *SendWindow) OnBlockedSent(limit uint64) {
	w.blockedLimit, w.blockedSent = limit, true
}

// OnBlockedLost records that the BLOCKED frame carrying limit was lost. If
// limit is still the current limit and the last one a BLOCKED frame was
// sent for, Blocked may return true again; a frame made stale by a larger
// limit is not repaired.
func (w *SendWindow) OnBlockedLost(limit uint64) {
	if w.blockedSent && w.blockedLimit == limit && limit == w.limit {
		w.blockedSent = false
	}
}

// RearmBlocked allows one more BLOCKED frame for the current limit, for
// the keep-alive of RFC 9000, Section 4.1: "a sender that is flow control
// limited SHOULD periodically send a STREAM_DATA_BLOCKED or DATA_BLOCKED
// frame when it has no ack-eliciting packets in flight."
func (w *SendWindow) RearmBlocked() { w.blockedSent = false }
