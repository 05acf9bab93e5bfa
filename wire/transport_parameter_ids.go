package wire

import "strconv"

// A TransportParameterID identifies a QUIC transport parameter. On the wire it
// is a variable-length integer at the start of each (identifier, length,
// value) tuple (RFC 9000, Section 18).
type TransportParameterID uint64

// Transport parameter identifiers (RFC 9000, Section 18.2, and the
// extensions named on each).
const (
	// TransportParameterOriginalDestinationConnectionID is
	// original_destination_connection_id (RFC 9000, Section 18.2). Server only.
	TransportParameterOriginalDestinationConnectionID TransportParameterID = 0x00
	// TransportParameterMaxIdleTimeout is max_idle_timeout, in milliseconds
	// (RFC 9000, Section 18.2).
	TransportParameterMaxIdleTimeout TransportParameterID = 0x01
	// TransportParameterStatelessResetToken is stateless_reset_token
	// (RFC 9000, Section 18.2). Server only.
	TransportParameterStatelessResetToken TransportParameterID = 0x02
	// TransportParameterMaxUDPPayloadSize is max_udp_payload_size
	// (RFC 9000, Section 18.2).
	TransportParameterMaxUDPPayloadSize TransportParameterID = 0x03
	// TransportParameterInitialMaxData is initial_max_data
	// (RFC 9000, Section 18.2).
	TransportParameterInitialMaxData TransportParameterID = 0x04
	// TransportParameterInitialMaxStreamDataBidiLocal is
	// initial_max_stream_data_bidi_local (RFC 9000, Section 18.2).
	TransportParameterInitialMaxStreamDataBidiLocal TransportParameterID = 0x05
	// TransportParameterInitialMaxStreamDataBidiRemote is
	// initial_max_stream_data_bidi_remote (RFC 9000, Section 18.2).
	TransportParameterInitialMaxStreamDataBidiRemote TransportParameterID = 0x06
	// TransportParameterInitialMaxStreamDataUni is initial_max_stream_data_uni
	// (RFC 9000, Section 18.2).
	TransportParameterInitialMaxStreamDataUni TransportParameterID = 0x07
	// TransportParameterInitialMaxStreamsBidi is initial_max_streams_bidi
	// (RFC 9000, Section 18.2).
	TransportParameterInitialMaxStreamsBidi TransportParameterID = 0x08
	// TransportParameterInitialMaxStreamsUni is initial_max_streams_uni
	// (RFC 9000, Section 18.2).
	TransportParameterInitialMaxStreamsUni TransportParameterID = 0x09
	// TransportParameterAckDelayExponent is ack_delay_exponent
	// (RFC 9000, Section 18.2).
	TransportParameterAckDelayExponent TransportParameterID = 0x0a
	// TransportParameterMaxAckDelay is max_ack_delay, in milliseconds
	// (RFC 9000, Section 18.2).
	TransportParameterMaxAckDelay TransportParameterID = 0x0b
	// TransportParameterDisableActiveMigration is disable_active_migration,
	// a zero-length value (RFC 9000, Section 18.2).
	TransportParameterDisableActiveMigration TransportParameterID = 0x0c
	// TransportParameterPreferredAddress is preferred_address
	// (RFC 9000, Section 18.2). Server only.
	TransportParameterPreferredAddress TransportParameterID = 0x0d
	// TransportParameterActiveConnectionIDLimit is active_connection_id_limit
	// (RFC 9000, Section 18.2).
	TransportParameterActiveConnectionIDLimit TransportParameterID = 0x0e
	// TransportParameterInitialSourceConnectionID is
	// initial_source_connection_id (RFC 9000, Section 18.2).
	TransportParameterInitialSourceConnectionID TransportParameterID = 0x0f
	// TransportParameterRetrySourceConnectionID is retry_source_connection_id
	// (RFC 9000, Section 18.2). Server only.
	TransportParameterRetrySourceConnectionID TransportParameterID = 0x10
	// TransportParameterVersionInformation is version_information
	// (RFC 9368, Section 3).
	TransportParameterVersionInformation TransportParameterID = 0x11
	// TransportParameterResetStreamAt is reset_stream_at, a zero-length value
	// (draft-ietf-quic-reliable-stream-reset, Section 3).
	TransportParameterResetStreamAt TransportParameterID = 0x1d
	// TransportParameterMaxDatagramFrameSize is max_datagram_frame_size
	// (RFC 9221, Section 3).
	TransportParameterMaxDatagramFrameSize TransportParameterID = 0x20
	// TransportParameterGreaseQUICBit is grease_quic_bit, a zero-length value
	// (RFC 9287, Section 3).
	TransportParameterGreaseQUICBit TransportParameterID = 0x2ab2
	// TransportParameterMinAckDelay is min_ack_delay, in microseconds
	// (draft-ietf-quic-ack-frequency, Section 3).
	TransportParameterMinAckDelay TransportParameterID = 0xff04de1b
)

// tpKnownIndex maps the ID of a parameter this package understands to a
// small index (used as a bit position for duplicate detection), or returns
// -1 for any other ID.
func tpKnownIndex(id TransportParameterID) int {
	if id <= TransportParameterVersionInformation {
		return int(id)
	}
	switch id {
	case TransportParameterResetStreamAt:
		return 18
	case TransportParameterMaxDatagramFrameSize:
		return 19
	case TransportParameterGreaseQUICBit:
		return 20
	case TransportParameterMinAckDelay:
		return 21
	}
	return -1
}

var tpNames = [...]string{
	TransportParameterOriginalDestinationConnectionID: "original_destination_connection_id",
	TransportParameterMaxIdleTimeout:                  "max_idle_timeout",
	TransportParameterStatelessResetToken:             "stateless_reset_token",
	TransportParameterMaxUDPPayloadSize:               "max_udp_payload_size",
	TransportParameterInitialMaxData:                  "initial_max_data",
	TransportParameterInitialMaxStreamDataBidiLocal:   "initial_max_stream_data_bidi_local",
	TransportParameterInitialMaxStreamDataBidiRemote:  "initial_max_stream_data_bidi_remote",
	TransportParameterInitialMaxStreamDataUni:         "initial_max_stream_data_uni",
	TransportParameterInitialMaxStreamsBidi:           "initial_max_streams_bidi",
	TransportParameterInitialMaxStreamsUni:            "initial_max_streams_uni",
	TransportParameterAckDelayExponent:                "ack_delay_exponent",
	TransportParameterMaxAckDelay:                     "max_ack_delay",
	TransportParameterDisableActiveMigration:          "disable_active_migration",
	TransportParameterPreferredAddress:                "preferred_address",
	TransportParameterActiveConnectionIDLimit:         "active_connection_id_limit",
	TransportParameterInitialSourceConnectionID:       "initial_source_connection_id",
	TransportParameterRetrySourceConnectionID:         "retry_source_connection_id",
	TransportParameterVersionInformation:              "version_information",
}

// String returns the parameter's name as registered (such as
// "max_idle_timeout"), or its ID in hexadecimal for other parameters.
func (id TransportParameterID) String() string {
	if id < TransportParameterID(len(tpNames)) {
		return tpNames[id]
	}
	switch id {
	case TransportParameterResetStreamAt:
		return "reset_stream_at"
	case TransportParameterMaxDatagramFrameSize:
		return "max_datagram_frame_size"
	case TransportParameterGreaseQUICBit:
		return "grease_quic_bit"
	case TransportParameterMinAckDelay:
		return "min_ack_delay"
	}
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

// IsReserved reports whether id has the form 31 * N + 27 that RFC 9000,
// Section 18.1 reserves "to exercise the requirement that unknown transport
// parameters be ignored". Such parameters have no semantics.
func (id TransportParameterID) IsReserved() bool {
	return id >= 27 && (id-27)%31 == 0
}

// tpMaxGreaseN is the largest N for which 31 * N + 27 is still a
// variable-length integer.
const tpMaxGreaseN = (MaxVarint - 27) / 31

// AppendGreaseParameter appends a reserved transport parameter with ID
// 31 * n + 27 and the given value (RFC 9000, Section 18.1): "These transport
// parameters have no semantics and can carry arbitrary values." A TLS layer
// adds one, with a random n and value, after TransportParameters.Append so
// that peers keep ignoring unknown parameters. It panics if n is so large
// that the ID is not a variable-length integer (n > (2^62-1-27)/31).
func AppendGreaseParameter(b []byte, n uint64, value []byte) []byte {
	if n > tpMaxGreaseN {
		panic("wire: GREASE transport parameter N too large")
	}
	b = AppendVarint(b, 31*n+27)
	b = AppendVarint(b, uint64(len(value)))
	return append(b, value...)
}
