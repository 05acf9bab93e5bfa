// Package flowcontrol implements QUIC stream and connection data flow
// control (RFC 9000, Section 4): the limits a receiver grants with
// MAX_STREAM_DATA and MAX_DATA frames, the final-size rules of Section 4.5,
// and the credit a sender may use with the DATA_BLOCKED and
// STREAM_DATA_BLOCKED signals that go with it. Stream-count limits
// (Section 4.6, MAX_STREAMS) are not handled here.
//
// # Receiving
//
// A connection owns one ReceiveWindow for the connection-level limit
// (MAX_DATA) and gives each stream a StreamReceiver that points to it. A
// StreamReceiver checks every STREAM and RESET_STREAM frame against both
// limits and against the stream's final size, then charges the growth of
// the stream's highest received offset to the connection window, so that
// the connection counts "the sum of the absolute byte offsets of all
// streams" (RFC 9000, Section 4.1) without the caller passing deltas
// around:
//
//	err := st.OnData(f.Offset, uint64(len(f.Data)), f.Fin) // STREAM frame
//	err := st.OnReset(f.FinalSize)                       // RESET_STREAM(_AT)
//	st.OnConsumed(now, n)                                // the application read n bytes
//	st.Abandon(now)                                      // unread data is discarded
//
// Any error is a *wire.TransportError (FLOW_CONTROL_ERROR or
// FINAL_SIZE_ERROR) to close the connection with; a call that fails
// changes nothing.
//
// Granting credit follows the rule gQUIC used: a new limit is due once the
// application has consumed more than half the window (consumed > limit −
// window/2), and the new limit is consumed + window, never below a limit
// already granted. The connection's window (ReceiveConfig.Shared) also
// grants once the credit it would add reaches the credit the peer has
// left, so that data left unread on some streams holds only its own part
// of the window; and while the application waits for data, a starved
// connection window grows or grants what was consumed
// (GrowForWaitingReader). The window starts at ReceiveConfig.InitialWindow and
// auto-tunes: when the bytes consumed since the previous update, scaled to a
// whole window, took less than two round trips, the window doubles, up to
// ReceiveConfig.MaxWindow. A window of W then settles near two
// bandwidth-delay products, the size at which the half-window update
// reaches the sender before it runs dry. When a stream window grows, the
// connection window is raised to at least 1.5 times it
// (ReceiveWindow.EnsureMinWindow). The packer asks
//
//	if st.ShouldSendUpdate() {
//		limit := st.NextLimit(now, rtt) // MAX_STREAM_DATA value
//		... append the frame ...
//		st.OnUpdateSent(limit)
//	}
//
// and on loss of the packet calls OnUpdateLost(limit), which asks for the
// current limit to be sent again only if nothing newer has been sent.
//
// # Sending
//
// A SendWindow holds the peer's limit for a stream or for the connection:
// Credit is what may be sent now, OnSent uses it up, OnMaxData raises the
// limit (smaller values are ignored) and Blocked says when a DATA_BLOCKED or
// STREAM_DATA_BLOCKED frame is due: as soon as the credit is zero, once per
// limit value, again after that frame is lost.
//
// # Concurrency, time and allocation
//
// Nothing here reads the clock; methods that depend on time take now, and
// round-trip times are passed in (the smoothed RTT of congestion.RTTStats).
// The types are owned by one connection goroutine and are not safe for
// concurrent use. The zero values are not ready for use: call Init or the
// New functions. No method allocates except to build a returned error.
package flowcontrol
