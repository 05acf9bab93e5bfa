package http3

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
)

// ErrCode is an HTTP/3 error code (RFC 9114, Section 8.1), carried in
// RESET_STREAM, STOP_SENDING and CONNECTION_CLOSE frames.
type ErrCode uint64

// HTTP/3 error codes (RFC 9114, Section 8.1).
const (
	ErrCodeNoError              ErrCode = 0x0100 // H3_NO_ERROR
	ErrCodeGeneralProtocolError ErrCode = 0x0101 // H3_GENERAL_PROTOCOL_ERROR
	ErrCodeInternalError        ErrCode = 0x0102 // H3_INTERNAL_ERROR
	ErrCodeStreamCreationError  ErrCode = 0x0103 // H3_STREAM_CREATION_ERROR
	ErrCodeClosedCriticalStream ErrCode = 0x0104 // H3_CLOSED_CRITICAL_STREAM
	ErrCodeFrameUnexpected      ErrCode = 0x0105 // H3_FRAME_UNEXPECTED
	ErrCodeFrameError           ErrCode = 0x0106 // H3_FRAME_ERROR
	ErrCodeExcessiveLoad        ErrCode = 0x0107 // H3_EXCESSIVE_LOAD
	ErrCodeIDError              ErrCode = 0x0108 // H3_ID_ERROR
	ErrCodeSettingsError        ErrCode = 0x0109 // H3_SETTINGS_ERROR
	ErrCodeMissingSettings      ErrCode = 0x010a // H3_MISSING_SETTINGS
	ErrCodeRequestRejected      ErrCode = 0x010b // H3_REQUEST_REJECTED
	ErrCodeRequestCancelled     ErrCode = 0x010c // H3_REQUEST_CANCELLED
	ErrCodeRequestIncomplete    ErrCode = 0x010d // H3_REQUEST_INCOMPLETE
	ErrCodeMessageError         ErrCode = 0x010e // H3_MESSAGE_ERROR
	ErrCodeConnectError         ErrCode = 0x010f // H3_CONNECT_ERROR
	ErrCodeVersionFallback      ErrCode = 0x0110 // H3_VERSION_FALLBACK
	ErrCodeDatagramError        ErrCode = 0x33   // H3_DATAGRAM_ERROR (RFC 9297, Section 5.2)
)

var errCodeNames = map[ErrCode]string{
	ErrCodeNoError:              "H3_NO_ERROR",
	ErrCodeGeneralProtocolError: "H3_GENERAL_PROTOCOL_ERROR",
	ErrCodeInternalError:        "H3_INTERNAL_ERROR",
	ErrCodeStreamCreationError:  "H3_STREAM_CREATION_ERROR",
	ErrCodeClosedCriticalStream: "H3_CLOSED_CRITICAL_STREAM",
	ErrCodeFrameUnexpected:      "H3_FRAME_UNEXPECTED",
	ErrCodeFrameError:           "H3_FRAME_ERROR",
	ErrCodeExcessiveLoad:        "H3_EXCESSIVE_LOAD",
	ErrCodeIDError:              "H3_ID_ERROR",
	ErrCodeSettingsError:        "H3_SETTINGS_ERROR",
	ErrCodeMissingSettings:      "H3_MISSING_SETTINGS",
	ErrCodeRequestRejected:      "H3_REQUEST_REJECTED",
	ErrCodeRequestCancelled:     "H3_REQUEST_CANCELLED",
	ErrCodeRequestIncomplete:    "H3_REQUEST_INCOMPLETE",
	ErrCodeMessageError:         "H3_MESSAGE_ERROR",
	ErrCodeConnectError:         "H3_CONNECT_ERROR",
	ErrCodeVersionFallback:      "H3_VERSION_FALLBACK",
	ErrCodeDatagramError:        "H3_DATAGRAM_ERROR",
}

// String returns the code's name from RFC 9114, Section 8.1, or its value
// in hexadecimal for other codes.
func (c ErrCode) String() string {
	if s, ok := errCodeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("H3 error %#x", uint64(c))
}

// Error is an HTTP/3 protocol error: a connection error (Stream false),
// which closes the QUIC connection with Code, or a stream error, which
// resets one request stream.
type Error struct {
	// Code is the HTTP/3 error code.
	Code ErrCode
	// Reason is a human-readable detail.
	Reason string
	// Stream reports a stream error rather than a connection error.
	Stream bool
}

// Error implements error.
func (e *Error) Error() string {
	kind := "connection"
	if e.Stream {
		kind = "stream"
	}
	if e.Reason == "" {
		return fmt.Sprintf("http3: %s error %s", kind, e.Code)
	}
	return fmt.Sprintf("http3: %s error %s: %s", kind, e.Code, e.Reason)
}

func connError(code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

func streamError(code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...), Stream: true}
}

// Frame types (RFC 9114, Section 7.2).
const (
	frameData        = 0x0
	frameHeaders     = 0x1
	frameCancelPush  = 0x3
	frameSettings    = 0x4
	framePushPromise = 0x5
	frameGoaway      = 0x7
	frameMaxPushID   = 0xd
)

// isHTTP2FrameType reports the frame types reserved because HTTP/2 used
// them: "Frame types that were used in HTTP/2 where there is no
// corresponding HTTP/3 frame have also been reserved ... their receipt
// MUST be treated as a connection error of type H3_FRAME_UNEXPECTED."
// (RFC 9114, Section 7.2.8)
func isHTTP2FrameType(t uint64) bool {
	return t == 0x2 || t == 0x6 || t == 0x8 || t == 0x9
}

// Settings identifiers (RFC 9114, Section 7.2.4.1; RFC 9204, Section 5;
// RFC 8441/9220; RFC 9297).
const (
	settingQPACKMaxTableCapacity  = 0x1
	settingMaxFieldSectionSize    = 0x6
	settingQPACKBlockedStreams    = 0x7
	settingEnableConnectProtocol  = 0x8
	settingH3Datagram             = 0x33
	maxControlFramePayload        = 16 << 10 // SETTINGS, GOAWAY, ... on the control stream
	maxHeadersFramePayload        = 1 << 20  // an encoded field section
	defaultMaxFieldSectionSize    = 1 << 20
	ourQPACKMaxTableCapacity      = 4096
	ourQPACKBlockedStreams        = 100
	maxUnknownFramePayloadSkipped = 1 << 62
)

// settings holds the values of a SETTINGS frame. Unknown identifiers are
// ignored (RFC 9114, Section 7.2.4: "Setting identifiers ... that are not
// understood MUST be ignored").
type settings struct {
	QPACKMaxTableCapacity uint64
	MaxFieldSectionSize   uint64 // 0: unlimited (not sent)
	QPACKBlockedStreams   uint64
	EnableConnectProtocol bool
	H3Datagram            bool
	// Other holds settings with identifiers this package does not know,
	// for tests and GREASE.
	Other [][2]uint64
}

// frame is a parsed HTTP/3 frame. For DATA, only the length is known:
// the payload is streamed by the caller.
type frame struct {
	Type    uint64
	Length  uint64
	Payload []byte   // HEADERS, PUSH_PROMISE (field section), unknown frames
	ID      uint64   // CANCEL_PUSH, GOAWAY, MAX_PUSH_ID, PUSH_PROMISE push ID
	Set     settings // SETTINGS
}

var errVarint = errors.New("http3: truncated variable-length integer")

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

func varintLen(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	default:
		return 8
	}
}

// parseVarint reads a variable-length integer from b and returns it and its
// length.
func parseVarint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errVarint
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, errVarint
	}
	v := uint64(b[0] & 0x3f)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, n, nil
}

// readVarint reads a variable-length integer from r. It returns io.EOF only
// if r ended before the first byte, io.ErrUnexpectedEOF if it ended inside.
func readVarint(r io.ByteReader) (uint64, error) {
	b0, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	n := 1 << (b0 >> 6)
	v := uint64(b0 & 0x3f)
	for i := 1; i < n; i++ {
		b, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		v = v<<8 | uint64(b)
	}
	return v, nil
}

// readFrameHeader reads a frame's type and length. io.EOF means the stream
// ended cleanly between frames.
func readFrameHeader(r io.ByteReader) (typ, length uint64, err error) {
	typ, err = readVarint(r)
	if err != nil {
		return 0, 0, err
	}
	length, err = readVarint(r)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return typ, length, err
}

// appendFrameHeader appends a frame's type and length.
func appendFrameHeader(b []byte, typ, length uint64) []byte {
	return appendVarint(appendVarint(b, typ), length)
}

// appendDataFrameHeader appends the header of a DATA frame whose payload
// of length bytes follows.
func appendDataFrameHeader(b []byte, length uint64) []byte {
	return appendFrameHeader(b, frameData, length)
}

// appendHeadersFrame appends a HEADERS frame carrying an encoded field
// section.
func appendHeadersFrame(b, fieldSection []byte) []byte {
	b = appendFrameHeader(b, frameHeaders, uint64(len(fieldSection)))
	return append(b, fieldSection...)
}

// appendIDFrame appends a frame whose payload is one varint: CANCEL_PUSH,
// GOAWAY or MAX_PUSH_ID.
func appendIDFrame(b []byte, typ, id uint64) []byte {
	b = appendFrameHeader(b, typ, uint64(varintLen(id)))
	return appendVarint(b, id)
}

// appendPushPromiseFrame appends a PUSH_PROMISE frame.
func appendPushPromiseFrame(b []byte, pushID uint64, fieldSection []byte) []byte {
	b = appendFrameHeader(b, framePushPromise, uint64(varintLen(pushID)+len(fieldSection)))
	b = appendVarint(b, pushID)
	return append(b, fieldSection...)
}

// appendSettingsFrame appends a SETTINGS frame with the non-default values
// of s.
func appendSettingsFrame(b []byte, s settings) []byte {
	var p []byte
	put := func(id, v uint64) { p = appendVarint(appendVarint(p, id), v) }
	if s.QPACKMaxTableCapacity != 0 {
		put(settingQPACKMaxTableCapacity, s.QPACKMaxTableCapacity)
	}
	if s.MaxFieldSectionSize != 0 {
		put(settingMaxFieldSectionSize, s.MaxFieldSectionSize)
	}
	if s.QPACKBlockedStreams != 0 {
		put(settingQPACKBlockedStreams, s.QPACKBlockedStreams)
	}
	if s.EnableConnectProtocol {
		put(settingEnableConnectProtocol, 1)
	}
	if s.H3Datagram {
		put(settingH3Datagram, 1)
	}
	for _, kv := range s.Other {
		put(kv[0], kv[1])
	}
	b = appendFrameHeader(b, frameSettings, uint64(len(p)))
	return append(b, p...)
}

// parseSettings parses a SETTINGS frame payload (RFC 9114, Section 7.2.4).
func parseSettings(p []byte) (settings, error) {
	var s settings
	seen := make(map[uint64]bool)
	for len(p) > 0 {
		id, n, err := parseVarint(p)
		if err != nil {
			return s, connError(ErrCodeFrameError, "truncated SETTINGS identifier")
		}
		p = p[n:]
		v, n, err := parseVarint(p)
		if err != nil {
			return s, connError(ErrCodeFrameError, "truncated SETTINGS value")
		}
		p = p[n:]
		// "The same setting identifier MUST NOT occur more than once in the
		// SETTINGS frame. A receiver MAY treat the presence of duplicate
		// setting identifiers as a connection error of type
		// H3_SETTINGS_ERROR." (Section 7.2.4)
		if seen[id] {
			return s, connError(ErrCodeSettingsError, "duplicate setting %#x", id)
		}
		seen[id] = true
		switch id {
		case 0x0, 0x2, 0x3, 0x4, 0x5:
			// "Setting identifiers that were defined in [HTTP/2] where
			// there is no corresponding HTTP/3 setting have also been
			// reserved ... Their receipt MUST be treated as a connection
			// error of type H3_SETTINGS_ERROR." (Section 7.2.4.1)
			return s, connError(ErrCodeSettingsError, "HTTP/2 setting %#x", id)
		case settingQPACKMaxTableCapacity:
			s.QPACKMaxTableCapacity = v
		case settingMaxFieldSectionSize:
			s.MaxFieldSectionSize = v
		case settingQPACKBlockedStreams:
			s.QPACKBlockedStreams = v
		case settingEnableConnectProtocol, settingH3Datagram:
			if v > 1 {
				return s, connError(ErrCodeSettingsError, "setting %#x has value %d, not 0 or 1", id, v)
			}
			if id == settingEnableConnectProtocol {
				s.EnableConnectProtocol = v == 1
			} else {
				s.H3Datagram = v == 1
			}
		default:
			s.Other = append(s.Other, [2]uint64{id, v})
		}
	}
	return s, nil
}

// parseIDPayload parses the single-varint payload of CANCEL_PUSH, GOAWAY
// and MAX_PUSH_ID.
func parseIDPayload(typ uint64, p []byte) (uint64, error) {
	id, n, err := parseVarint(p)
	if err != nil || n != len(p) {
		return 0, connError(ErrCodeFrameError, "malformed frame %#x", typ)
	}
	return id, nil
}

// maxPayload returns the largest payload this package buffers for a frame
// of type typ; DATA and unknown frames are streamed or skipped instead.
func maxPayload(typ uint64) uint64 {
	switch typ {
	case frameHeaders, framePushPromise:
		return maxHeadersFramePayload
	default:
		return maxControlFramePayload
	}
}

// parseFramePayload builds a frame of type typ from its complete payload.
func parseFramePayload(typ uint64, p []byte) (frame, error) {
	f := frame{Type: typ, Length: uint64(len(p))}
	var err error
	switch typ {
	case frameData:
		// The caller streams DATA payloads; nothing to parse.
	case frameHeaders:
		f.Payload = p
	case frameSettings:
		f.Set, err = parseSettings(p)
	case frameCancelPush, frameGoaway, frameMaxPushID:
		f.ID, err = parseIDPayload(typ, p)
	case framePushPromise:
		var n int
		f.ID, n, err = parseVarint(p)
		if err != nil {
			return f, connError(ErrCodeFrameError, "malformed PUSH_PROMISE")
		}
		f.Payload = p[n:]
	case framePriorityUpdateRequest, framePriorityUpdatePush:
		// Prioritized Element ID (i), Priority Field Value (..)
		// (RFC 9218, Section 7.2).
		var n int
		f.ID, n, err = parseVarint(p)
		if err != nil {
			return f, connError(ErrCodeFrameError, "malformed PRIORITY_UPDATE")
		}
		f.Payload = p[n:]
	default:
		f.Payload = p
	}
	return f, err
}

// parseFrame parses one frame from the start of b and returns it and its
// encoded length. It is the slice form of readFrame, used by the fuzz
// target; a frame larger than its bound (maxPayload) is an H3_EXCESSIVE_LOAD
// error unless it is DATA or of an unknown type.
func parseFrame(b []byte) (frame, int, error) {
	typ, n1, err := parseVarint(b)
	if err != nil {
		return frame{}, 0, io.ErrUnexpectedEOF
	}
	length, n2, err := parseVarint(b[n1:])
	if err != nil {
		return frame{}, 0, io.ErrUnexpectedEOF
	}
	if known(typ) && typ != frameData && length > maxPayload(typ) {
		return frame{}, 0, connError(ErrCodeExcessiveLoad, "frame %#x of %d bytes", typ, length)
	}
	hl := n1 + n2
	if uint64(len(b)-hl) < length {
		return frame{}, 0, io.ErrUnexpectedEOF
	}
	f, err := parseFramePayload(typ, b[hl:hl+int(length)])
	return f, hl + int(length), err
}

// maxEncodedFieldSection is the largest encoded field section that can
// decode within a SETTINGS_MAX_FIELD_SECTION_SIZE of limit (RFC 9114,
// Section 4.2.2: each field line counts its name and value plus 32
// bytes). A field line's encoding adds at most a few bytes of prefixes to
// its name and value, fewer than the 32 it counts for, and Huffman coding
// (RFC 7541, Appendix B) spends at most 30 bits on a byte: four times the
// limit, plus the section prefix, bounds any valid encoding.
func maxEncodedFieldSection(limit uint64) uint64 {
	if limit > maxHeadersFramePayload/4 {
		return maxHeadersFramePayload
	}
	return 4*limit + 64
}

// known reports the frame types this package parses.
func known(typ uint64) bool {
	switch typ {
	case frameData, frameHeaders, frameCancelPush, frameSettings, framePushPromise, frameGoaway, frameMaxPushID,
		framePriorityUpdateRequest, framePriorityUpdatePush:
		return true
	}
	return false
}

// readFrame reads the next frame other than DATA from r, skipping frames
// of unknown (including reserved GREASE) types: "Implementations MUST
// discard frames ... that have unknown or unsupported types" (RFC 9114,
// Section 9). For DATA it returns the header only, leaving the payload in
// r. Frame types reserved from HTTP/2 are H3_FRAME_UNEXPECTED. io.EOF means
// r ended between frames.
func readFrame(r *bufio.Reader) (frame, error) {
	return readFrameWithin(r, 0)
}

// readFrameWithin is readFrame for a request stream, where a HEADERS frame
// carries a field section: with maxHeaders above zero, a HEADERS frame of
// more than maxHeaders bytes is errHeadersTooLarge, a stream error, before
// its payload is read or allocated, rather than the connection error of a
// frame above its bound.
func readFrameWithin(r *bufio.Reader, maxHeaders uint64) (frame, error) {
	for {
		typ, length, err := readFrameHeader(r)
		if err != nil {
			return frame{}, err
		}
		if isHTTP2FrameType(typ) {
			return frame{}, connError(ErrCodeFrameUnexpected, "HTTP/2 frame type %#x", typ)
		}
		if typ == frameData {
			return frame{Type: typ, Length: length}, nil
		}
		if !known(typ) {
			if _, err := io.CopyN(io.Discard, r, int64(min(length, maxUnknownFramePayloadSkipped))); err != nil {
				return frame{}, truncated(err)
			}
			continue
		}
		if typ == frameHeaders && maxHeaders > 0 && length > maxHeaders {
			return frame{}, errHeadersTooLarge
		}
		if length > maxPayload(typ) {
			return frame{}, connError(ErrCodeExcessiveLoad, "frame %#x of %d bytes", typ, length)
		}
		p, err := readPayload(r, length)
		if err != nil {
			return frame{}, truncated(err)
		}
		return parseFramePayload(typ, p)
	}
}

// initialPayloadBuffer is the buffer a frame payload starts with, when it
// declares more: enough for the header section of a typical request.
const initialPayloadBuffer = 1 << 10

// readPayload reads a frame payload of length bytes, which the caller has
// checked against its bound. The buffer grows with the bytes that arrive,
// at most doubling each time, so that a peer declaring a large frame and
// sending little of it costs little memory: at most twice what it sent,
// and initialPayloadBuffer.
func readPayload(r io.Reader, length uint64) ([]byte, error) {
	p := make([]byte, 0, min(length, initialPayloadBuffer))
	for uint64(len(p)) < length {
		if len(p) == cap(p) {
			p = slices.Grow(p, int(min(length-uint64(len(p)), uint64(len(p)))))
		}
		n, err := r.Read(p[len(p):min(uint64(cap(p)), length)])
		p = p[:len(p)+n]
		if err != nil && uint64(len(p)) < length {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return p, nil
}

// truncated turns the end of a stream inside a frame into H3_FRAME_ERROR
// ("the frame ... MUST be treated as a connection error of type
// H3_FRAME_ERROR" when a stream ends mid-frame, RFC 9114, Section 7.1).
func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return connError(ErrCodeFrameError, "stream ended inside a frame")
	}
	return err
}
