package flowcontrol

import (
	"math/bits"
	"time"

	"github.com/quicstack/quic/wire"
)

// ReceiveWindow is the receiving side of one flow-control limit: the limit
// granted to the peer, the data received against it, the data the
// application consumed, and the window size used to grant more. A
// connection uses one directly for its MAX_DATA limit; each stream's
// StreamReceiver holds another for MAX_STREAM_DATA and charges the
// connection's window as well.
//
// Limits never decrease and never exceed 2^62-1. The zero value grants
// nothing; call Init or NewReceiveWindow. A ReceiveWindow is not safe for
// concurrent use.
type ReceiveWindow struct {
	limit      uint64 // largest limit granted; data beyond it is an error
	advertised uint64 // largest limit handed to a frame and not known lost
	received   uint64 // highest received offset, or sum of them
	consumed   uint64 // bytes the application consumed (or that were discarded)
	window     uint64
	maxWindow  uint64
	shared     bool // ReceiveConfig.Shared: the connection's window

	// The auto-tuning epoch runs from one update (or the first
	// consumption) to the next.
	epochStart    time.Time
	epochConsumed uint64
	epochStarted  bool
}

// NewReceiveWindow returns a window configured by cfg, with
// cfg.InitialWindow as the limit already advertised in the transport
// parameters.
func NewReceiveWindow(cfg ReceiveConfig) *ReceiveWindow {
	w := new(ReceiveWindow)
	w.Init(cfg)
	return w
}

// Init resets w to the state NewReceiveWindow returns, without allocating,
// for windows embedded in other structures.
func (w *ReceiveWindow) Init(cfg ReceiveConfig) {
	initial, maxWindow := cfg.normalized()
	*w = ReceiveWindow{limit: initial, advertised: initial, window: initial, maxWindow: maxWindow, shared: cfg.Shared}
}

// Limit returns the largest limit granted: the value of the last MAX_DATA
// or MAX_STREAM_DATA frame built from NextLimit, or the initial window.
// The peer may send data up to this offset (sum, for a connection).
func (w *ReceiveWindow) Limit() uint64 { return w.limit }

// Received returns the flow-control credit the peer has used: the highest
// received offset of a stream, or the sum of those of all streams for a
// connection.
func (w *ReceiveWindow) Received() uint64 { return w.received }

// Consumed returns the number of bytes the application has consumed,
// including bytes discarded unread.
func (w *ReceiveWindow) Consumed() uint64 { return w.consumed }

// Window returns the current window size: the credit granted beyond the
// consumed bytes at the next update.
func (w *ReceiveWindow) Window() uint64 { return w.window }

// MaxWindow returns the size the window may grow to.
func (w *ReceiveWindow) MaxWindow() uint64 { return w.maxWindow }

// OnReceived charges n more bytes of credit, such as the growth of a
// stream's highest received offset. It returns a FLOW_CONTROL_ERROR, and
// changes nothing, if that exceeds the limit:
// "A receiver MUST close the connection with an error of type
// FLOW_CONTROL_ERROR if the sender violates the advertised connection or
// stream data limits" (RFC 9000, Section 4.1).
//
// Windows paired with StreamReceivers are charged by them; calling
// OnReceived on such a window as well would count the data twice.
func (w *ReceiveWindow) OnReceived(n uint64) error {
	if err := w.checkReceive(n, 0, "data total"); err != nil {
		return err
	}
	w.received += n
	return nil
}

// checkReceive returns a FLOW_CONTROL_ERROR naming frame and what was
// counted if n more bytes exceed the limit.
func (w *ReceiveWindow) checkReceive(n uint64, frame wire.FrameType, what string) error {
	if n > w.limit-w.received {
		// "An endpoint MUST terminate a connection with an error of type
		// FLOW_CONTROL_ERROR if it receives more data than the maximum
		// data value that it has sent." RFC 9000, Section 19.9
		return fcError(wire.FlowControlError, frame, what, sat(w.received, n), " exceeds limit ", w.limit)
	}
	return nil
}

// sat returns a+b, or the largest uint64 if that overflows.
func sat(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return ^uint64(0)
	}
	return s
}

// OnConsumed records that the application consumed n more bytes, which
// frees credit for the next update. It never counts more than was
// received. The first consumption starts the first auto-tuning epoch.
//
// Windows paired with StreamReceivers are updated by them.
func (w *ReceiveWindow) OnConsumed(now time.Time, n uint64) {
	n = min(n, w.received-w.consumed)
	if n == 0 {
		return
	}
	if !w.epochStarted {
		w.epochStarted, w.epochStart, w.epochConsumed = true, now, w.consumed
	}
	w.consumed += n
}

// ShouldSendUpdate reports whether a MAX_DATA or MAX_STREAM_DATA frame
// should be sent: when more than half the window has been consumed
// (consumed > limit − window/2) and the limit can still grow, or when the
// current limit was never sent or was lost.
//
// A shared (connection) window also sends one when the credit it would
// grant (consumed + window − limit) is at least the credit the peer has
// left (limit − received) and at least a sixteenth of the window. Data
// the application leaves unread on some streams holds part of the window
// for as long as it stays unread, and only the rest, window − unread,
// serves the streams being read; this is the half-window rule applied to
// that rest. With the half-window rule alone the limit could never rise
// again once half the window sat unread: the connection's real bound was
// half its window, not the window (RFC 9000, Section 4.2: "To avoid
// blocking a sender, a receiver MAY send a MAX_STREAM_DATA or MAX_DATA
// frame multiple times within a round trip"). When nothing is left
// unread, the two rules agree. The sixteenth keeps the updates from
// shrinking to a few bytes each when almost the whole window is unread
// (TCP's receiver-side silly window avoidance, RFC 1122, Section
// 4.2.3.3); a reader waiting then gets the rest (GrowForWaitingReader).
func (w *ReceiveWindow) ShouldSendUpdate() bool {
	return w.updateDue() || w.limit > w.advertised
}

// ConsumedBeforeUpdate returns how many more bytes the application must
// consume for ShouldSendUpdate to call for a larger limit, with the data
// received so far: 0 if it does already, the largest uint64 if it never
// will (the limit is at its maximum). It lets whoever counts consumption
// elsewhere tell when to report it. For a shared window, data that
// arrives meanwhile can only make it smaller.
func (w *ReceiveWindow) ConsumedBeforeUpdate() uint64 {
	if w.limit >= wire.MaxVarint {
		return ^uint64(0)
	}
	if w.updateDue() {
		return 0
	}
	// The half-window rule: limit − consumed < window/2.
	n := w.limit - w.consumed - w.window/2 + 1
	if w.shared {
		// The rule for unread data: consumed + window ≥ limit + need.
		// Both sides are below 2^63: no overflow.
		if need := w.limit + w.sharedGrantNeed(); need > w.consumed+w.window {
			n = min(n, need-(w.consumed+w.window))
		}
	}
	return n
}

// updateDue reports whether the half-window rule, or for a shared window
// the rule for unread data, calls for a larger limit. consumed ≤ received
// ≤ limit, so limit-consumed does not wrap.
func (w *ReceiveWindow) updateDue() bool {
	if w.limit >= wire.MaxVarint {
		return false
	}
	if w.limit-w.consumed < w.window/2 {
		return true
	}
	// consumed, window ≤ 2^62-1: the sum does not overflow.
	return w.shared && w.consumed+w.window >= w.limit+w.sharedGrantNeed()
}

// sharedGrantNeed is the credit a shared window must be able to grant
// (consumed + window − limit) for an update to be due under the rule for
// unread data: the credit the peer has left, and at least a sixteenth of
// the window (and one byte).
func (w *ReceiveWindow) sharedGrantNeed() uint64 {
	return max(w.limit-w.received, w.window/16, 1)
}

// NextLimit returns the limit to advertise now. When an update is due (see
// ShouldSendUpdate) it first auto-tunes the window and raises the limit to
// consumed + window; otherwise it returns the current limit unchanged, for
// a frame that is sent again. rtt is the smoothed round-trip time; zero
// turns auto-tuning off for this update.
//
// "A receiver can use an autotuning mechanism to tune the frequency and
// amount of advertised additional credit based on a round-trip time
// estimate and the rate at which the receiving application consumes
// data" (RFC 9000, Section 4.2). The window doubles, up to MaxWindow, when
// the bytes consumed since the previous update, scaled to a whole window,
// took less than 2·rtt.
func (w *ReceiveWindow) NextLimit(now time.Time, rtt time.Duration) uint64 {
	if !w.updateDue() {
		return w.limit
	}
	if w.epochStarted && rtt > 0 && w.window < w.maxWindow &&
		fcConsumedFast(now.Sub(w.epochStart), w.window, rtt, w.consumed-w.epochConsumed) {
		w.window = min(2*w.window, w.maxWindow)
	}
	w.epochStarted, w.epochStart, w.epochConsumed = true, now, w.consumed
	// consumed, window ≤ 2^62-1, so the sum does not overflow. "Once a
	// receiver advertises a limit for the connection or a stream, it is
	// not an error to advertise a smaller limit, but the smaller limit
	// has no effect" (RFC 9000, Section 4.1): we never do.
	w.limit = max(w.limit, min(w.consumed+w.window, wire.MaxVarint))
	return w.limit
}

// fcConsumedFast reports whether used bytes consumed in elapsed time mean
// a whole window would take less than two round trips:
// elapsed·window < 2·rtt·used, computed exactly in 128 bits.
func fcConsumedFast(elapsed time.Duration, window uint64, rtt time.Duration, used uint64) bool {
	if used == 0 {
		return false
	}
	if elapsed < 0 {
		elapsed = 0
	}
	lh, ll := bits.Mul64(uint64(elapsed), window)
	rh, rl := bits.Mul64(2*uint64(rtt), used) // rtt < 2^63, so 2·rtt fits
	return lh < rh || lh == rh && ll < rl
}

// OnUpdateSent records that a frame carrying limit was sent, so
// ShouldSendUpdate stops asking for it.
func (w *ReceiveWindow) OnUpdateSent(limit uint64) {
	w.advertised = max(w.advertised, limit)
}

// OnUpdateLost records that the frame carrying limit was lost. If limit is
// still the current one, ShouldSendUpdate asks for it again; a lost frame
// superseded by a larger limit needs no repair.
func (w *ReceiveWindow) OnUpdateLost(limit uint64) {
	if limit == w.limit && w.advertised == limit {
		w.advertised = 0
	}
}

// OnBlockedReceived handles a DATA_BLOCKED or STREAM_DATA_BLOCKED frame
// reporting that the peer is blocked at limit. A limit below the current
// one means the peer has not seen the latest update, so it is sent again.
// It grants nothing new: "a receiver MUST NOT wait for a
// STREAM_DATA_BLOCKED or DATA_BLOCKED frame before sending a
// MAX_STREAM_DATA or MAX_DATA frame" (RFC 9000, Section 4.2), so credit is
// driven by consumption alone.
func (w *ReceiveWindow) OnBlockedReceived(limit uint64) {
	if limit < w.limit {
		w.advertised = 0
	}
}

// Starved reports whether the peer has (nearly) used up its credit while
// much of the window sits received but not consumed, so that
// ShouldSendUpdate will not grant more until the application reads that
// data: the peer can send at most an eighth of the window more. A
// connection window in this state deadlocks an application that waits
// for a stream whose data the peer cannot send while it leaves other
// streams' data unread (see GrowForWaitingReader).
func (w *ReceiveWindow) Starved() bool {
	return w.limit < wire.MaxVarint && w.limit-w.received < w.window/8 && !w.updateDue()
}

// CanGrowForWaitingReader reports whether GrowForWaitingReader would raise
// the limit now: the window is starved, and it is below MaxWindow or
// some data was consumed since the last limit was set.
func (w *ReceiveWindow) CanGrowForWaitingReader() bool {
	return w.Starved() && (w.window < w.maxWindow || w.consumed+w.window > w.limit)
}

// GrowForWaitingReader doubles the window, up to MaxWindow, and raises the
// limit to consumed + window, when the window is starved (see Starved)
// while the application waits for data: the credit it would free by
// reading is held by data it does not read yet, such as the responses of
// other requests that it reads one after another, or the streams it
// accepted before the one it waits for. At MaxWindow it still grants
// what was consumed since the last limit, however little. It reports
// whether the limit grew; ShouldSendUpdate then asks for the new limit to
// be sent. Buffered data stays bounded by MaxWindow; an application that
// leaves the whole of it unread while it waits for more still blocks.
func (w *ReceiveWindow) GrowForWaitingReader() bool {
	if !w.CanGrowForWaitingReader() {
		return false
	}
	w.window = min(2*w.window, w.maxWindow)
	limit := max(w.limit, min(w.consumed+w.window, wire.MaxVarint))
	grew := limit > w.limit
	w.limit = limit
	return grew
}

// EnsureMinWindow raises the window to at least n, capped at MaxWindow. A
// connection window is kept at 1.5 times its largest stream window this
// way, so that one fast stream is not limited by the connection. It takes
// effect at the next update, which may become due at once.
func (w *ReceiveWindow) EnsureMinWindow(n uint64) {
	w.window = max(w.window, min(n, w.maxWindow))
}

// consumeNow adds n bytes consumed without starting an epoch (discarded
// data). The caller guarantees consumed+n ≤ received.
func (w *ReceiveWindow) consumeNow(n uint64) { w.consumed += n }
