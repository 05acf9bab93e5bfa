package http3

import (
	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// A Tracer receives the HTTP/3 events of one connection, for logging (see
// package qlog, which writes them as the http3:frame_created,
// http3:frame_parsed and http3:parameters_set events of
// draft-ietf-quic-qlog-h3-events). The server and the Transport find it
// in the Application field of the connection's quic.Tracer
// (quic.Conn.ApplicationTracer); a connection without one does no tracing
// work beyond a nil check per frame. Any field may be nil. The functions
// are called from the connection's request and control stream goroutines,
// possibly concurrently, and must not block; slices they get are valid
// only during the call.
type Tracer struct {
	// FrameCreated is called for each frame this endpoint writes: when
	// it is encoded, before it is handed to the stream.
	FrameCreated func(f FrameInfo)
	// FrameParsed is called for each frame of a known type read from the
	// peer: for HEADERS once its field section is decoded, for DATA when
	// its header is read (the payload follows). Frames of unknown types,
	// which are skipped (RFC 9114, Section 9), are not reported.
	FrameParsed func(f FrameInfo)
}

// FrameInfo describes an HTTP/3 frame (RFC 9114, Section 7.2).
type FrameInfo struct {
	// StreamID is the QUIC stream the frame is on: a request stream or
	// a control stream.
	StreamID quic.StreamID
	// Type is the frame type; FrameTypeName names it.
	Type uint64
	// Length is the length of the frame's payload in bytes; the frame
	// header (type and length) comes on top.
	Length uint64
	// Headers is the decoded field section of a HEADERS frame.
	Headers []qpack.HeaderField
	// Settings are the identifiers and values of a SETTINGS frame.
	Settings []Setting
	// ID is the stream or push ID of a GOAWAY frame and the push ID of a
	// CANCEL_PUSH or MAX_PUSH_ID frame.
	ID uint64
}

// A Setting is one parameter of a SETTINGS frame (RFC 9114, Section
// 7.2.4.1).
type Setting struct {
	ID, Value uint64
}

// FrameTypeName returns the qlog name of a frame type ("data",
// "headers", "settings", ...; draft-ietf-quic-qlog-h3-events, Section
// 4.2), "reserved" for the reserved types (RFC 9114, Sections 7.2.8 and
// 7.2.9) and "unknown" for others.
func FrameTypeName(t uint64) string {
	switch t {
	case frameData:
		return "data"
	case frameHeaders:
		return "headers"
	case frameCancelPush:
		return "cancel_push"
	case frameSettings:
		return "settings"
	case framePushPromise:
		return "push_promise"
	case frameGoaway:
		return "goaway"
	case frameMaxPushID:
		return "max_push_id"
	}
	if isHTTP2FrameType(t) || (t >= 0x21 && (t-0x21)%0x1f == 0) {
		return "reserved"
	}
	return "unknown"
}

// SettingName returns the qlog name of a setting identifier
// ("settings_qpack_max_table_capacity", ...; draft-ietf-quic-qlog-h3-
// events, Section 4.2.4), "reserved" for GREASE identifiers (RFC 9114,
// Section 7.2.4.1) and "unknown" for others.
func SettingName(id uint64) string {
	switch id {
	case settingQPACKMaxTableCapacity:
		return "settings_qpack_max_table_capacity"
	case settingMaxFieldSectionSize:
		return "settings_max_field_section_size"
	case settingQPACKBlockedStreams:
		return "settings_qpack_blocked_streams"
	case settingEnableConnectProtocol:
		return "settings_enable_connect_protocol"
	case settingH3Datagram:
		return "settings_h3_datagram"
	}
	if id >= 0x21 && (id-0x21)%0x1f == 0 {
		return "reserved"
	}
	return "unknown"
}

// tracerOf returns the http3 Tracer of qc's quic.Tracer, or nil.
func tracerOf(qc *quic.Conn) *Tracer {
	if qc == nil {
		return nil
	}
	t, _ := qc.ApplicationTracer().(*Tracer)
	if t != nil && t.FrameCreated == nil && t.FrameParsed == nil {
		return nil
	}
	return t
}

// list lists the values of s as a SETTINGS frame carries them.
func (s *settings) list() []Setting {
	var l []Setting
	if s.QPACKMaxTableCapacity != 0 {
		l = append(l, Setting{settingQPACKMaxTableCapacity, s.QPACKMaxTableCapacity})
	}
	if s.MaxFieldSectionSize != 0 {
		l = append(l, Setting{settingMaxFieldSectionSize, s.MaxFieldSectionSize})
	}
	if s.QPACKBlockedStreams != 0 {
		l = append(l, Setting{settingQPACKBlockedStreams, s.QPACKBlockedStreams})
	}
	if s.EnableConnectProtocol {
		l = append(l, Setting{settingEnableConnectProtocol, 1})
	}
	if s.H3Datagram {
		l = append(l, Setting{settingH3Datagram, 1})
	}
	for _, kv := range s.Other {
		l = append(l, Setting{kv[0], kv[1]})
	}
	return l
}

// traceCreated reports a frame this endpoint wrote. c.tr is not nil.
func (c *connection) traceCreated(f FrameInfo) {
	if fn := c.tr.FrameCreated; fn != nil {
		fn(f)
	}
}

// traceParsed reports a frame read from the peer. c.tr is not nil.
func (c *connection) traceParsed(f FrameInfo) {
	if fn := c.tr.FrameParsed; fn != nil {
		fn(f)
	}
}

// traceFrame reports a frame parsed by readFrame, other than HEADERS
// (reported with its decoded fields by decodeHeaders).
func (c *connection) traceFrame(id quic.StreamID, f *frame) {
	if c.tr == nil || f.Type == frameHeaders {
		return
	}
	info := FrameInfo{StreamID: id, Type: f.Type, Length: f.Length, ID: f.ID}
	if f.Type == frameSettings {
		info.Settings = f.Set.list()
	}
	c.traceParsed(info)
}

// traceWritten reports the frames of b, written on stream id, that
// encode complete frames (the control stream's).
func (c *connection) traceWritten(id quic.StreamID, b []byte) {
	for len(b) > 0 {
		f, n, err := parseFrame(b)
		if err != nil {
			return
		}
		b = b[n:]
		info := FrameInfo{StreamID: id, Type: f.Type, Length: f.Length, ID: f.ID}
		if f.Type == frameSettings {
			info.Settings = f.Set.list()
		}
		c.traceCreated(info)
	}
}
