package webtransport

import "github.com/quicstack/quic/http3"

// Config holds the WebTransport flow control limits an endpoint grants
// its peer in each session (draft-ietf-webtrans-http3, Section 5), sent
// in SETTINGS. The zero value means the defaults. Flow control is in
// force only if the peer sends limits too; otherwise a connection carries
// one session at a time ("If flow control is not enabled, clients MUST
// NOT attempt to establish more than one simultaneous WebTransport
// session", Section 5.1), as with Chromium, which speaks draft-02.
type Config struct {
	// MaxIncomingStreams is how many bidirectional streams the peer may
	// have open at once in a session (WT_MAX_STREAMS, raised as they
	// finish). Zero means 100; negative means none.
	MaxIncomingStreams int64
	// MaxIncomingUniStreams is the same for unidirectional streams.
	// Zero means 100; negative means none.
	MaxIncomingUniStreams int64
	// MaxIncomingData is the session's data window: how many bytes of
	// stream data the peer may send beyond what the application read,
	// over all the session's streams (WT_MAX_DATA). Zero means 16 MiB.
	MaxIncomingData int64
	// DisableFlowControl sends none of the limits, so that flow control
	// is never in force and a connection carries one session at a time.
	DisableFlowControl bool
}

func limit(v, def int64, max uint64) uint64 {
	switch {
	case v == 0:
		return uint64(def)
	case v < 0:
		return 0
	}
	return min(uint64(v), max)
}

func (c *Config) maxIncomingStreams() uint64 {
	if c == nil {
		return 100
	}
	return limit(c.MaxIncomingStreams, 100, maxStreamsLimit)
}

func (c *Config) maxIncomingUniStreams() uint64 {
	if c == nil {
		return 100
	}
	return limit(c.MaxIncomingUniStreams, 100, maxStreamsLimit)
}

func (c *Config) maxIncomingData() uint64 {
	if c == nil {
		return 16 << 20
	}
	return limit(c.MaxIncomingData, 16<<20, maxVarint)
}

// initialSettings returns the flow control settings to send (Section
// 5.5): none if flow control is disabled or every limit is zero.
func (c *Config) initialSettings() []http3.Setting {
	if c != nil && c.DisableFlowControl {
		return nil
	}
	var l []http3.Setting
	for _, s := range []http3.Setting{
		{ID: settingWTInitialMaxStreamsBidi, Value: c.maxIncomingStreams()},
		{ID: settingWTInitialMaxStreamsUni, Value: c.maxIncomingUniStreams()},
		{ID: settingWTInitialMaxData, Value: c.maxIncomingData()},
	} {
		if s.Value != 0 {
			l = append(l, s)
		}
	}
	return l
}
