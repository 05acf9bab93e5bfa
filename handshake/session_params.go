package handshake

import (
	"bytes"
	"crypto/tls"

	"github.com/quicstack/quic/wire"
)

// RememberedParams are the server transport parameters that 0-RTT data is
// sent under. "When 0-RTT is attempted, the client remembers ...
// active_connection_id_limit, initial_max_data, initial_max_stream_data_*,
// initial_max_streams_*" and, with the extensions, max_datagram_frame_size
// (RFC 9221, Section 3) and reset_stream_at; "the server MUST NOT reduce
// any limits or alter any values that might be violated by the client with
// its 0-RTT data" (RFC 9000, Section 7.4.1).
type RememberedParams struct {
	ActiveConnectionIDLimit        uint64
	InitialMaxData                 uint64
	InitialMaxStreamDataBidiLocal  uint64
	InitialMaxStreamDataBidiRemote uint64
	InitialMaxStreamDataUni        uint64
	InitialMaxStreamsBidi          uint64
	InitialMaxStreamsUni           uint64
	MaxDatagramFrameSize           uint64
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
	p.ResetStreamAt = r.ResetStreamAt
	return p
}

// AllowsEarlyDataUnder reports whether 0-RTT data sent under the remembered
// parameters r stays within the current parameters cur: no limit shrank
// and no extension was switched off (RFC 9000, Section 7.4.1).
func (r RememberedParams) AllowsEarlyDataUnder(cur RememberedParams) bool {
	return cur.ActiveConnectionIDLimit >= r.ActiveConnectionIDLimit &&
		cur.InitialMaxData >= r.InitialMaxData &&
		cur.InitialMaxStreamDataBidiLocal >= r.InitialMaxStreamDataBidiLocal &&
		cur.InitialMaxStreamDataBidiRemote >= r.InitialMaxStreamDataBidiRemote &&
		cur.InitialMaxStreamDataUni >= r.InitialMaxStreamDataUni &&
		cur.InitialMaxStreamsBidi >= r.InitialMaxStreamsBidi &&
		cur.InitialMaxStreamsUni >= r.InitialMaxStreamsUni &&
		cur.MaxDatagramFrameSize >= r.MaxDatagramFrameSize &&
		(cur.ResetStreamAt || !r.ResetStreamAt)
}

// sessionExtraPrefix marks our entry in tls.SessionState.Extra, which layers
// share: "applications must only append to it ... and must use entries that
// can be recognized even if out of order (for example, by starting with an
// id and version prefix)" (crypto/tls).
var sessionExtraPrefix = []byte("quicstack/0rtt-params/v1:")

func (r RememberedParams) marshal() []byte {
	b := append([]byte(nil), sessionExtraPrefix...)
	for _, v := range []uint64{r.ActiveConnectionIDLimit, r.InitialMaxData,
		r.InitialMaxStreamDataBidiLocal, r.InitialMaxStreamDataBidiRemote, r.InitialMaxStreamDataUni,
		r.InitialMaxStreamsBidi, r.InitialMaxStreamsUni, r.MaxDatagramFrameSize} {
		b = wire.AppendVarint(b, v)
	}
	if r.ResetStreamAt {
		return append(b, 1)
	}
	return append(b, 0)
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
	for _, p := range []*uint64{&r.ActiveConnectionIDLimit, &r.InitialMaxData,
		&r.InitialMaxStreamDataBidiLocal, &r.InitialMaxStreamDataBidiRemote, &r.InitialMaxStreamDataUni,
		&r.InitialMaxStreamsBidi, &r.InitialMaxStreamsUni, &r.MaxDatagramFrameSize} {
		v, n := wire.ParseVarint(b)
		if n == 0 {
			return RememberedParams{}, false
		}
		*p, b = v, b[n:]
	}
	if len(b) != 1 || b[0] > 1 {
		return RememberedParams{}, false
	}
	r.ResetStreamAt = b[0] == 1
	return r, true
}
