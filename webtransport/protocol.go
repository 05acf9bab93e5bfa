package webtransport

// Codepoints of WebTransport over HTTP/3 (draft-ietf-webtrans-http3). Two
// generations are spoken: the current one (SETTINGS_WT_ENABLED, upgrade
// token "webtransport-h3", flow control), which quic-go's webtransport-go
// speaks, and draft-02 (SETTINGS_ENABLE_WEBTRANSPORT, upgrade token
// "webtransport"), which Chromium speaks. Their stream, datagram, error
// code and session-closing formats are the same.
const (
	// settingWTEnabled is SETTINGS_WT_ENABLED: "A value of "1" indicates
	// support for the variant of WebTransport that is described in this
	// document" (Section 3.1).
	settingWTEnabled = 0x2c7cf000
	// settingEnableWebTransportDraft02 is SETTINGS_ENABLE_WEBTRANSPORT of
	// draft-ietf-webtrans-http3-02, which Chromium sends and looks for.
	settingEnableWebTransportDraft02 = 0x2b603742
	// settingWTMaxSessions is SETTINGS_WT_MAX_SESSIONS of drafts 07 to 14,
	// which some clients (Safari) still require from a server.
	settingWTMaxSessions = 0x14e9cd29
	// The flow control settings (Section 5.5).
	settingWTInitialMaxStreamsUni  = 0x2b64
	settingWTInitialMaxStreamsBidi = 0x2b65
	settingWTInitialMaxData        = 0x2b61
)

const (
	// protocolH3 is the upgrade token of the current drafts: "The
	// :protocol pseudo-header field ... MUST be set to webtransport-h3"
	// (Section 3.2).
	protocolH3 = "webtransport-h3"
	// protocolDraft02 is the upgrade token of draft-02, sent with the
	// header field Sec-Webtransport-Http3-Draft02: 1.
	protocolDraft02 = "webtransport"
	// draft02Header is what a draft-02 client sends with its CONNECT, and
	// draft02ResponseHeader what the server answers with.
	draft02Header         = "Sec-Webtransport-Http3-Draft02"
	draft02ResponseHeader = "Sec-Webtransport-Http3-Draft"
)

const (
	// uniStreamType is "The HTTP/3 unidirectional stream type SHALL be
	// 0x54" (Section 4.2).
	uniStreamType = 0x54
	// bidiSignal is WT_STREAM: "Clients and servers use the signal value
	// 0x41 to open a bidirectional WebTransport stream" (Section 4.3).
	bidiSignal = 0x41
)

// Capsule types (Sections 4.8, 5.6 and 6).
const (
	capsuleCloseSession       = 0x2843
	capsuleDrainSession       = 0x78ae
	capsuleMaxData            = 0x190b4d3d
	capsuleMaxStreamData      = 0x190b4d3e // WebTransport over HTTP/2 only
	capsuleMaxStreamsBidi     = 0x190b4d3f
	capsuleMaxStreamsUni      = 0x190b4d40
	capsuleDataBlocked        = 0x190b4d41
	capsuleStreamDataBlocked  = 0x190b4d42 // WebTransport over HTTP/2 only
	capsuleStreamsBlockedBidi = 0x190b4d43
	capsuleStreamsBlockedUni  = 0x190b4d44
)

// HTTP/3 error codes of WebTransport (Section 9.5).
const (
	codeBufferedStreamRejected = 0x3994bd84
	codeSessionGone            = 0x170d7b68
	codeFlowControlError       = 0x045d4487
	codeALPNError              = 0x0817b3dd
	codeRequirementsNotMet     = 0x212c0d48
)

// maxCloseMessage is the longest Application Error Message of a
// WT_CLOSE_SESSION capsule: "its length MUST NOT exceed 1024 bytes"
// (Section 6).
const maxCloseMessage = 1024

// maxStreamsLimit is the largest Maximum Streams value of WT_MAX_STREAMS
// and WT_STREAMS_BLOCKED: "This value cannot exceed 2^60" (Section 5.6.1).
const maxStreamsLimit = 1 << 60

// maxVarint is the largest variable-length integer (RFC 9000, Section 16).
const maxVarint = 1<<62 - 1

// The range of HTTP/3 error codes that carry WebTransport application
// error codes (Section 4.4): "0x00000000 corresponds to 0x52e4a40fa8db,
// and 0xffffffff corresponds to 0x52e5ac983162".
const (
	firstAppCode = 0x52e4a40fa8db
	lastAppCode  = 0x52e5ac983162
)

// httpCode maps a WebTransport application error code to its HTTP/3
// error code, skipping the reserved codepoints of the form 0x1f * N +
// 0x21 (Section 4.4, Figure 4: "first + n + floor(n / 0x1e)").
func httpCode(n StreamErrorCode) uint64 {
	return firstAppCode + uint64(n) + uint64(n)/0x1e
}

// appCode maps an HTTP/3 error code back to the WebTransport application
// error code; false if h is outside the range or one of its reserved
// codepoints (Section 4.4, Figure 4).
func appCode(h uint64) (StreamErrorCode, bool) {
	if h < firstAppCode || h > lastAppCode || (h-0x21)%0x1f == 0 {
		return 0, false
	}
	shifted := h - firstAppCode
	return StreamErrorCode(shifted - shifted/0x1f), true
}

// appendVarint appends v in the QUIC variable-length encoding (RFC 9000,
// Section 16). v must be below 2^62.
func appendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return append(b, byte(v>>8)|0x40, byte(v))
	case v < 1<<30:
		return append(b, byte(v>>24)|0x80, byte(v>>16), byte(v>>8), byte(v))
	default:
		return append(b, byte(v>>56)|0xc0, byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
}

// parseVarint parses the variable-length integer at the start of b and
// returns it and its length; false if b is too short.
func parseVarint(b []byte) (uint64, int, bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, false
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, true
}

// readVarint reads a variable-length integer from r, one byte at a time
// (stream headers are a few bytes); it returns the value and its length.
func readVarint(r interface{ Read([]byte) (int, error) }) (uint64, int, error) {
	var b [8]byte
	if _, err := readFull(r, b[:1]); err != nil {
		return 0, 0, err
	}
	n := 1 << (b[0] >> 6)
	if _, err := readFull(r, b[1:n]); err != nil {
		return 0, 0, err
	}
	v, _, _ := parseVarint(b[:n])
	return v, n, nil
}

// readFull is io.ReadFull without the io.ErrUnexpectedEOF conversion
// mattering: any error fails the header.
func readFull(r interface{ Read([]byte) (int, error) }, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil && n < len(b) {
			return n, err
		}
	}
	return n, nil
}
