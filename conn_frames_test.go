package quic

import (
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// rawFrame encodes a frame type and varint fields as given, unchecked.
func rawFrame(typ wire.FrameType, vals ...uint64) []byte {
	b := wire.AppendVarint(nil, uint64(typ))
	for _, v := range vals {
		b = wire.AppendVarint(b, v)
	}
	return b
}

// streamF encodes a STREAM frame with a Length field.
func streamF(id wire.StreamID, off uint64, data string, fin bool) []byte {
	return wire.StreamFrame{StreamID: id, Offset: off, Data: []byte(data), Fin: fin, HasLength: true}.Append(nil)
}

// cat concatenates frames.
func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// TestHostileFrameTable sends, after the handshake, frames a peer must not
// send and checks the connection error the RFC names (RFC 9000, Sections
// 4.1, 4.5, 4.6, 19.x and 13.1: final sizes that change or are exceeded,
// FLOW_CONTROL_ERROR for resets and gaps beyond the stream and connection
// windows, STREAM_STATE_ERROR for frames on a stream of the wrong
// direction or not yet opened, STREAM_LIMIT_ERROR beyond MAX_STREAMS,
// FRAME_ENCODING_ERROR for counts above 2^60 and offsets above 2^62-1,
// PROTOCOL_VIOLATION for connection IDs and server-only frames), and that
// the legal ones (a smaller MAX_STREAMS, an unknown PATH_RESPONSE, data
// below a reset's final size) leave the connection open. Where the RFC
// allows two codes, both are accepted.
func TestHostileFrameTable(t *testing.T) {
	type tc struct {
		name    string
		payload []byte
		codes   []wire.TransportErrorCode // acceptable; nil: stays open
		cfg     *Config
	}
	cases := []tc{
		{"reset final size below received", cat(streamF(0, 0, "hello", false), rawFrame(wire.FrameTypeResetStream, 0, 0, 3)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"two FINs differ", cat(streamF(0, 0, "abc", true), streamF(0, 0, "ab", true)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"data beyond FIN", cat(streamF(0, 0, "abc", true), streamF(0, 3, "d", false)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"zero-length beyond FIN", cat(streamF(0, 0, "abc", true), streamF(0, 10, "", false)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"reset after FIN other size", cat(streamF(0, 0, "abc", true), rawFrame(wire.FrameTypeResetStream, 0, 0, 5)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"FIN below received", cat(streamF(0, 0, "hello", false), streamF(0, 0, "ab", true)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"two resets differ", cat(rawFrame(wire.FrameTypeResetStream, 0, 0, 5), rawFrame(wire.FrameTypeResetStream, 0, 0, 6)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"reset beyond stream window", rawFrame(wire.FrameTypeResetStream, 0, 0, 64<<10+1), []wire.TransportErrorCode{wire.FlowControlError},
			&Config{InitialStreamReceiveWindow: 64 << 10, MaxStreamReceiveWindow: 64 << 10}},
		{"resets beyond conn window", cat(rawFrame(wire.FrameTypeResetStream, 0, 0, 40<<10), rawFrame(wire.FrameTypeResetStream, 4, 0, 40<<10)), []wire.TransportErrorCode{wire.FlowControlError},
			&Config{InitialStreamReceiveWindow: 64 << 10, InitialConnectionReceiveWindow: 64 << 10}},
		{"reset then data beyond conn window", cat(rawFrame(wire.FrameTypeResetStream, 0, 0, 64<<10), streamF(4, 0, "x", false)), []wire.TransportErrorCode{wire.FlowControlError},
			&Config{InitialStreamReceiveWindow: 64 << 10, InitialConnectionReceiveWindow: 64 << 10}},
		{"gap data beyond conn window", cat(streamF(0, 60<<10, "x", false), streamF(4, 10<<10, "x", false)), []wire.TransportErrorCode{wire.FlowControlError},
			&Config{InitialStreamReceiveWindow: 64 << 10, InitialConnectionReceiveWindow: 64 << 10}},
		{"reset on our send-only uni (not opened)", rawFrame(wire.FrameTypeResetStream, 3, 0, 0), []wire.TransportErrorCode{wire.StreamStateError}, nil},
		{"stop_sending on our receive-only uni", cat(streamF(2, 0, "x", false), rawFrame(wire.FrameTypeStopSending, 2, 0)), []wire.TransportErrorCode{wire.StreamStateError}, nil},
		{"max_stream_data on our receive-only uni", cat(streamF(2, 0, "x", false), rawFrame(wire.FrameTypeMaxStreamData, 2, 100000)), []wire.TransportErrorCode{wire.StreamStateError}, nil},
		{"stream_data_blocked on send-only uni", rawFrame(wire.FrameTypeStreamDataBlocked, 3, 0), []wire.TransportErrorCode{wire.StreamStateError}, nil},
		{"stream on our bidi not opened", streamF(1, 0, "x", false), []wire.TransportErrorCode{wire.StreamStateError}, nil},
		{"stop_sending on our bidi not opened", rawFrame(wire.FrameTypeStopSending, 5, 0), []wire.TransportErrorCode{wire.StreamStateError}, nil},
		{"max_stream_data on our bidi not opened", rawFrame(wire.FrameTypeMaxStreamData, 5, 100), []wire.TransportErrorCode{wire.StreamStateError}, nil},
		{"max_streams over 2^60", rawFrame(wire.FrameTypeMaxStreamsBidi, 1<<60+1), []wire.TransportErrorCode{wire.FrameEncodingError}, nil},
		{"streams_blocked over 2^60", rawFrame(wire.FrameTypeStreamsBlockedUni, 1<<60+1), []wire.TransportErrorCode{wire.FrameEncodingError, wire.StreamLimitError}, nil},
		{"stream offset overflow", streamF(0, 1<<62-1, "x", false), []wire.TransportErrorCode{wire.FrameEncodingError, wire.FlowControlError}, nil},
		{"retire_prior_to above seq", cat(rawFrame(wire.FrameTypeNewConnectionID, 5, 6, 8), []byte{1, 2, 3, 4, 5, 6, 7, 8}, make([]byte, 16)), []wire.TransportErrorCode{wire.FrameEncodingError}, nil},
		{"retire unsent cid", rawFrame(wire.FrameTypeRetireConnectionID, 1000), []wire.TransportErrorCode{wire.ProtocolViolation}, nil},
		{"handshake_done from client", rawFrame(wire.FrameTypeHandshakeDone), []wire.TransportErrorCode{wire.ProtocolViolation}, nil},
		{"new_token from client", cat(rawFrame(wire.FrameTypeNewToken, 3), []byte{1, 2, 3}), []wire.TransportErrorCode{wire.ProtocolViolation}, nil},
		{"reset beyond stream limit", rawFrame(wire.FrameTypeResetStream, 4*1000, 0, 0), []wire.TransportErrorCode{wire.StreamLimitError}, nil},
		{"stop_sending beyond stream limit", rawFrame(wire.FrameTypeStopSending, 4*1000, 0), []wire.TransportErrorCode{wire.StreamLimitError}, nil},
		{"max_stream_data beyond stream limit", rawFrame(wire.FrameTypeMaxStreamData, 4*1000+2, 0), []wire.TransportErrorCode{wire.StreamLimitError, wire.StreamStateError}, nil},
		{"stream_data_blocked beyond limit", rawFrame(wire.FrameTypeStreamDataBlocked, 4*1000, 0), []wire.TransportErrorCode{wire.StreamLimitError}, nil},
		{"new cid same seq other id", cat(rawFrame(wire.FrameTypeNewConnectionID, 1, 0, 8), []byte{9, 9, 9, 9, 9, 9, 9, 9}, make([]byte, 16), rawFrame(wire.FrameTypeNewConnectionID, 1, 0, 8), []byte{8, 9, 9, 9, 9, 9, 9, 9}, make([]byte, 16)), []wire.TransportErrorCode{wire.ProtocolViolation}, nil},
		{"new cid zero length", cat(rawFrame(wire.FrameTypeNewConnectionID, 1, 0, 0), make([]byte, 16)), []wire.TransportErrorCode{wire.ProtocolViolation, wire.FrameEncodingError}, nil},
		{"stream with fin past flow window", streamF(0, 64<<10+1, "", true), []wire.TransportErrorCode{wire.FlowControlError},
			&Config{InitialStreamReceiveWindow: 64 << 10, MaxStreamReceiveWindow: 64 << 10}},
		{"ping only", rawFrame(wire.FrameTypePing), nil, nil},
		{"retire cid of this packet", rawFrame(wire.FrameTypeRetireConnectionID, 0), []wire.TransportErrorCode{wire.ProtocolViolation}, nil},
		{"smaller max_streams", rawFrame(wire.FrameTypeMaxStreamsBidi, 1), nil, nil},
		{"unknown path_response", wire.PathResponseFrame{Data: [8]byte{1, 2, 3}}.Append(nil), nil, nil},
		{"empty new_token to server", rawFrame(wire.FrameTypeNewToken, 0), []wire.TransportErrorCode{wire.FrameEncodingError, wire.ProtocolViolation}, nil},
		{"crypto in 1rtt garbage", cat(rawFrame(wire.FrameTypeCrypto, 0, 4), []byte{1, 0, 0, 0}), []wire.TransportErrorCode{wire.ProtocolViolation, 0x10a, 0x100 + 10}, nil},
		{"ack frequency not negotiated", rawFrame(wire.FrameTypeAckFrequency, 0, 1, 1000, 0), []wire.TransportErrorCode{wire.ProtocolViolation}, &Config{DisableAckFrequency: true}},
		{"reset_stream_at not negotiated", rawFrame(wire.FrameTypeResetStreamAt, 0, 0, 5, 2), []wire.TransportErrorCode{wire.ProtocolViolation}, nil},
		{"data beyond a reset's final size", cat(rawFrame(wire.FrameTypeResetStream, 0, 0, 1000), streamF(0, 2000, "x", false)), []wire.TransportErrorCode{wire.FinalSizeError}, nil},
		{"stream frame on reset stream below final", cat(rawFrame(wire.FrameTypeResetStream, 0, 0, 1000), streamF(0, 10, "x", false)), nil, nil},
		{"ack frequency below min_ack_delay", rawFrame(wire.FrameTypeAckFrequency, 0, 1, 999, 0), []wire.TransportErrorCode{wire.ProtocolViolation}, nil},
		{"ack frequency", rawFrame(wire.FrameTypeAckFrequency, 0, 9, 1000, 0), nil, nil},
		{"immediate ack", rawFrame(wire.FrameTypeImmediateAck), nil, nil},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newSimPair(t, testLink, c.cfg, uint64(900+i))
			p.connect(t)
			p.injectFrames(p.client, ackhandler.SpaceApplication, c.payload)
			if c.codes == nil {
				p.sim.RunFor(time.Second)
				if p.server.c.closeState != stateActive {
					t.Fatalf("closed: %v", p.server.c.closeErr)
				}
				return
			}
			p.run(t, 10*time.Second, p.bothClosed)
			te, ok := p.server.c.closeErr.(*TransportError)
			if !ok || te.Remote {
				t.Fatalf("server closed with %#v", p.server.c.closeErr)
			}
			for _, code := range c.codes {
				if te.Code == code {
					return
				}
			}
			t.Errorf("server closed with %v, want one of %v", te, c.codes)
		})
	}
}

// TestHostileFrameTableClient is TestHostileFrameTable for frames a
// server sends to a client.
func TestHostileFrameTableClient(t *testing.T) {
	type tc struct {
		name    string
		payload []byte
		codes   []wire.TransportErrorCode
	}
	cases := []tc{
		{"stream on client's send-only uni", streamF(2, 0, "x", false), []wire.TransportErrorCode{wire.StreamStateError}},
		{"stream on client bidi not opened", streamF(0, 0, "x", false), []wire.TransportErrorCode{wire.StreamStateError}},
		{"empty new_token", rawFrame(wire.FrameTypeNewToken, 0), []wire.TransportErrorCode{wire.FrameEncodingError}},
		{"retire cid of this packet", rawFrame(wire.FrameTypeRetireConnectionID, 0), []wire.TransportErrorCode{wire.ProtocolViolation}},
		{"stream beyond limit", streamF(4*1000+1, 0, "x", false), []wire.TransportErrorCode{wire.StreamLimitError}},
		{"handshake_done again", rawFrame(wire.FrameTypeHandshakeDone), nil},
		{"crypto 1rtt garbage", cat(rawFrame(wire.FrameTypeCrypto, 0, 4), []byte{0xfe, 0, 0, 0}), []wire.TransportErrorCode{wire.ProtocolViolation, 0x10a, 0x100 + 10}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newSimPair(t, testLink, nil, uint64(1900+i))
			p.connect(t)
			p.injectFrames(p.server, ackhandler.SpaceApplication, c.payload)
			if c.codes == nil {
				p.sim.RunFor(time.Second)
				if p.client.c.closeState != stateActive {
					t.Fatalf("closed: %v", p.client.c.closeErr)
				}
				return
			}
			p.run(t, 10*time.Second, p.bothClosed)
			te, ok := p.client.c.closeErr.(*TransportError)
			if !ok || te.Remote {
				t.Fatalf("client closed with %#v", p.client.c.closeErr)
			}
			for _, code := range c.codes {
				if te.Code == code {
					return
				}
			}
			t.Errorf("client closed with %v, want one of %v", te, c.codes)
		})
	}
}
