package qlog

import (
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/http3/qpack"
)

// newH3Tracer returns an http3.Tracer writing the HTTP/3 events of
// draft-ietf-quic-qlog-h3-events to w: http3:frame_created and
// http3:frame_parsed (Sections 3.5, 3.6) for every frame, and
// http3:parameters_set (Section 3.1) for the SETTINGS of either side.
func newH3Tracer(w *Writer) *http3.Tracer {
	return &http3.Tracer{
		FrameCreated: func(f http3.FrameInfo) { h3Frame(w, "http3:frame_created", f, true) },
		FrameParsed:  func(f http3.FrameInfo) { h3Frame(w, "http3:frame_parsed", f, false) },
	}
}

// Setting identifiers with fields of their own in parameters_set (RFC
// 9114, Section 7.2.4.1; RFC 9204, Section 5; RFC 9220; RFC 9297).
const (
	settingQPACKMaxTableCapacity = 0x1
	settingMaxFieldSectionSize   = 0x6
	settingQPACKBlockedStreams   = 0x7
	settingEnableConnectProtocol = 0x8
	settingH3Datagram            = 0x33
	h3FrameSettings              = 0x4
	h3FrameHeaders               = 0x1
	h3FrameCancelPush            = 0x3
	h3FrameGoaway                = 0x7
	h3FrameMaxPushID             = 0xd
)

// h3Frame writes one frame event and, for SETTINGS, parameters_set.
func h3Frame(w *Writer, name string, f http3.FrameInfo, local bool) {
	b := w.Event(name)
	b = Uint(b, `"stream_id":`, uint64(f.StreamID))
	b = Open(b, `"frame":`, false)
	typ := http3.FrameTypeName(f.Type)
	b = Str(b, `"frame_type":`, typ)
	if typ == "reserved" || typ == "unknown" {
		b = Uint(b, `"frame_type_bytes":`, f.Type)
	}
	switch f.Type {
	case h3FrameHeaders:
		b = appendHeaders(b, f.Headers)
	case h3FrameSettings:
		b = Open(b, `"settings":`, true)
		for _, s := range f.Settings {
			b = append(b, '{')
			n := http3.SettingName(s.ID)
			b = Str(b, `"name":`, n)
			if n == "unknown" {
				b = Uint(b, `"name_bytes":`, s.ID)
			}
			b = Uint(b, `"value":`, s.Value)
			b = Close(b, false)
		}
		b = Close(b, true)
	case h3FrameGoaway:
		b = Uint(b, `"id":`, f.ID)
	case h3FrameCancelPush, h3FrameMaxPushID:
		b = Uint(b, `"push_id":`, f.ID)
	}
	b = Open(b, `"raw":`, false)
	b = Uint(b, `"length":`, uint64(varintLen(f.Type)+varintLen(f.Length))+f.Length)
	b = Uint(b, `"payload_length":`, f.Length)
	b = Close(b, false)
	b = Close(b, false)
	w.End(b)
	if f.Type == h3FrameSettings {
		parametersSet(w, f.Settings, local)
	}
}

// appendHeaders appends the field section as a list of HTTP3HTTPField
// (Section 4.2.2). Names and values are logged as text, escaped as JSON
// requires.
func appendHeaders(b []byte, fields []qpack.HeaderField) []byte {
	b = Open(b, `"headers":`, true)
	for _, hf := range fields {
		b = append(b, '{')
		b = Str(b, `"name":`, hf.Name)
		b = Str(b, `"value":`, hf.Value)
		b = Close(b, false)
	}
	return Close(b, true)
}

// parametersSet writes http3:parameters_set (Section 3.1) for the
// settings one side sent.
func parametersSet(w *Writer, settings []http3.Setting, local bool) {
	b := w.Event("http3:parameters_set")
	if local {
		b = Str(b, `"initiator":`, "local")
	} else {
		b = Str(b, `"initiator":`, "remote")
	}
	for _, s := range settings {
		switch s.ID {
		case settingMaxFieldSectionSize:
			b = Uint(b, `"max_field_section_size":`, s.Value)
		case settingQPACKMaxTableCapacity:
			b = Uint(b, `"max_table_capacity":`, s.Value)
		case settingQPACKBlockedStreams:
			b = Uint(b, `"blocked_streams_count":`, s.Value)
		case settingEnableConnectProtocol:
			b = Uint(b, `"extended_connect":`, s.Value)
		case settingH3Datagram:
			b = Uint(b, `"h3_datagram":`, s.Value)
		}
	}
	w.End(b)
}

// varintLen is the length of v in the QUIC variable-length integer
// encoding (RFC 9000, Section 16).
func varintLen(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	}
	return 8
}
