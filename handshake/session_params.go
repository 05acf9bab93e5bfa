package handshake

import (
	"bytes"
	"crypto/tls"
	"math"
	"time"

	"github.com/quicstack/quic/wire"
)

// RememberedParams are the server transport parameters that 0-RTT data is
// sent under. "A client that attempts to send 0-RTT data MUST remember all
// other transport parameters used by the server that it is able to
// process", all but "ack_delay_exponent, max_ack_delay,
// initial_source_connection_id, original_destination_connection_id,
// preferred_address, retry_source_connection_id, and
// stateless_reset_token", whose new values the client uses; "the server
// MUST NOT reduce any limits or alter any values that might be violated by
// the client with its 0-RTT data" (RFC 9000, Section 7.4.1). With the
// extensions: max_datagram_frame_size (RFC 9221, Section 3),
// grease_quic_bit (RFC 9287, Section 3.1) and reset_stream_at;
// min_ack_delay is not remembered ("Endpoints MUST NOT remember the value
// of the min_ack_delay transport parameter", draft-ietf-quic-ack-frequency,
// Section 3), nor version_information, which each handshake negotiates.
type RememberedParams struct {
	ActiveConnectionIDLimit        uint64
	InitialMaxData                 uint64
	InitialMaxStreamDataBidiLocal  uint64
	InitialMaxStreamDataBidiRemote uint64
	InitialMaxStreamDataUni        uint64
	InitialMaxStreamsBidi          uint64
	InitialMaxStreamsUni           uint64
	MaxDatagramFrameSize           uint64
	MaxIdleTimeout                 time.Duration // whole milliseconds
	MaxUDPPayloadSize              uint64
	DisableActiveMigration         bool
	GreaseQUICBit                  bool
	ResetStreamAt                  bool
}

// RememberParams extracts from p what a 0-RTT connection depends on.
func RememberParams(p *wire.TransportParameters) RememberedParams {
	return RememberedParams{
		ActiveConnectionIDLimit:        p.ActiveConnectionIDLimit,
		InitialMaxData:                 p.InitialMaxData,
		InitialMaxStreamDataBidiLocal:  p.InitialMaxStreamDataBidiLocal,
		InitialMaxStreamDataBidiRemote: p.InitialMaxStreamDataBidiRemote,
		InitialMaxStreamDataUni:        p.InitialMaxStreamDataUni,
		InitialMaxStreamsBidi:          p.InitialMaxStreamsBidi,
		InitialMaxStreamsUni:           p.InitialMaxStreamsUni,
		MaxDatagramFrameSize:           p.MaxDatagramFrameSize,
		MaxIdleTimeout:                 p.MaxIdleTimeout.Truncate(time.Millisecond),
		MaxUDPPayloadSize:              p.MaxUDPPayloadSize,
		DisableActiveMigration:         p.DisableActiveMigration,
		GreaseQUICBit:                  p.GreaseQUICBit,
		ResetStreamAt:                  p.ResetStreamAt,
	}
}

// TransportParameters returns the default transport parameters with the
// remembered values filled in: what a client assumes of the server while it
// sends 0-RTT data.
func (r RememberedParams) TransportParameters() wire.TransportParameters {
	p := wire.DefaultTransportParameters()
	p.ActiveConnectionIDLimit = r.ActiveConnectionIDLimit
	p.InitialMaxData = r.InitialMaxData
	p.InitialMaxStreamDataBidiLocal = r.InitialMaxStreamDataBidiLocal
	p.InitialMaxStreamDataBidiRemote = r.InitialMaxStreamDataBidiRemote
	p.InitialMaxStreamDataUni = r.InitialMaxStreamDataUni
	p.InitialMaxStreamsBidi = r.InitialMaxStreamsBidi
	p.InitialMaxStreamsUni = r.InitialMaxStreamsUni
	p.MaxDatagramFrameSize = r.MaxDatagramFrameSize
	p.MaxIdleTimeout = r.MaxIdleTimeout
	p.MaxUDPPayloadSize = r.MaxUDPPayloadSize
	p.DisableActiveMigration = r.DisableActiveMigration
	p.GreaseQUICBit = r.GreaseQUICBit
	p.ResetStreamAt = r.ResetStreamAt
	return p
}

// AllowsEarlyDataUnder reports whether 0-RTT data sent under the remembered
// parameters r stays within the current parameters cur: no limit shrank
// and no extension was switched off (RFC 9000, Section 7.4.1). It also
// asks that max_udp_payload_size did not shrink: "A server MAY store and
// recover the previously sent values of the max_idle_timeout,
// max_udp_payload_size, and disable_active_migration parameters and
// reject 0-RTT if it selects smaller values ... lowering the
// max_udp_payload_size could result in dropped packets", as the client
// sends 0-RTT datagrams up to the remembered size.
func (r RememberedParams) AllowsEarlyDataUnder(cur RememberedParams) bool {
	return cur.ActiveConnectionIDLimit >= r.ActiveConnectionIDLimit &&
		cur.InitialMaxData >= r.InitialMaxData &&
		cur.InitialMaxStreamDataBidiLocal >= r.InitialMaxStreamDataBidiLocal &&
		cur.InitialMaxStreamDataBidiRemote >= r.InitialMaxStreamDataBidiRemote &&
		cur.InitialMaxStreamDataUni >= r.InitialMaxStreamDataUni &&
		cur.InitialMaxStreamsBidi >= r.InitialMaxStreamsBidi &&
		cur.InitialMaxStreamsUni >= r.InitialMaxStreamsUni &&
		cur.MaxDatagramFrameSize >= r.MaxDatagramFrameSize &&
		cur.MaxUDPPayloadSize >= r.MaxUDPPayloadSize &&
		(cur.ResetStreamAt || !r.ResetStreamAt)
}

// sessionExtraPrefix marks our entry in tls.SessionState.Extra, which layers
// share: "applications must only append to it ... and must use entries that
// can be recognized even if out of order (for example, by starting with an
// id and version prefix)" (crypto/tls). Version 1 entries, which lacked
// max_idle_timeout, max_udp_payload_size, disable_active_migration and
// grease_quic_bit, are not recognised: their sessions resume without 0-RTT.
var sessionExtraPrefix = []byte("quicstack/0rtt-params/v2:")

// Flags of the last byte of the encoding.
const (
	rememberedResetStreamAt = 1 << iota
	rememberedDisableActiveMigration
	rememberedGreaseQUICBit
	rememberedFlags = rememberedResetStreamAt | rememberedDisableActiveMigration | rememberedGreaseQUICBit
)

// varints returns pointers to the integer fields in encoding order, the
// idle timeout as whole milliseconds in *idleMs.
func (r *RememberedParams) varints(idleMs *uint64) []*uint64 {
	return []*uint64{&r.ActiveConnectionIDLimit, &r.InitialMaxData,
		&r.InitialMaxStreamDataBidiLocal, &r.InitialMaxStreamDataBidiRemote, &r.InitialMaxStreamDataUni,
		&r.InitialMaxStreamsBidi, &r.InitialMaxStreamsUni, &r.MaxDatagramFrameSize, idleMs, &r.MaxUDPPayloadSize}
}

func (r RememberedParams) marshal() []byte {
	b := append([]byte(nil), sessionExtraPrefix...)
	idleMs := uint64(r.MaxIdleTimeout / time.Millisecond)
	for _, v := range r.varints(&idleMs) {
		b = wire.AppendVarint(b, *v)
	}
	var flags byte
	if r.ResetStreamAt {
		flags |= rememberedResetStreamAt
	}
	if r.DisableActiveMigration {
		flags |= rememberedDisableActiveMigration
	}
	if r.GreaseQUICBit {
		flags |= rememberedGreaseQUICBit
	}
	return append(b, flags)
}

// findRememberedParams returns our entry of a session's Extra.
func findRememberedParams(s *tls.SessionState) (RememberedParams, bool) {
	for _, e := range s.Extra {
		if b, ok := bytes.CutPrefix(e, sessionExtraPrefix); ok {
			return unmarshalRememberedParams(b)
		}
	}
	return RememberedParams{}, false
}

func unmarshalRememberedParams(b []byte) (RememberedParams, bool) {
	var r RememberedParams
	var idleMs uint64
	for _, p := range r.varints(&idleMs) {
		v, n := wire.ParseVarint(b)
		if n == 0 {
			return RememberedParams{}, false
		}
		*p, b = v, b[n:]
	}
	if len(b) != 1 || b[0]&^rememberedFlags != 0 || idleMs > uint64(math.MaxInt64/time.Millisecond) {
		return RememberedParams{}, false
	}
	r.MaxIdleTimeout = time.Duration(idleMs) * time.Millisecond
	r.ResetStreamAt = b[0]&rememberedResetStreamAt != 0
	r.DisableActiveMigration = b[0]&rememberedDisableActiveMigration != 0
	r.GreaseQUICBit = b[0]&rememberedGreaseQUICBit != 0
	return r, true
}
