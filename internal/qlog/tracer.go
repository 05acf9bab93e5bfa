package qlog

import (
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

// connTracer turns one connection's quic.Tracer calls into qlog events.
type connTracer struct {
	w        *Writer
	isClient bool
	frame    wire.Frame // scratch for parsing payloads
	streams  StreamSet
	closed   bool
}

// NewTracer returns a quic.Tracer writing the connection's events to w.
// The trace ends with the connection's quic:connection_closed event: w is
// flushed and closed then, on the connection's goroutine, before the
// Close call that ended the connection returns, so that a program that
// exits right after has a complete trace. What the connection does in
// its closing or draining period is not traced. Done closes w too, for a
// connection that never reported its close.
func NewTracer(w *Writer, isClient bool) *quic.Tracer {
	t := &connTracer{w: w, isClient: isClient}
	return &quic.Tracer{
		ConnectionStarted: t.connectionStarted,
		PacketSent:        func(p quic.PacketInfo) { t.packet("quic:packet_sent", p) },
		PacketReceived:    func(p quic.PacketInfo) { t.packet("quic:packet_received", p) },
		PacketDropped:     t.packetDropped,
		PacketLost:        t.packetLost,
		MetricsUpdated:    t.metricsUpdated,
		KeyUpdated:        t.keyUpdated,
		ParametersSet:     t.parametersSet,
		StreamClosed:      func(id wire.StreamID) { t.streamState(id, "closed") },
		HandshakeComplete: t.handshakeComplete,
		DatagramsDropped:  t.datagramsDropped,
		ConnectionClosed:  t.connectionClosed,
		Done:              func() { w.Close() },
		Application:       newH3Tracer(w),
	}
}

// connectionStarted writes quic:connection_started (Section 4.2).
func (t *connTracer) connectionStarted(local, remote net.Addr, v wire.Version, src, dst quic.ConnectionID) {
	b := t.w.Event("quic:connection_started")
	b = appendEndpoint(b, `"local":`, local, src)
	b = appendEndpoint(b, `"remote":`, remote, dst)
	t.w.End(b)
	b = t.w.Event("quic:version_information")
	b = Str(b, `"chosen_version":`, versionHex(v))
	t.w.End(b)
}

// appendEndpoint appends a TupleEndpointInfo (Section 8.5).
func appendEndpoint(b []byte, key string, a net.Addr, cid quic.ConnectionID) []byte {
	b = append(b, key...)
	b = append(b, '{')
	var ap netip.AddrPort
	switch a := a.(type) {
	case *net.UDPAddr:
		ap = a.AddrPort()
	case nil:
	default:
		ap, _ = netip.ParseAddrPort(a.String())
	}
	if ap.IsValid() {
		ip := ap.Addr().Unmap()
		if ip.Is4() {
			b = Str(b, `"ip_v4":`, ip.String())
			b = Uint(b, `"port_v4":`, uint64(ap.Port()))
		} else {
			b = Str(b, `"ip_v6":`, ip.String())
			b = Uint(b, `"port_v6":`, uint64(ap.Port()))
		}
	}
	b = Open(b, `"connection_ids":`, true)
	b = append(AppendString(b, cid.String()), ',')
	b = Close(b, true)
	return Close(b, false)
}

func versionHex(v wire.Version) string {
	const digits = "0123456789abcdef"
	var s [8]byte
	for i := range s {
		s[i] = digits[(uint32(v)>>(28-4*i))&15]
	}
	return string(s[:])
}

// packetTypeName is the qlog PacketType (Section 8.6).
func packetTypeName(pt wire.PacketType) string {
	switch pt {
	case wire.PacketTypeInitial:
		return "initial"
	case wire.PacketTypeHandshake:
		return "handshake"
	case wire.PacketType0RTT:
		return "0RTT"
	case wire.PacketType1RTT:
		return "1RTT"
	case wire.PacketTypeRetry:
		return "retry"
	case wire.PacketTypeVersionNegotiation:
		return "version_negotiation"
	}
	return "unknown"
}

// packet writes quic:packet_sent or quic:packet_received (Sections 5.5,
// 5.6) with the packet's frames.
func (t *connTracer) packet(name string, p quic.PacketInfo) {
	b := t.w.EventAt(name, p.Time)
	b = Open(b, `"header":`, false)
	b = Str(b, `"packet_type":`, packetTypeName(p.Type))
	b = Uint(b, `"packet_number":`, uint64(p.Number))
	if p.Type == wire.PacketType1RTT {
		b = Bool(b, `"key_phase_bit":`, p.KeyPhase)
	}
	b = Close(b, false)
	b = Open(b, `"raw":`, false)
	b = Uint(b, `"length":`, uint64(p.Size))
	b = Uint(b, `"payload_length":`, uint64(len(p.Payload)))
	b = Close(b, false)
	b = AppendFrames(b, p.Payload, &t.frame, &t.streams)
	t.w.End(b)
	for _, id := range t.streams.New {
		t.streamState(id, "open")
	}
}

// streamState writes quic:stream_state_updated (Section 5.13) with one
// of the base states, "open" or "closed", for each side the stream has.
func (t *connTracer) streamState(id wire.StreamID, state string) {
	local := (id.Initiator() == wire.RoleClient) == t.isClient
	for _, side := range [2]string{"sending", "receiving"} {
		if !id.IsBidi() && (side == "sending") != local {
			continue // a unidirectional stream has one side here
		}
		b := t.w.Event("quic:stream_state_updated")
		b = Uint(b, `"stream_id":`, uint64(id))
		b = Str(b, `"stream_type":`, streamType(id.IsBidi()))
		b = Str(b, `"new":`, state)
		b = Str(b, `"stream_side":`, side)
		t.w.End(b)
	}
}

// packetDropped writes quic:packet_dropped (Section 5.7).
func (t *connTracer) packetDropped(pt wire.PacketType, size int, reason quic.PacketDropReason) {
	b := t.w.Event("quic:packet_dropped")
	b = Open(b, `"header":`, false)
	b = Str(b, `"packet_type":`, packetTypeName(pt))
	b = Close(b, false)
	b = Open(b, `"raw":`, false)
	b = Uint(b, `"length":`, uint64(size))
	b = Close(b, false)
	b = Str(b, `"trigger":`, dropTrigger(reason))
	t.w.End(b)
}

// dropTrigger maps a drop reason to a packet_dropped trigger.
func dropTrigger(r quic.PacketDropReason) string {
	switch r {
	case quic.DropQueueFull:
		return "rejected"
	case quic.DropTooLarge:
		return "invalid"
	}
	return string(r)
}

// packetLost writes quic:packet_lost (Section 7.4).
func (t *connTracer) packetLost(pt wire.PacketType, pn wire.PacketNumber, size int) {
	b := t.w.Event("quic:packet_lost")
	b = Open(b, `"header":`, false)
	b = Str(b, `"packet_type":`, packetTypeName(pt))
	b = Uint(b, `"packet_number":`, uint64(pn))
	b = Close(b, false)
	b = Open(b, `"raw":`, false)
	b = Uint(b, `"length":`, uint64(size))
	b = Close(b, false)
	t.w.End(b)
}

// metricsUpdated writes quic:recovery_metrics_updated (Section 7.2).
func (t *connTracer) metricsUpdated(m quic.RecoveryMetrics) {
	WriteMetrics(t.w, time.Time{}, m)
}

// WriteMetrics writes m as a quic:recovery_metrics_updated event at t
// (the zero t means now).
func WriteMetrics(w *Writer, t time.Time, m quic.RecoveryMetrics) {
	b := w.EventAt("quic:recovery_metrics_updated", t)
	if m.SmoothedRTT > 0 {
		b = Ms(b, `"min_rtt":`, m.MinRTT)
		b = Ms(b, `"smoothed_rtt":`, m.SmoothedRTT)
		b = Ms(b, `"latest_rtt":`, m.LatestRTT)
		b = Ms(b, `"rtt_variance":`, m.RTTVariation)
	}
	b = Uint(b, `"congestion_window":`, uint64(m.CongestionWindow))
	b = Uint(b, `"bytes_in_flight":`, uint64(m.BytesInFlight))
	if m.PacingRate > 0 {
		b = Uint(b, `"pacing_rate":`, m.PacingRate*8)
	}
	w.End(b)
}

// keyUpdated writes quic:key_updated (Section 6.1).
func (t *connTracer) keyUpdated(k quic.KeyUpdate) {
	if k.Type == wire.PacketType1RTT && k.Phase > 0 {
		// A 1-RTT key update changes the keys of both directions.
		trigger := "local_update"
		if k.Remote {
			trigger = "remote_update"
		}
		for _, client := range []bool{true, false} {
			b := t.w.Event("quic:key_updated")
			b = Str(b, `"key_type":`, keyType(k.Type, client))
			b = Uint(b, `"key_phase":`, k.Phase)
			b = Str(b, `"trigger":`, trigger)
			t.w.End(b)
		}
		return
	}
	// Local write keys are this endpoint's; read keys are the peer's.
	client := k.Local == t.isClient
	b := t.w.Event("quic:key_updated")
	b = Str(b, `"key_type":`, keyType(k.Type, client))
	if k.Type == wire.PacketType1RTT {
		b = Uint(b, `"key_phase":`, 0)
	}
	b = Str(b, `"trigger":`, "tls")
	t.w.End(b)
}

func keyType(pt wire.PacketType, client bool) string {
	side := "server_"
	if client {
		side = "client_"
	}
	switch pt {
	case wire.PacketTypeInitial:
		return side + "initial_secret"
	case wire.PacketTypeHandshake:
		return side + "handshake_secret"
	case wire.PacketType0RTT:
		return side + "0rtt_secret"
	}
	return side + "1rtt_secret"
}

// parametersSet writes quic:parameters_set (Section 5.3) for one side's
// transport parameters.
func (t *connTracer) parametersSet(local bool, p *wire.TransportParameters) {
	b := t.w.Event("quic:parameters_set")
	if local {
		b = Str(b, `"initiator":`, "local")
	} else {
		b = Str(b, `"initiator":`, "remote")
	}
	if p.HasOriginalDestinationConnectionID {
		b = Str(b, `"original_destination_connection_id":`, p.OriginalDestinationConnectionID.String())
	}
	if p.HasInitialSourceConnectionID {
		b = Str(b, `"initial_source_connection_id":`, p.InitialSourceConnectionID.String())
	}
	if p.HasRetrySourceConnectionID {
		b = Str(b, `"retry_source_connection_id":`, p.RetrySourceConnectionID.String())
	}
	if p.HasStatelessResetToken {
		b = Hex(b, `"stateless_reset_token":`, p.StatelessResetToken[:])
	}
	b = Bool(b, `"disable_active_migration":`, p.DisableActiveMigration)
	b = Uint(b, `"max_idle_timeout":`, uint64(p.MaxIdleTimeout.Milliseconds()))
	b = Uint(b, `"max_udp_payload_size":`, p.MaxUDPPayloadSize)
	b = Uint(b, `"ack_delay_exponent":`, uint64(p.AckDelayExponent))
	b = Uint(b, `"max_ack_delay":`, uint64(p.MaxAckDelay.Milliseconds()))
	b = Uint(b, `"active_connection_id_limit":`, p.ActiveConnectionIDLimit)
	b = Uint(b, `"initial_max_data":`, p.InitialMaxData)
	b = Uint(b, `"initial_max_stream_data_bidi_local":`, p.InitialMaxStreamDataBidiLocal)
	b = Uint(b, `"initial_max_stream_data_bidi_remote":`, p.InitialMaxStreamDataBidiRemote)
	b = Uint(b, `"initial_max_stream_data_uni":`, p.InitialMaxStreamDataUni)
	b = Uint(b, `"initial_max_streams_bidi":`, p.InitialMaxStreamsBidi)
	b = Uint(b, `"initial_max_streams_uni":`, p.InitialMaxStreamsUni)
	if p.MaxDatagramFrameSize > 0 {
		b = Uint(b, `"max_datagram_frame_size":`, p.MaxDatagramFrameSize)
	}
	if p.GreaseQUICBit {
		b = Bool(b, `"grease_quic_bit":`, true)
	}
	t.w.End(b)
}

// handshakeComplete writes what the handshake settled: the TLS cipher
// and 0-RTT in a parameters_set event, the ALPN in alpn_information
// (Sections 5.2, 5.3) and the version in version_information.
func (t *connTracer) handshakeComplete(h quic.HandshakeInfo) {
	b := t.w.Event("quic:parameters_set")
	b = Str(b, `"initiator":`, "local")
	b = Str(b, `"tls_cipher":`, cipherName(h.CipherSuite))
	b = Bool(b, `"early_data_enabled":`, h.Used0RTT)
	b = Bool(b, `"resumption_allowed":`, h.Resumed)
	t.w.End(b)
	b = t.w.Event("quic:alpn_information")
	b = Str(b, `"chosen_alpn":`, h.ALPN)
	t.w.End(b)
	b = t.w.Event("quic:version_information")
	b = Str(b, `"chosen_version":`, versionHex(h.Version))
	t.w.End(b)
}

// cipherName names a TLS 1.3 suite as qlog's example does
// ("AES_128_GCM_SHA256").
func cipherName(s uint16) string {
	n := tls.CipherSuiteName(s)
	if len(n) > 4 && n[:4] == "TLS_" {
		return n[4:]
	}
	return n
}

// connectionClosed writes quic:connection_closed (Section 4.3).
func (t *connTracer) connectionClosed(err error) {
	if t.closed {
		return
	}
	t.closed = true
	b := t.w.Event("quic:connection_closed")
	var (
		te *quic.TransportError
		ae *quic.ApplicationError
		it *quic.IdleTimeoutError
		ht *quic.HandshakeTimeoutError
		sr *quic.StatelessResetError
		vn *quic.VersionNegotiationError
	)
	switch {
	case errors.As(err, &ae):
		b = Str(b, `"initiator":`, initiator(ae.Remote))
		b = Str(b, `"application_error":`, "unknown")
		b = Uint(b, `"error_code":`, uint64(ae.Code))
		b = Str(b, `"reason":`, ae.Reason)
		b = Str(b, `"trigger":`, "application")
	case errors.As(err, &te):
		b = Str(b, `"initiator":`, initiator(te.Remote))
		b = appendTransportError(b, `"connection_error":`, uint64(te.Code))
		if te.Code.IsCryptoError() {
			b = Uint(b, `"error_code":`, uint64(te.Code))
		}
		b = Str(b, `"reason":`, te.Reason)
		b = Str(b, `"trigger":`, "error")
	case errors.As(err, &it), errors.As(err, &ht):
		b = Str(b, `"initiator":`, "local")
		b = Str(b, `"trigger":`, "idle_timeout")
		b = Str(b, `"reason":`, err.Error())
	case errors.As(err, &sr):
		b = Str(b, `"initiator":`, "remote")
		b = Str(b, `"trigger":`, "stateless_reset")
	case errors.As(err, &vn):
		b = Str(b, `"initiator":`, "remote")
		b = Str(b, `"trigger":`, "version_mismatch")
		b = Str(b, `"reason":`, err.Error())
	default:
		b = Str(b, `"trigger":`, "unspecified")
		if err != nil {
			b = Str(b, `"reason":`, err.Error())
		}
	}
	t.w.End(b)
	// The trace is complete: write it out now, since the application
	// may exit as soon as its Close returns.
	t.w.Close()
}

// datagramsDropped writes quicstack:datagrams_dropped, an event of our
// own (qlog's QUIC events have none for DATAGRAM frame payloads a
// connection drops from its queues): the direction ("send" for payloads
// the application gave and that were never sent, "receive" for received
// ones it did not read), how many, their total length and the trigger
// (quic.DatagramDropReason).
func (t *connTracer) datagramsDropped(d quic.DatagramDrop) {
	b := t.w.Event("quicstack:datagrams_dropped")
	dir := "receive"
	if d.Sent {
		dir = "send"
	}
	b = Str(b, `"direction":`, dir)
	b = Uint(b, `"count":`, uint64(d.Count))
	b = Open(b, `"raw":`, false)
	b = Uint(b, `"length":`, uint64(d.Bytes))
	b = Close(b, false)
	b = Str(b, `"trigger":`, string(d.Reason))
	t.w.End(b)
}

func initiator(remote bool) string {
	if remote {
		return "remote"
	}
	return "local"
}
