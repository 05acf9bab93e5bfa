package qlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

type bufCloser struct {
	bytes.Buffer
	closed bool
}

func (b *bufCloser) Close() error { b.closed = true; return nil }

// records splits a JSON text sequence and decodes each record.
func records(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range bytes.Split(bytes.TrimPrefix(b, []byte{0x1e}), []byte{0x1e}) {
		var m map[string]any
		if err := json.Unmarshal(rec, &m); err != nil {
			t.Fatalf("record %q: %v", rec, err)
		}
		out = append(out, m)
	}
	return out
}

// Every event the tracer writes is valid JSON carrying the fields the
// QUIC event definitions require, for every frame type and close reason.
func TestTracerEvents(t *testing.T) {
	var buf bufCloser
	tr := NewTracer(NewWriter(&buf, "client", "0102", "a \"quoted\"\ttitle \xff"), true)
	addr := &net.UDPAddr{IP: net.IPv6loopback, Port: 443}
	tr.ConnectionStarted(addr, addr, wire.Version2, wire.NewConnectionID([]byte{1}), wire.NewConnectionID([]byte{2}))

	var payload []byte
	frames := []wire.Frame{
		{Type: wire.FrameTypePing},
		{Type: wire.FrameTypeAckECN, Ack: wire.AckFrame{Ranges: []wire.AckRange{{Smallest: 5, Largest: 9}, {Smallest: 1, Largest: 1}}, HasECN: true, ECN: wire.ECNCounts{ECT0: 3}}},
		{Type: wire.FrameTypeResetStream, ResetStream: wire.ResetStreamFrame{StreamID: 4, ErrorCode: 7, FinalSize: 100}},
		{Type: wire.FrameTypeStopSending, StopSending: wire.StopSendingFrame{StreamID: 4, ErrorCode: 7}},
		{Type: wire.FrameTypeCrypto, Crypto: wire.CryptoFrame{Offset: 10, Data: []byte("hello")}},
		{Type: wire.FrameTypeNewToken, NewToken: wire.NewTokenFrame{Token: []byte("tok")}},
		{Type: wire.FrameTypeStream | 0x07, Stream: wire.StreamFrame{StreamID: 8, Offset: 3, Data: []byte("data"), Fin: true, HasLength: true}},
		{Type: wire.FrameTypeMaxData, MaxData: wire.MaxDataFrame{MaximumData: 1000}},
		{Type: wire.FrameTypeMaxStreamData, MaxStreamData: wire.MaxStreamDataFrame{StreamID: 4, MaximumStreamData: 99}},
		{Type: wire.FrameTypeMaxStreamsUni, MaxStreams: wire.MaxStreamsFrame{MaximumStreams: 10}},
		{Type: wire.FrameTypeDataBlocked, DataBlocked: wire.DataBlockedFrame{MaximumData: 5}},
		{Type: wire.FrameTypeStreamDataBlocked, StreamDataBlocked: wire.StreamDataBlockedFrame{StreamID: 4, MaximumStreamData: 5}},
		{Type: wire.FrameTypeStreamsBlockedBidi, StreamsBlocked: wire.StreamsBlockedFrame{Bidi: true, MaximumStreams: 3}},
		{Type: wire.FrameTypeNewConnectionID, NewConnectionID: wire.NewConnectionIDFrame{SequenceNumber: 1, ConnectionID: wire.NewConnectionID([]byte{9, 9})}},
		{Type: wire.FrameTypeRetireConnectionID, RetireConnectionID: wire.RetireConnectionIDFrame{SequenceNumber: 1}},
		{Type: wire.FrameTypePathChallenge, PathChallenge: wire.PathChallengeFrame{Data: [8]byte{1}}},
		{Type: wire.FrameTypePathResponse, PathResponse: wire.PathResponseFrame{Data: [8]byte{1}}},
		{Type: wire.FrameTypeHandshakeDone},
		{Type: wire.FrameTypeDatagramWithLength, Datagram: wire.DatagramFrame{Data: []byte("dg"), HasLength: true}},
		{Type: wire.FrameTypeConnectionClose, ConnectionClose: wire.ConnectionCloseFrame{ErrorCode: uint64(wire.CryptoError(42)), Reason: []byte("bad\ncert")}},
	}
	for i := range frames {
		payload = frames[i].Append(payload)
	}
	payload = append(payload, 0, 0, 0) // PADDING
	tr.PacketSent(quic.PacketInfo{Type: wire.PacketType1RTT, Number: 7, Size: len(payload) + 20, Payload: payload})
	tr.PacketReceived(quic.PacketInfo{Type: wire.PacketTypeHandshake, Number: 1, Size: 50, Payload: []byte{0x1e, 0xff}}) // HANDSHAKE_DONE, then garbage
	tr.PacketDropped(wire.PacketTypeInitial, 1200, quic.DropDecryptionFailure)
	tr.PacketLost(wire.PacketType1RTT, 9, 1300)
	tr.MetricsUpdated(quic.RecoveryMetrics{MinRTT: time.Millisecond, SmoothedRTT: 1500 * time.Microsecond, CongestionWindow: 12000, BytesInFlight: 3000, PacingRate: 1e6})
	tr.KeyUpdated(quic.KeyUpdate{Type: wire.PacketTypeHandshake, Local: true})
	tr.KeyUpdated(quic.KeyUpdate{Type: wire.PacketType1RTT, Local: true, Phase: 1, Remote: true})
	tr.ParametersSet(false, &wire.TransportParameters{InitialMaxData: 10, HasInitialSourceConnectionID: true})
	tr.HandshakeComplete(quic.HandshakeInfo{Version: wire.Version1, CipherSuite: 0x1301, ALPN: "h3"})
	tr.StreamClosed(3) // a server-initiated unidirectional stream: the client only receives
	tr.DatagramsDropped(quic.DatagramDrop{Sent: true, Reason: quic.DatagramDropQueueFull, Count: 3, Bytes: 300})
	tr.ConnectionClosed(&quic.TransportError{Code: wire.ProtocolViolation, Reason: "oops", Remote: true})
	if !buf.closed {
		t.Error("connection_closed did not close the writer")
	}
	tr.PacketSent(quic.PacketInfo{Type: wire.PacketType1RTT, Number: 8, Size: 30, Payload: []byte{1}})
	tr.Done()

	recs := records(t, buf.Bytes())
	if recs[0]["title"] != "a \"quoted\"\ttitle \ufffd" {
		t.Errorf("title %q", recs[0]["title"])
	}
	byName := map[string][]map[string]any{}
	for _, r := range recs[1:] {
		byName[r["name"].(string)] = append(byName[r["name"].(string)], r["data"].(map[string]any))
	}
	sent := byName["quic:packet_sent"][0]
	got := sent["frames"].([]any)
	if len(got) != len(frames)+1 {
		t.Fatalf("%d frames logged, want %d: %v", len(got), len(frames)+1, got)
	}
	wantTypes := []string{"ping", "ack", "reset_stream", "stop_sending", "crypto", "new_token", "stream", "max_data",
		"max_stream_data", "max_streams", "data_blocked", "stream_data_blocked", "streams_blocked", "new_connection_id",
		"retire_connection_id", "path_challenge", "path_response", "handshake_done", "datagram", "connection_close", "padding"}
	for i, f := range got {
		if ft := f.(map[string]any)["frame_type"]; ft != wantTypes[i] {
			t.Errorf("frame %d: frame_type %v, want %s", i, ft, wantTypes[i])
		}
	}
	if cc := got[19].(map[string]any); cc["error"] != "crypto_error_0x12a" || cc["reason"] != "bad\ncert" {
		t.Errorf("connection_close %v", cc)
	}
	if ack := got[1].(map[string]any); len(ack["acked_ranges"].([]any)) != 2 || ack["ect0"] != float64(3) {
		t.Errorf("ack %v", ack)
	}
	rcvd := byName["quic:packet_received"][0]["frames"].([]any)
	if len(rcvd) != 2 || rcvd[1].(map[string]any)["frame_type"] != "unknown" {
		t.Errorf("frames of a payload that does not parse: %v", rcvd)
	}
	if d := byName["quic:packet_dropped"]; len(d) != 1 || d[0]["trigger"] != "decryption_failure" {
		t.Errorf("packet_dropped %v", d)
	}
	if l := byName["quic:packet_lost"]; len(l) != 1 || l[0]["header"].(map[string]any)["packet_number"] != float64(9) {
		t.Errorf("packet_lost %v", l)
	}
	if m := byName["quic:recovery_metrics_updated"]; len(m) != 1 || m[0]["smoothed_rtt"] != 1.5 || m[0]["pacing_rate"] != float64(8e6) {
		t.Errorf("recovery_metrics_updated %v", m)
	}
	if k := byName["quic:key_updated"]; len(k) != 3 || k[0]["key_type"] != "client_handshake_secret" || k[2]["trigger"] != "remote_update" {
		t.Errorf("key_updated %v", k)
	}
	if c := byName["quic:connection_closed"]; len(c) != 1 || c[0]["connection_error"] != "protocol_violation" || c[0]["initiator"] != "remote" {
		t.Errorf("connection_closed %v", c)
	}
	// Streams 4 and 8 opened (both bidirectional: two sides each), 3 closed.
	if ss := byName["quic:stream_state_updated"]; len(ss) != 5 || ss[0]["stream_id"] != float64(4) || ss[0]["new"] != "open" ||
		ss[4]["stream_id"] != float64(3) || ss[4]["new"] != "closed" || ss[4]["stream_side"] != "receiving" {
		t.Errorf("stream_state_updated %v", ss)
	}
	if d := byName["quicstack:datagrams_dropped"]; len(d) != 1 || d[0]["direction"] != "send" || d[0]["count"] != float64(3) ||
		d[0]["trigger"] != "queue_full" || d[0]["raw"].(map[string]any)["length"] != float64(300) {
		t.Errorf("datagrams_dropped %v", d)
	}
	if last := recs[len(recs)-1]; last["name"] != "quic:connection_closed" {
		t.Errorf("the trace ends with %v, not connection_closed", last["name"])
	}
	started := byName["quic:connection_started"][0]["local"].(map[string]any)
	if started["ip_v6"] != "::1" || started["port_v6"] != float64(443) {
		t.Errorf("connection_started %v", started)
	}
	if !strings.Contains(buf.String(), `"tls_cipher":"AES_128_GCM_SHA256"`) {
		t.Error("no tls_cipher")
	}
}

// connection_closed names each way a connection can end.
func TestConnectionClosedTriggers(t *testing.T) {
	for _, c := range []struct {
		err     error
		trigger string
	}{
		{&quic.ApplicationError{Code: 1}, "application"},
		{&quic.IdleTimeoutError{}, "idle_timeout"},
		{&quic.StatelessResetError{}, "stateless_reset"},
		{&quic.VersionNegotiationError{}, "version_mismatch"},
		{errors.New("other"), "unspecified"},
	} {
		var buf bufCloser
		tr := NewTracer(NewWriter(&buf, "server", "01", "t"), false)
		tr.ConnectionClosed(c.err)
		tr.ConnectionClosed(c.err) // once only
		tr.Done()
		recs := records(t, buf.Bytes())
		if len(recs) != 2 || recs[1]["data"].(map[string]any)["trigger"] != c.trigger {
			t.Errorf("%T: %v", c.err, recs[1:])
		}
	}
}

func TestAppendUint(t *testing.T) {
	for _, n := range []uint64{0, 9, 10, 99, 100, 12345, 1<<64 - 1} {
		if got, want := string(appendUint([]byte("x"), n)), "x"+strconv.FormatUint(n, 10); got != want {
			t.Errorf("appendUint(%d) = %q, want %q", n, got, want)
		}
	}
}

// Events after the trace ended (the closing period's packets, HTTP/3
// frames the application still parses) are dropped without allocating
// for each.
func TestEventsAfterCloseDropped(t *testing.T) {
	var buf bufCloser
	tr := NewTracer(NewWriter(&buf, "client", "01", "t"), true)
	tr.ConnectionClosed(&quic.ApplicationError{Code: 0})
	n := buf.Len()
	p := quic.PacketInfo{Type: wire.PacketType1RTT, Number: 9, Size: 40, Payload: []byte{0x01}}
	tr.PacketSent(p)
	if allocs := testing.AllocsPerRun(100, func() { tr.PacketSent(p) }); allocs > 0 {
		t.Errorf("%.1f allocations per event after the close", allocs)
	}
	tr.Done()
	if buf.Len() != n {
		t.Errorf("%d bytes written after connection_closed", buf.Len()-n)
	}
}

// A trace of a simulation: NewWriterAt takes the simulation's start as
// the reference time, and WriteMetrics logs each event at its simulated
// time, whatever the wall clock says.
func TestWriteMetricsAt(t *testing.T) {
	var buf bufCloser
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	w := NewWriterAt(&buf, "client", "sim", "a simulation", start)
	WriteMetrics(w, start.Add(1500*time.Millisecond), quic.RecoveryMetrics{
		SmoothedRTT: 40 * time.Millisecond, LatestRTT: 41 * time.Millisecond, MinRTT: 40 * time.Millisecond,
		CongestionWindow: 14720, BytesInFlight: 1200, PacingRate: 1000,
	})
	WriteMetrics(w, start.Add(2*time.Second), quic.RecoveryMetrics{CongestionWindow: 7360})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := records(t, buf.Bytes())
	if len(recs) != 3 {
		t.Fatalf("%d records, want the header and 2 events", len(recs))
	}
	ref := recs[0]["trace"].(map[string]any)["common_fields"].(map[string]any)["reference_time"].(map[string]any)
	if ref["epoch"] != "2000-01-01T00:00:00.000000Z" {
		t.Fatalf("reference time %v", ref["epoch"])
	}
	for i, want := range []struct {
		time       float64
		cwnd, rate any
	}{{1500, 14720.0, 8000.0}, {2000, 7360.0, nil}} {
		e := recs[i+1]
		d := e["data"].(map[string]any)
		if e["time"] != want.time || e["name"] != "quic:recovery_metrics_updated" || d["congestion_window"] != want.cwnd || d["pacing_rate"] != want.rate {
			t.Fatalf("event %d: %v", i, e)
		}
	}
	if d := recs[1]["data"].(map[string]any); d["smoothed_rtt"] != 40.0 || d["latest_rtt"] != 41.0 || d["bytes_in_flight"] != 1200.0 {
		t.Fatalf("event 0: %v", d)
	}
}
