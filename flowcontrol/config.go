package flowcontrol

import "github.com/quicstack/quic/wire"

// Default receive windows. A stream starts with 512 KiB of credit and may
// auto-tune up to 16 MiB; the connection starts at 1.5 times that, so a
// single stream can use its whole window, and may grow up to 24 MiB. These
// are the values a connection Config uses for its zero fields; they are
// the initial_max_stream_data_* and initial_max_data transport parameters.
const (
	DefaultInitialStreamWindow = 512 << 10
	DefaultMaxStreamWindow     = 16 << 20
	DefaultInitialConnWindow   = 768 << 10
	DefaultMaxConnWindow       = 24 << 20
)

// ReceiveConfig sizes a receive window. Values are taken literally; the
// zero value grants no credit at all.
type ReceiveConfig struct {
	// InitialWindow is the first limit, advertised in the transport
	// parameters, and the window size auto-tuning starts from. Zero is
	// valid: the peer may send nothing (until EnsureMinWindow raises the
	// window). Values above 2^62-1 are treated as 2^62-1.
	InitialWindow uint64
	// MaxWindow caps auto-tuning and EnsureMinWindow. A value below
	// InitialWindow is treated as InitialWindow, which turns auto-tuning
	// off. Values above 2^62-1 are treated as 2^62-1.
	MaxWindow uint64
	// Shared marks the connection's window, whose credit all streams
	// use: data left unread on some streams then does not keep the
	// others from the rest of the window (see ReceiveWindow.ShouldSendUpdate).
	// A stream's window is not shared: its reader reads its unread data
	// first.
	Shared bool
}

// DefaultStreamReceiveConfig returns the default configuration of a
// stream's receive window: DefaultInitialStreamWindow growing up to
// DefaultMaxStreamWindow.
func DefaultStreamReceiveConfig() ReceiveConfig {
	return ReceiveConfig{InitialWindow: DefaultInitialStreamWindow, MaxWindow: DefaultMaxStreamWindow}
}

// DefaultConnReceiveConfig returns the default configuration of the
// connection's receive window: DefaultInitialConnWindow growing up to
// DefaultMaxConnWindow, shared by all streams.
func DefaultConnReceiveConfig() ReceiveConfig {
	return ReceiveConfig{InitialWindow: DefaultInitialConnWindow, MaxWindow: DefaultMaxConnWindow, Shared: true}
}

// normalized returns the initial and maximum windows after the clamping
// documented on the fields.
func (c ReceiveConfig) normalized() (initial, maxWindow uint64) {
	initial = min(c.InitialWindow, wire.MaxVarint)
	maxWindow = min(max(c.MaxWindow, initial), wire.MaxVarint)
	return initial, maxWindow
}
