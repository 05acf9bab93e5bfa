package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

// tpParam encodes one transport parameter with an arbitrary raw value.
func tpParam(id uint64, val ...byte) []byte {
	b := AppendVarint(nil, id)
	b = AppendVarint(b, uint64(len(val)))
	return append(b, val...)
}

// tpIntParam encodes one integer transport parameter.
func tpIntParam(id TransportParameterID, v uint64) []byte {
	return tpParam(uint64(id), AppendVarint(nil, v)...)
}

func tpCat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// tpEqual compares parameter sets, treating an empty AvailableVersions as nil.
func tpEqual(a, b TransportParameters) bool {
	if len(a.VersionInformation.AvailableVersions) == 0 {
		a.VersionInformation.AvailableVersions = nil
	}
	if len(b.VersionInformation.AvailableVersions) == 0 {
		b.VersionInformation.AvailableVersions = nil
	}
	return reflect.DeepEqual(a, b)
}

func tpRole(server bool) Role {
	if server {
		return RoleServer
	}
	return RoleClient
}

// tpClientParams is a typical client set.
func tpClientParams() TransportParameters {
	p := DefaultTransportParameters()
	p.MaxIdleTimeout = 30 * time.Second
	p.MaxUDPPayloadSize = 1472
	p.InitialMaxData = 1 << 24
	p.InitialMaxStreamDataBidiLocal = 1 << 20
	p.InitialMaxStreamDataBidiRemote = 1 << 20
	p.InitialMaxStreamDataUni = 1 << 20
	p.InitialMaxStreamsBidi = 100
	p.InitialMaxStreamsUni = 100
	p.ActiveConnectionIDLimit = 8
	p.InitialSourceConnectionID, p.HasInitialSourceConnectionID = NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8}), true
	p.MaxDatagramFrameSize = 65535
	p.GreaseQUICBit = true
	p.MinAckDelay, p.HasMinAckDelay = time.Millisecond, true
	return p
}

// tpServerParams is a typical server set, with every server-only parameter.
func tpServerParams() TransportParameters {
	p := tpClientParams()
	p.OriginalDestinationConnectionID, p.HasOriginalDestinationConnectionID = NewConnectionID([]byte{9, 9, 9, 9, 9, 9, 9, 9}), true
	p.RetrySourceConnectionID, p.HasRetrySourceConnectionID = NewConnectionID([]byte{7, 7, 7, 7}), true
	p.StatelessResetToken, p.HasStatelessResetToken = StatelessResetToken{1, 2, 3, 15: 16}, true
	p.PreferredAddress, p.HasPreferredAddress = tpTestPreferredAddress(), true
	p.DisableActiveMigration = true
	p.ResetStreamAt = true
	return p
}

func TestDefaultTransportParameters(t *testing.T) {
	iscid := tpParam(uint64(TransportParameterInitialSourceConnectionID))
	p, err := ParseTransportParameters(iscid, RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	want := TransportParameters{
		MaxUDPPayloadSize:            65527,
		AckDelayExponent:             3,
		MaxAckDelay:                  25 * time.Millisecond,
		ActiveConnectionIDLimit:      2,
		HasInitialSourceConnectionID: true,
	}
	if !tpEqual(p, want) {
		t.Fatalf("parsed %+v, want %+v", p, want)
	}
	d := DefaultTransportParameters()
	d.HasInitialSourceConnectionID = true
	if !tpEqual(d, want) {
		t.Fatalf("DefaultTransportParameters = %+v", d)
	}
	// Defaults are not written.
	if enc := d.Append(nil); !bytes.Equal(enc, iscid) {
		t.Fatalf("Append of defaults = %x, want %x", enc, iscid)
	}
	// Explicitly sent default values parse to the same result.
	explicit := tpCat(iscid,
		tpIntParam(TransportParameterMaxUDPPayloadSize, 65527),
		tpIntParam(TransportParameterAckDelayExponent, 3),
		tpIntParam(TransportParameterMaxAckDelay, 25),
		tpIntParam(TransportParameterActiveConnectionIDLimit, 2),
		tpIntParam(TransportParameterMaxIdleTimeout, 0),
		tpIntParam(TransportParameterMaxDatagramFrameSize, 0),
	)
	if p, err := ParseTransportParameters(explicit, RoleClient); err != nil || !tpEqual(p, want) {
		t.Fatalf("explicit defaults: %+v, %v", p, err)
	}
}

func TestTransportParametersEncoding(t *testing.T) {
	p := DefaultTransportParameters()
	p.MaxIdleTimeout = 30 * time.Second
	p.InitialMaxData = 1 << 20
	p.InitialSourceConnectionID, p.HasInitialSourceConnectionID = NewConnectionID([]byte{1, 2}), true
	p.MaxDatagramFrameSize = 1200
	p.GreaseQUICBit = true
	p.MinAckDelay, p.HasMinAckDelay = time.Millisecond, true
	p.HasVersionInformation = true
	p.VersionInformation = VersionInformation{ChosenVersion: Version1, AvailableVersions: []Version{Version1, Version2}}
	want, _ := hex.DecodeString("" +
		"01" + "04" + "80007530" + // max_idle_timeout 30000 ms
		"04" + "04" + "80100000" + // initial_max_data 2^20
		"0f" + "02" + "0102" + // initial_source_connection_id
		"11" + "0c" + "00000001" + "00000001" + "6b3343cf" + // version_information
		"20" + "02" + "44b0" + // max_datagram_frame_size 1200
		"6ab2" + "00" + // grease_quic_bit
		"c0000000ff04de1b" + "02" + "43e8") // min_ack_delay 1000 us
	got := p.Append(nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("Append =\n%x, want\n%x", got, want)
	}
	if p.EncodedLen() != len(want) {
		t.Fatalf("EncodedLen = %d, want %d", p.EncodedLen(), len(want))
	}
	q, err := ParseTransportParameters(want, RoleClient)
	if err != nil || !tpEqual(p, q) {
		t.Fatalf("parse = %+v, %v; want %+v", q, err, p)
	}

	// A server's set with a preferred address and the empty flags.
	s := DefaultTransportParameters()
	s.OriginalDestinationConnectionID, s.HasOriginalDestinationConnectionID = NewConnectionID([]byte{0x83, 0x94}), true
	s.StatelessResetToken, s.HasStatelessResetToken = StatelessResetToken{15: 1}, true
	s.DisableActiveMigration = true
	s.PreferredAddress, s.HasPreferredAddress = tpTestPreferredAddress(), true
	s.InitialSourceConnectionID, s.HasInitialSourceConnectionID = NewConnectionID([]byte{0x5c}), true
	s.ResetStreamAt = true
	s.AckDelayExponent = 0
	s.MaxAckDelay = 0
	want, _ = hex.DecodeString("" +
		"00" + "02" + "8394" +
		"02" + "10" + "00000000000000000000000000000001" +
		"0a" + "01" + "00" + // ack_delay_exponent 0
		"0b" + "01" + "00" + // max_ack_delay 0
		"0c" + "00" +
		"0d" + "2d" + hex.EncodeToString(tpTestPreferredAddress().Append(nil)) +
		"0f" + "01" + "5c" +
		"1d" + "00")
	if got := s.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("Append =\n%x, want\n%x", got, want)
	}
	if q, err := ParseTransportParameters(want, RoleServer); err != nil || !tpEqual(s, q) {
		t.Fatalf("parse = %+v, %v; want %+v", q, err, s)
	}
}

func TestTransportParametersRoundTrip(t *testing.T) {
	maxCID := NewConnectionID(bytes.Repeat([]byte{0xee}, MaxConnectionIDLen))
	edgeLow := func(p TransportParameters) TransportParameters {
		p.MaxIdleTimeout = time.Millisecond
		p.MaxUDPPayloadSize = 1200
		p.InitialMaxData = 0
		p.InitialMaxStreamDataBidiLocal = 1
		p.InitialMaxStreamDataBidiRemote = 63
		p.InitialMaxStreamDataUni = 64
		p.InitialMaxStreamsBidi = 0
		p.InitialMaxStreamsUni = 1
		p.AckDelayExponent = 0
		p.MaxAckDelay = 0
		p.ActiveConnectionIDLimit = 2
		p.InitialSourceConnectionID = ConnectionID{}
		p.MaxDatagramFrameSize = 1
		p.MinAckDelay = 0
		return p
	}
	edgeHigh := func(p TransportParameters) TransportParameters {
		p.MaxIdleTimeout = time.Duration(tpMaxIdleTimeoutMs) * time.Millisecond
		p.MaxUDPPayloadSize = MaxVarint
		p.InitialMaxData = MaxVarint
		p.InitialMaxStreamDataBidiLocal = MaxVarint
		p.InitialMaxStreamDataBidiRemote = 1<<30 - 1
		p.InitialMaxStreamDataUni = 1 << 30
		p.InitialMaxStreamsBidi = 1 << 60
		p.InitialMaxStreamsUni = 1 << 60
		p.AckDelayExponent = 20
		p.MaxAckDelay = (1<<14 - 1) * time.Millisecond
		p.ActiveConnectionIDLimit = MaxVarint
		p.InitialSourceConnectionID = maxCID
		p.MaxDatagramFrameSize = MaxVarint
		p.MinAckDelay = p.MaxAckDelay // equal is allowed
		return p
	}
	client := tpClientParams()
	client.HasVersionInformation = true
	client.VersionInformation = VersionInformation{ChosenVersion: Version2, AvailableVersions: []Version{Version2, Version1, 0x1a2a3a4a}}
	server := tpServerParams()
	server.HasVersionInformation = true
	server.VersionInformation = VersionInformation{ChosenVersion: Version1} // a server's list may be empty
	serverHigh := edgeHigh(server)
	serverHigh.OriginalDestinationConnectionID = maxCID
	serverHigh.RetrySourceConnectionID = maxCID
	serverHigh.PreferredAddress.ConnectionID = maxCID
	serverHigh.VersionInformation = VersionInformation{ChosenVersion: 0xffffffff, AvailableVersions: []Version{Version1}}
	serverLow := edgeLow(server)
	serverLow.OriginalDestinationConnectionID = ConnectionID{}
	serverLow.RetrySourceConnectionID = ConnectionID{}
	serverLow.InitialSourceConnectionID = NewConnectionID([]byte{1}) // empty is invalid with a preferred address
	serverLow.PreferredAddress = PreferredAddress{IPv6: netip.MustParseAddrPort("[::1]:443"), ConnectionID: NewConnectionID([]byte{1})}
	minimalServer := DefaultTransportParameters()
	minimalServer.HasInitialSourceConnectionID = true
	minimalServer.HasOriginalDestinationConnectionID = true

	tests := []struct {
		name   string
		sender Role
		p      TransportParameters
	}{
		{"client", RoleClient, client},
		{"client low", RoleClient, edgeLow(client)},
		{"client high", RoleClient, edgeHigh(client)},
		{"server", RoleServer, server},
		{"server low", RoleServer, serverLow},
		{"server high", RoleServer, serverHigh},
		{"minimal server", RoleServer, minimalServer},
	}
	for _, tt := range tests {
		enc := tt.p.Append(nil)
		if len(enc) != tt.p.EncodedLen() {
			t.Errorf("%s: EncodedLen = %d, Append wrote %d", tt.name, tt.p.EncodedLen(), len(enc))
		}
		q, err := ParseTransportParameters(enc, tt.sender)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !tpEqual(q, tt.p) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", tt.name, q, tt.p)
		}
		// Append appends.
		if got := tt.p.Append([]byte{0xde, 0xad}); !bytes.Equal(got[2:], enc) || got[0] != 0xde {
			t.Errorf("%s: Append does not append", tt.name)
		}
	}
}

func TestTransportParametersDurations(t *testing.T) {
	p := DefaultTransportParameters()
	p.HasInitialSourceConnectionID = true
	p.MaxIdleTimeout = 1500 * time.Microsecond // rounds up to 2 ms
	p.MaxAckDelay = 24*time.Millisecond + 1    // rounds up to the default 25 ms: omitted
	p.MinAckDelay, p.HasMinAckDelay = 1500*time.Nanosecond, true
	q, err := ParseTransportParameters(p.Append(nil), RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	if q.MaxIdleTimeout != 2*time.Millisecond || q.MaxAckDelay != 25*time.Millisecond || q.MinAckDelay != 2*time.Microsecond {
		t.Fatalf("got idle %v, max ack %v, min ack %v", q.MaxIdleTimeout, q.MaxAckDelay, q.MinAckDelay)
	}
	if p.EncodedLen() != len(p.Append(nil)) {
		t.Fatal("EncodedLen mismatch")
	}
	// A tiny non-zero idle timeout does not become "disabled".
	p.MaxIdleTimeout = 1
	if q, _ := ParseTransportParameters(p.Append(nil), RoleClient); q.MaxIdleTimeout != time.Millisecond {
		t.Fatalf("1ns idle timeout parsed back as %v", q.MaxIdleTimeout)
	}

	// Idle timeouts beyond time.Duration are clamped, not overflowed.
	iscid := tpParam(uint64(TransportParameterInitialSourceConnectionID))
	for _, ms := range []uint64{uint64(tpMaxIdleTimeoutMs), uint64(tpMaxIdleTimeoutMs) + 1, MaxVarint} {
		q, err := ParseTransportParameters(tpCat(iscid, tpIntParam(TransportParameterMaxIdleTimeout, ms)), RoleClient)
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Duration(tpMaxIdleTimeoutMs) * time.Millisecond; q.MaxIdleTimeout != want || want <= 0 {
			t.Fatalf("idle timeout %d ms parsed as %v, want %v", ms, q.MaxIdleTimeout, want)
		}
	}

	defer func() {
		if recover() == nil {
			t.Fatal("Append with a negative duration did not panic")
		}
	}()
	p.MaxIdleTimeout = -time.Second
	p.Append(nil)
}

func TestParseTransportParametersErrors(t *testing.T) {
	iscid := tpParam(uint64(TransportParameterInitialSourceConnectionID), 1, 2, 3, 4)
	odcid := tpParam(uint64(TransportParameterOriginalDestinationConnectionID), 5, 6, 7, 8)
	srv := tpCat(iscid, odcid) // the minimum a server must send
	id := func(x TransportParameterID) uint64 { return uint64(x) }
	big := func(n int) []byte { return make([]byte, n) }
	prefAddr := tpTestPreferredAddress().Append(nil)
	vi := func(vs ...uint32) []byte {
		var b []byte
		for _, v := range vs {
			b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
		return tpParam(id(TransportParameterVersionInformation), b...)
	}
	var tooMany []byte
	for i := range tpMaxParameters { // plus iscid = 1025
		tooMany = append(tooMany, tpParam(0x1000+uint64(i))...)
	}

	tests := []struct {
		name   string
		sender Role
		b      []byte
		reason string
	}{
		// Framing.
		{"truncated ID", RoleClient, tpCat(iscid, []byte{0x40}), "truncated transport parameter ID"},
		{"truncated length", RoleClient, tpCat(iscid, []byte{0x01, 0x40}), "truncated transport parameter length"},
		{"missing length", RoleClient, tpCat(iscid, []byte{0x01}), "truncated transport parameter length"},
		{"length beyond input", RoleClient, tpCat(iscid, []byte{0x01, 0x02, 0x01}), "transport parameter max_idle_timeout longer than the input"},
		{"huge length", RoleClient, tpCat(iscid, []byte{0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), "transport parameter max_idle_timeout longer than the input"},
		{"too many parameters", RoleClient, tpCat(iscid, tooMany), "too many transport parameters"},

		// Integers must fill their value exactly.
		{"empty integer", RoleClient, tpCat(iscid, tpParam(id(TransportParameterInitialMaxData))), "initial_max_data value is not exactly one variable-length integer"},
		{"integer with trailing byte", RoleClient, tpCat(iscid, tpParam(id(TransportParameterMaxIdleTimeout), 0x05, 0x00)), "max_idle_timeout value is not exactly one variable-length integer"},
		{"integer truncated in value", RoleClient, tpCat(iscid, tpParam(id(TransportParameterInitialMaxData), 0x80, 0x00)), "initial_max_data value is not exactly one variable-length integer"},
		{"min_ack_delay trailing byte", RoleClient, tpCat(iscid, tpParam(id(TransportParameterMinAckDelay), 0x01, 0x00)), "min_ack_delay value is not exactly one variable-length integer"},
		{"max_datagram_frame_size empty", RoleClient, tpCat(iscid, tpParam(id(TransportParameterMaxDatagramFrameSize))), "max_datagram_frame_size value is not exactly one variable-length integer"},

		// Duplicates, known and unknown.
		{"duplicate initial_source_connection_id", RoleClient, tpCat(iscid, iscid), "duplicate transport parameter initial_source_connection_id"},
		{"duplicate max_idle_timeout", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMaxIdleTimeout, 1), tpIntParam(TransportParameterMaxIdleTimeout, 1)), "duplicate transport parameter max_idle_timeout"},
		{"duplicate min_ack_delay", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMinAckDelay, 1), tpIntParam(TransportParameterMinAckDelay, 2)), "duplicate transport parameter min_ack_delay"},
		{"duplicate grease_quic_bit", RoleClient, tpCat(iscid, tpParam(id(TransportParameterGreaseQUICBit)), tpParam(id(TransportParameterGreaseQUICBit))), "duplicate transport parameter grease_quic_bit"},
		{"duplicate unknown", RoleClient, tpCat(tpParam(0x3127, 1), iscid, tpParam(0x4752), tpParam(0x3127, 2)), "duplicate transport parameter 0x3127"},
		{"duplicate reserved", RoleClient, tpCat(tpParam(27), iscid, tpParam(27, 1, 2, 3)), "duplicate transport parameter 0x1b"},
		{"duplicate large unknown", RoleClient, tpCat(tpParam(MaxVarint), iscid, tpParam(MaxVarint)), "duplicate transport parameter 0x3fffffffffffffff"},

		// Out of range.
		{"max_udp_payload_size 1199", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMaxUDPPayloadSize, 1199)), "max_udp_payload_size below 1200"},
		{"max_udp_payload_size 0", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMaxUDPPayloadSize, 0)), "max_udp_payload_size below 1200"},
		{"initial_max_streams_bidi 2^60+1", RoleClient, tpCat(iscid, tpIntParam(TransportParameterInitialMaxStreamsBidi, 1<<60+1)), "initial_max_streams_bidi greater than 2^60"},
		{"initial_max_streams_uni 2^62-1", RoleServer, tpCat(srv, tpIntParam(TransportParameterInitialMaxStreamsUni, MaxVarint)), "initial_max_streams_uni greater than 2^60"},
		{"ack_delay_exponent 21", RoleClient, tpCat(iscid, tpIntParam(TransportParameterAckDelayExponent, 21)), "ack_delay_exponent greater than 20"},
		{"ack_delay_exponent 256", RoleClient, tpCat(iscid, tpIntParam(TransportParameterAckDelayExponent, 256)), "ack_delay_exponent greater than 20"},
		{"max_ack_delay 2^14", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMaxAckDelay, 1<<14)), "max_ack_delay of 2^14 ms or more"},
		{"active_connection_id_limit 0", RoleClient, tpCat(iscid, tpIntParam(TransportParameterActiveConnectionIDLimit, 0)), "active_connection_id_limit less than 2"},
		{"active_connection_id_limit 1", RoleServer, tpCat(srv, tpIntParam(TransportParameterActiveConnectionIDLimit, 1)), "active_connection_id_limit less than 2"},

		// Server-only parameters from a client.
		{"client original_destination_connection_id", RoleClient, tpCat(iscid, odcid), "original_destination_connection_id sent by a client"},
		{"client stateless_reset_token", RoleClient, tpCat(iscid, tpParam(id(TransportParameterStatelessResetToken), big(16)...)), "stateless_reset_token sent by a client"},
		{"client preferred_address", RoleClient, tpCat(iscid, tpParam(id(TransportParameterPreferredAddress), prefAddr...)), "preferred_address sent by a client"},
		{"client retry_source_connection_id", RoleClient, tpCat(iscid, tpParam(id(TransportParameterRetrySourceConnectionID), 1)), "retry_source_connection_id sent by a client"},

		// Malformed values.
		{"stateless_reset_token 15 bytes", RoleServer, tpCat(srv, tpParam(id(TransportParameterStatelessResetToken), big(15)...)), "stateless_reset_token is not 16 bytes"},
		{"stateless_reset_token 17 bytes", RoleServer, tpCat(srv, tpParam(id(TransportParameterStatelessResetToken), big(17)...)), "stateless_reset_token is not 16 bytes"},
		{"stateless_reset_token empty", RoleServer, tpCat(srv, tpParam(id(TransportParameterStatelessResetToken))), "stateless_reset_token is not 16 bytes"},
		{"initial_source_connection_id 21 bytes", RoleClient, tpParam(id(TransportParameterInitialSourceConnectionID), big(21)...), "initial_source_connection_id longer than 20 bytes"},
		{"original_destination_connection_id 21 bytes", RoleServer, tpCat(iscid, tpParam(id(TransportParameterOriginalDestinationConnectionID), big(21)...)), "original_destination_connection_id longer than 20 bytes"},
		{"retry_source_connection_id 21 bytes", RoleServer, tpCat(srv, tpParam(id(TransportParameterRetrySourceConnectionID), big(21)...)), "retry_source_connection_id longer than 20 bytes"},
		{"preferred_address truncated", RoleServer, tpCat(srv, tpParam(id(TransportParameterPreferredAddress), prefAddr[:len(prefAddr)-1]...)), "preferred_address length does not match its connection ID length"},
		{"preferred_address trailing byte", RoleServer, tpCat(srv, tpParam(id(TransportParameterPreferredAddress), append(bytes.Clone(prefAddr), 0)...)), "preferred_address length does not match its connection ID length"},
		{"preferred_address empty CID", RoleServer, tpCat(srv, tpParam(id(TransportParameterPreferredAddress), PreferredAddress{}.Append(nil)...)), "preferred_address with a zero-length connection ID"},
		{"preferred_address with empty initial_source_connection_id", RoleServer, tpCat(tpParam(id(TransportParameterInitialSourceConnectionID)), odcid, tpParam(id(TransportParameterPreferredAddress), prefAddr...)), "preferred_address with a zero-length initial_source_connection_id"},
		{"preferred_address empty", RoleServer, tpCat(srv, tpParam(id(TransportParameterPreferredAddress))), "preferred_address too short"},
		{"disable_active_migration non-empty", RoleClient, tpCat(iscid, tpParam(id(TransportParameterDisableActiveMigration), 0)), "disable_active_migration has a non-empty value"},
		{"grease_quic_bit non-empty", RoleClient, tpCat(iscid, tpParam(id(TransportParameterGreaseQUICBit), 0)), "grease_quic_bit has a non-empty value"},
		{"reset_stream_at non-empty", RoleServer, tpCat(srv, tpParam(id(TransportParameterResetStreamAt), 1)), "reset_stream_at has a non-empty value"},

		// min_ack_delay against max_ack_delay, whatever their order.
		{"min_ack_delay above default max_ack_delay", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMinAckDelay, 25001)), "min_ack_delay greater than max_ack_delay"},
		{"min_ack_delay above later max_ack_delay", RoleClient, tpCat(tpIntParam(TransportParameterMinAckDelay, 1001), iscid, tpIntParam(TransportParameterMaxAckDelay, 1)), "min_ack_delay greater than max_ack_delay"},
		{"min_ack_delay above earlier max_ack_delay 0", RoleClient, tpCat(tpIntParam(TransportParameterMaxAckDelay, 0), iscid, tpIntParam(TransportParameterMinAckDelay, 1)), "min_ack_delay greater than max_ack_delay"},
		{"min_ack_delay 2^62-1", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMinAckDelay, MaxVarint)), "min_ack_delay greater than max_ack_delay"},

		// version_information (RFC 9368, Sections 3 and 4).
		{"version_information empty", RoleClient, tpCat(iscid, vi()), "version_information length is not a positive multiple of 4"},
		{"version_information 3 bytes", RoleClient, tpCat(iscid, tpParam(id(TransportParameterVersionInformation), 0, 0, 1)), "version_information length is not a positive multiple of 4"},
		{"version_information 6 bytes", RoleServer, tpCat(srv, tpParam(id(TransportParameterVersionInformation), 0, 0, 0, 1, 0, 0)), "version_information length is not a positive multiple of 4"},
		{"version_information chosen 0", RoleServer, tpCat(srv, vi(0, 1)), "version_information chosen version is 0"},
		{"version_information available 0", RoleServer, tpCat(srv, vi(1, 1, 0)), "version_information available version is 0"},
		{"version_information client chosen not listed", RoleClient, tpCat(iscid, vi(1, 0x6b3343cf)), "version_information from client does not list its chosen version"},
		{"version_information client empty list", RoleClient, tpCat(iscid, vi(1)), "version_information from client does not list its chosen version"},

		// Required parameters (RFC 9000, Section 7.3).
		{"client without initial_source_connection_id", RoleClient, nil, "missing initial_source_connection_id"},
		{"client with only other parameters", RoleClient, tpIntParam(TransportParameterInitialMaxData, 1), "missing initial_source_connection_id"},
		{"server without initial_source_connection_id", RoleServer, odcid, "missing initial_source_connection_id"},
		{"server without original_destination_connection_id", RoleServer, iscid, "missing original_destination_connection_id"},
	}
	for _, tt := range tests {
		p, err := ParseTransportParameters(tt.b, tt.sender)
		if !tpIsParamError(err) {
			t.Errorf("%s: err = %v, want TRANSPORT_PARAMETER_ERROR", tt.name, err)
			continue
		}
		var te *TransportError
		errors.As(err, &te)
		if te.Reason != tt.reason {
			t.Errorf("%s: reason %q, want %q", tt.name, te.Reason, tt.reason)
		}
		if !tpEqual(p, TransportParameters{}) {
			t.Errorf("%s: returned non-zero parameters with an error", tt.name)
		}
	}

	// The same inputs minus the violation are accepted.
	valid := []struct {
		name   string
		sender Role
		b      []byte
	}{
		{"max_udp_payload_size 1200", RoleClient, tpCat(iscid, tpIntParam(TransportParameterMaxUDPPayloadSize, 1200))},
		{"initial_max_streams 2^60", RoleClient, tpCat(iscid, tpIntParam(TransportParameterInitialMaxStreamsBidi, 1<<60), tpIntParam(TransportParameterInitialMaxStreamsUni, 1<<60))},
		{"non-minimal varint", RoleClient, tpCat(iscid, tpParam(id(TransportParameterInitialMaxData), 0xc0, 0, 0, 0, 0, 0, 0, 5))},
		{"non-minimal ID and length", RoleClient, tpCat([]byte{0x40, 0x0f, 0x80, 0, 0, 1, 0xab})},
		{"min_ack_delay equal to max_ack_delay", RoleClient, tpCat(tpIntParam(TransportParameterMinAckDelay, 25000), iscid)},
		{"min_ack_delay 0 with max_ack_delay 0", RoleClient, tpCat(tpIntParam(TransportParameterMinAckDelay, 0), iscid, tpIntParam(TransportParameterMaxAckDelay, 0))},
		{"server version_information chosen not listed", RoleServer, tpCat(srv, vi(1, 0x6b3343cf, 0x0a0a0a0a))},
		{"server version_information empty list", RoleServer, tpCat(srv, vi(0x6b3343cf))},
		{"client version_information chosen listed last", RoleClient, tpCat(iscid, vi(1, 0x6b3343cf, 1))},
		{"exactly tpMaxParameters", RoleClient, tpCat(iscid, tooMany[len(tpParam(0x1000)):])},
		{"20-byte connection IDs", RoleServer, tpCat(tpParam(id(TransportParameterInitialSourceConnectionID), big(20)...), tpParam(id(TransportParameterOriginalDestinationConnectionID), big(20)...))},
	}
	for _, tt := range valid {
		if _, err := ParseTransportParameters(tt.b, tt.sender); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestTransportParametersUnknownSkipped(t *testing.T) {
	base := tpServerParams()
	enc := base.Append(nil)
	var withUnknown []byte
	withUnknown = AppendGreaseParameter(withUnknown, 0, nil)                     // ID 27
	withUnknown = AppendGreaseParameter(withUnknown, 1, []byte{1, 2, 3})         // ID 58
	withUnknown = AppendGreaseParameter(withUnknown, tpMaxGreaseN, []byte{0xff}) // largest reserved ID
	withUnknown = append(withUnknown, enc...)
	withUnknown = append(withUnknown, tpParam(0x3127, 0xde, 0xad)...) // unknown, not reserved
	withUnknown = append(withUnknown, tpParam(0x4752)...)
	withUnknown = append(withUnknown, tpParam(0x1b+31*1000, tpBig1200()...)...)
	// A known ID's reserved neighbours and a value that would be invalid if
	// known must be ignored too.
	withUnknown = append(withUnknown, tpParam(0x21, 0xff, 0xff)...)
	p, err := ParseTransportParameters(withUnknown, RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	if !tpEqual(p, base) {
		t.Fatalf("got %+v, want %+v", p, base)
	}

	for _, n := range []uint64{0, 1, 2, 1000, tpMaxGreaseN} {
		b := AppendGreaseParameter(nil, n, []byte{7})
		id, k := ParseVarint(b)
		if id != 31*n+27 || !TransportParameterID(id).IsReserved() || b[k] != 1 || b[k+1] != 7 {
			t.Errorf("AppendGreaseParameter(%d) = %x", n, b)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AppendGreaseParameter with N too large did not panic")
			}
		}()
		AppendGreaseParameter(nil, tpMaxGreaseN+1, nil)
	}()
}

func tpBig1200() []byte { return make([]byte, 1200) }

func TestTransportParameterIDs(t *testing.T) {
	known := []TransportParameterID{
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
		TransportParameterVersionInformation, TransportParameterResetStreamAt, TransportParameterMaxDatagramFrameSize,
		TransportParameterGreaseQUICBit, TransportParameterMinAckDelay,
	}
	seen := map[int]bool{}
	for _, id := range known {
		idx := tpKnownIndex(id)
		if idx < 0 || idx >= 32 || seen[idx] {
			t.Errorf("tpKnownIndex(%v) = %d", id, idx)
		}
		seen[idx] = true
		if id.IsReserved() {
			t.Errorf("%v is reserved", id)
		}
		if s := id.String(); s == "" || s[0] == '0' {
			t.Errorf("%#x has no name: %q", uint64(id), s)
		}
	}
	for _, id := range []TransportParameterID{0x11 + 1, 27, 0x1c, 0x1e, 0x21, 0x3127, 0xff04de1a, MaxVarint} {
		if tpKnownIndex(id) >= 0 {
			t.Errorf("tpKnownIndex(%#x) = %d, want -1", uint64(id), tpKnownIndex(id))
		}
	}
	if TransportParameterMaxIdleTimeout.String() != "max_idle_timeout" || TransportParameterID(0x3127).String() != "0x3127" {
		t.Error("String is wrong")
	}
	for id, want := range map[TransportParameterID]bool{0: false, 26: false, 27: true, 28: false, 58: true, 31*12345 + 27: true} {
		if id.IsReserved() != want {
			t.Errorf("%d.IsReserved() = %v", id, !want)
		}
	}
}

// TestTransportParametersTruncation cuts a valid encoding at every byte. A
// cut inside a parameter must fail; a cut at a parameter boundary must
// succeed exactly when the required parameters are in the prefix, and then
// yields exactly the parameters of the prefix.
func TestTransportParametersTruncation(t *testing.T) {
	for _, sender := range []Role{RoleClient, RoleServer} {
		p := tpClientParams()
		if sender == RoleServer {
			p = tpServerParams()
		}
		p.HasVersionInformation = true
		p.VersionInformation = VersionInformation{ChosenVersion: Version1, AvailableVersions: []Version{Version1}}
		enc := p.Append(nil)
		enc = AppendGreaseParameter(enc, 5, []byte{1, 2, 3, 4, 5})

		// Walk the encoding, recording which required IDs each boundary has.
		type boundary struct{ iscid, odcid bool }
		boundaries := map[int]boundary{0: {}}
		var cur boundary
		for off := 0; off < len(enc); {
			id, n := ParseVarint(enc[off:])
			l, m := ParseVarint(enc[off+n:])
			off += n + m + int(l)
			cur.iscid = cur.iscid || TransportParameterID(id) == TransportParameterInitialSourceConnectionID
			cur.odcid = cur.odcid || TransportParameterID(id) == TransportParameterOriginalDestinationConnectionID
			boundaries[off] = cur
		}
		for i := 0; i <= len(enc); i++ {
			q, err := ParseTransportParameters(enc[:i], sender)
			bd, atBoundary := boundaries[i]
			wantOK := atBoundary && bd.iscid && (sender == RoleClient || bd.odcid)
			if !wantOK {
				if !tpIsParamError(err) {
					t.Errorf("%v: prefix %d/%d: err = %v, want TRANSPORT_PARAMETER_ERROR", sender, i, len(enc), err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%v: prefix %d/%d at a boundary: %v", sender, i, len(enc), err)
				continue
			}
			// Append writes parameters in ascending ID order and skips
			// GREASE, so re-encoding the result must give the prefix back
			// (without the reserved parameter).
			want := enc[:min(i, len(enc)-len(AppendGreaseParameter(nil, 5, []byte{1, 2, 3, 4, 5})))]
			if got := q.Append(nil); !bytes.Equal(got, want) {
				t.Errorf("%v: prefix %d parsed to %x, want %x", sender, i, got, want)
			}
		}
	}
}

func TestTransportParametersAllocs(t *testing.T) {
	p := tpServerParams()
	buf := make([]byte, 0, 512)
	enc := p.Append(nil)
	// Several unknown parameters exercise the duplicate check too.
	enc = AppendGreaseParameter(enc, 3, []byte{1})
	enc = AppendGreaseParameter(enc, 4, []byte{1})
	if n := testing.AllocsPerRun(100, func() {
		_ = p.Append(buf[:0])
		_ = p.EncodedLen()
	}); n != 0 {
		t.Errorf("Append allocs = %v, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := ParseTransportParameters(enc, RoleServer); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Parse allocs = %v, want 0", n)
	}
	p.HasVersionInformation = true
	p.VersionInformation = VersionInformation{ChosenVersion: Version1, AvailableVersions: []Version{Version1, Version2}}
	enc = p.Append(nil)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := ParseTransportParameters(enc, RoleServer); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("Parse with available versions allocs = %v, want 1", n)
	}
}

func tpFuzzSeeds() []struct {
	b      []byte
	server bool
} {
	client := tpClientParams()
	client.HasVersionInformation = true
	client.VersionInformation = VersionInformation{ChosenVersion: Version1, AvailableVersions: []Version{Version1, Version2}}
	server := tpServerParams()
	server.HasVersionInformation = true
	server.VersionInformation = VersionInformation{ChosenVersion: Version1, AvailableVersions: []Version{Version2}}
	minimal := DefaultTransportParameters()
	minimal.HasInitialSourceConnectionID = true
	return []struct {
		b      []byte
		server bool
	}{
		{client.Append(nil), false},
		{AppendGreaseParameter(client.Append(nil), 7, []byte("grease")), false},
		{server.Append(nil), true},
		{AppendGreaseParameter(server.Append(nil), 0, nil), true},
		{minimal.Append(nil), false},
		{nil, true},
		{tpCat(tpParam(0x0f), tpIntParam(TransportParameterMaxIdleTimeout, MaxVarint)), false},
	}
}

// FuzzParseTransportParameters checks that parsing never panics, that every
// error is a TRANSPORT_PARAMETER_ERROR, and that what parses survives an
// Append and a second parse unchanged (the clamped max_idle_timeout is
// already a whole number of milliseconds, so no normalization is needed
// beyond treating empty AvailableVersions as nil).
func FuzzParseTransportParameters(f *testing.F) {
	for _, s := range tpFuzzSeeds() {
		f.Add(s.b, s.server)
	}
	f.Fuzz(func(t *testing.T, b []byte, server bool) {
		sender := tpRole(server)
		p, err := ParseTransportParameters(b, sender)
		if err != nil {
			if !tpIsParamError(err) {
				t.Fatalf("error %v is not a TRANSPORT_PARAMETER_ERROR", err)
			}
			return
		}
		enc := p.Append(nil)
		if len(enc) != p.EncodedLen() {
			t.Fatalf("EncodedLen = %d, Append wrote %d", p.EncodedLen(), len(enc))
		}
		q, err := ParseTransportParameters(enc, sender)
		if err != nil {
			t.Fatalf("re-parse of %x: %v", enc, err)
		}
		if !tpEqual(p, q) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", q, p)
		}
		if enc2 := q.Append(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("re-encoding differs: %x vs %x", enc, enc2)
		}
	})
}

func BenchmarkParseTransportParameters(b *testing.B) {
	p := tpServerParams()
	enc := AppendGreaseParameter(p.Append(nil), 3, []byte{1, 2, 3})
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := ParseTransportParameters(enc, RoleServer); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendTransportParameters(b *testing.B) {
	p := tpServerParams()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(p.EncodedLen()))
	for b.Loop() {
		buf = p.Append(buf[:0])
	}
}
