package wire

import (
	"encoding/binary"
	"math"
	"slices"
	"time"
)

// Defaults and limits of transport parameters (RFC 9000, Section 18.2).
const (
	// tpDefaultMaxUDPPayloadSize is the max_udp_payload_size assumed when the
	// parameter is absent: "the maximum permitted UDP payload of 65527".
	tpDefaultMaxUDPPayloadSize = 65527
	// tpMinMaxUDPPayloadSize is the smallest valid max_udp_payload_size:
	// "Values below 1200 are invalid."
	tpMinMaxUDPPayloadSize = 1200
	// tpDefaultAckDelayExponent is the ack_delay_exponent assumed when the
	// parameter is absent.
	tpDefaultAckDelayExponent = 3
	// tpMaxAckDelayExponent is the largest valid ack_delay_exponent: "Values
	// above 20 are invalid."
	tpMaxAckDelayExponent = 20
	// tpDefaultMaxAckDelay is the max_ack_delay assumed when the parameter is
	// absent.
	tpDefaultMaxAckDelay = 25 * time.Millisecond
	// tpDefaultActiveConnectionIDLimit is the active_connection_id_limit
	// assumed when the parameter is absent; it is also the smallest valid
	// value.
	tpDefaultActiveConnectionIDLimit = 2
	// tpMaxInitialMaxStreams is the largest valid initial_max_streams_bidi and
	// initial_max_streams_uni, 2^60 (RFC 9000, Section 4.6).
	tpMaxInitialMaxStreams = 1 << 60
)

// tpMaxParameters bounds the number of parameters, known or not, that
// ParseTransportParameters accepts in one extension. A TLS extension of up
// to 65535 bytes could carry over 30000 (mostly empty, unknown) parameters;
// real endpoints send a few dozen. The bound keeps the duplicate check
// (which sorts the IDs of unknown parameters in a fixed-size stack array)
// cheap and allocation-free. Exceeding it is a TRANSPORT_PARAMETER_ERROR.
const tpMaxParameters = 1024

// tpMaxIdleTimeoutMs is the largest max_idle_timeout, in milliseconds, that
// fits a time.Duration (about 292 years). Larger values are clamped to it.
const tpMaxIdleTimeoutMs = math.MaxInt64 / int64(time.Millisecond)

// VersionInformation is the value of the version_information transport
// parameter (RFC 9368, Section 3).
type VersionInformation struct {
	// ChosenVersion is "the version that the sender has chosen to use for
	// this connection". It is never 0 in parsed parameters.
	ChosenVersion Version
	// AvailableVersions lists, when sent by a client, the versions its
	// first flight is compatible with, in descending order of preference
	// (it must include ChosenVersion); when sent by a server, its Fully
	// Deployed Versions, in no particular order, possibly none. Parsing
	// returns nil for an empty list.
	AvailableVersions []Version
}

// TransportParameters are the QUIC transport parameters one endpoint declares
// in its TLS handshake (RFC 9000, Sections 7.4 and 18.2), including those of
// the extensions RFC 9221 (DATAGRAM), RFC 9287 (greasing the QUIC bit),
// RFC 9368 (compatible version negotiation), the ACK frequency draft and the
// reliable stream reset draft.
//
// Fields hold the values in force: a parameter that was absent has its
// default (see DefaultTransportParameters), and parameters without a default
// have a Has flag. Start from DefaultTransportParameters when building a
// set to send: the zero value has MaxUDPPayloadSize, AckDelayExponent,
// MaxAckDelay and ActiveConnectionIDLimit set to 0, which Append writes and a
// peer rejects.
//
// Durations are whole milliseconds (microseconds for MinAckDelay) on the
// wire. Append rounds a fraction up, so that a non-zero MaxIdleTimeout never
// turns into 0 ("disabled") and the bounds an endpoint declares stay true.
type TransportParameters struct {
	// OriginalDestinationConnectionID is the Destination Connection ID of
	// the client's first Initial packet (RFC 9000, Section 7.3). Only a
	// server sends it, and a server must;
	// HasOriginalDestinationConnectionID reports whether it is present.
	OriginalDestinationConnectionID    ConnectionID
	HasOriginalDestinationConnectionID bool

	// MaxIdleTimeout is the idle timeout (RFC 9000, Section 10.1); 0 means
	// none. A received value too large for a time.Duration (over about 292
	// years) is clamped to the largest whole number of milliseconds that
	// fits.
	MaxIdleTimeout time.Duration

	// StatelessResetToken is the token for the connection ID the server
	// chose during the handshake (RFC 9000, Section 10.3). Only a server
	// may send it; HasStatelessResetToken reports whether it is present.
	StatelessResetToken    StatelessResetToken
	HasStatelessResetToken bool

	// MaxUDPPayloadSize limits the UDP payloads the sender is willing to
	// receive. Default 65527; values below 1200 are invalid.
	MaxUDPPayloadSize uint64

	// InitialMaxData is the initial connection flow control limit.
	InitialMaxData uint64
	// InitialMaxStreamDataBidiLocal is the initial flow control limit for
	// bidirectional streams opened by the sender of the parameters.
	InitialMaxStreamDataBidiLocal uint64
	// InitialMaxStreamDataBidiRemote is the initial flow control limit for
	// bidirectional streams opened by the receiver of the parameters.
	InitialMaxStreamDataBidiRemote uint64
	// InitialMaxStreamDataUni is the initial flow control limit for
	// unidirectional streams opened by the receiver of the parameters.
	InitialMaxStreamDataUni uint64
	// InitialMaxStreamsBidi is the number of bidirectional streams the
	// receiver may open; at most 2^60.
	InitialMaxStreamsBidi uint64
	// InitialMaxStreamsUni is the number of unidirectional streams the
	// receiver may open; at most 2^60.
	InitialMaxStreamsUni uint64

	// AckDelayExponent scales the ACK Delay field of ACK frames
	// (RFC 9000, Section 19.3). Default 3; values above 20 are invalid.
	AckDelayExponent uint8
	// MaxAckDelay is the longest the sender delays acknowledgments.
	// Default 25 ms; 2^14 ms or more is invalid.
	MaxAckDelay time.Duration

	// DisableActiveMigration says the sender does not support active
	// migration on the handshake address (RFC 9000, Section 9).
	DisableActiveMigration bool

	// PreferredAddress is the server's preferred address
	// (RFC 9000, Section 9.6). Only a server may send it, and not if its
	// initial_source_connection_id is empty; HasPreferredAddress reports
	// whether it is present.
	PreferredAddress    PreferredAddress
	HasPreferredAddress bool

	// ActiveConnectionIDLimit is how many connection IDs from the peer the
	// sender is willing to store. Default 2; values below 2 are invalid.
	ActiveConnectionIDLimit uint64

	// InitialSourceConnectionID is the Source Connection ID of the
	// sender's first Initial packet (RFC 9000, Section 7.3). Both
	// endpoints must send it; HasInitialSourceConnectionID reports whether
	// it is present (it may be empty).
	InitialSourceConnectionID    ConnectionID
	HasInitialSourceConnectionID bool

	// RetrySourceConnectionID is the Source Connection ID of the server's
	// Retry packet (RFC 9000, Section 7.3). Only a server may send it, and
	// only after a Retry; HasRetrySourceConnectionID reports whether it is
	// present.
	RetrySourceConnectionID    ConnectionID
	HasRetrySourceConnectionID bool

	// MaxDatagramFrameSize is the largest DATAGRAM frame the sender is
	// willing to receive; 0 (the default) means DATAGRAM frames are not
	// supported (RFC 9221, Section 3).
	MaxDatagramFrameSize uint64

	// GreaseQUICBit says the sender accepts packets with the QUIC Bit set
	// to 0 (RFC 9287, Section 3).
	GreaseQUICBit bool

	// MinAckDelay is the shortest the sender is willing to delay an
	// acknowledgment, in whole microseconds on the wire; its presence
	// advertises support for ACK_FREQUENCY and IMMEDIATE_ACK frames
	// (draft-ietf-quic-ack-frequency, Section 3). It never exceeds
	// MaxAckDelay in parsed parameters. HasMinAckDelay reports whether it
	// is present.
	MinAckDelay    time.Duration
	HasMinAckDelay bool

	// ResetStreamAt advertises support for receiving RESET_STREAM_AT frames
	// (draft-ietf-quic-reliable-stream-reset, Section 3).
	ResetStreamAt bool

	// VersionInformation is the sender's Version Information
	// (RFC 9368, Section 3), valid if HasVersionInformation is set. It is a
	// value with a flag rather than a pointer so that parsing allocates
	// only the AvailableVersions slice.
	VersionInformation    VersionInformation
	HasVersionInformation bool
}

// DefaultTransportParameters returns the values RFC 9000, Section 18.2
// assumes for absent parameters: max_udp_payload_size 65527,
// ack_delay_exponent 3, max_ack_delay 25 ms, active_connection_id_limit 2,
// and 0, false or not present for everything else.
func DefaultTransportParameters() TransportParameters {
	return TransportParameters{
		MaxUDPPayloadSize:       tpDefaultMaxUDPPayloadSize,
		AckDelayExponent:        tpDefaultAckDelayExponent,
		MaxAckDelay:             tpDefaultMaxAckDelay,
		ActiveConnectionIDLimit: tpDefaultActiveConnectionIDLimit,
	}
}

// tpError returns a TRANSPORT_PARAMETER_ERROR. "An endpoint MUST treat
// receipt of a transport parameter with an invalid value as a connection
// error of type TRANSPORT_PARAMETER_ERROR." RFC 9000, Section 7.4
func tpError(reason string) error {
	return &TransportError{Code: TransportParameterError, Reason: reason}
}

// ParseTransportParameters parses the extension_data of a
// quic_transport_parameters TLS extension (RFC 9000, Section 18) sent by an
// endpoint in role sender, and validates it as RFC 9000 Sections 7.3, 7.4 and
// 18.2 and the extensions require of the receiver. Absent parameters take
// their defaults. Unknown parameters, including the reserved IDs
// 31 * N + 27 (Section 18.1), are skipped.
//
// Every failure is a *TransportError with code TRANSPORT_PARAMETER_ERROR:
// truncated input; a value that a varint does not exactly fill; a parameter
// (known or not) sent twice; a value out of range; a server-only parameter
// from a client; a missing initial_source_connection_id, or
// original_destination_connection_id from a server; a malformed
// version_information (RFC 9368, Section 4); min_ack_delay above
// max_ack_delay; a preferred_address from a server that chose a zero-length
// connection ID; or more than 1024 parameters, a local limit against CPU
// exhaustion. On error the returned TransportParameters is the zero value.
//
// Checks that need connection state are left to the caller: that the
// connection IDs match those in Initial and Retry packets (RFC 9000,
// Section 7.3), and the version negotiation checks of RFC 9368, Section 4
// that end in VERSION_NEGOTIATION_ERROR.
//
// Parsing allocates only for VersionInformation.AvailableVersions.
func ParseTransportParameters(b []byte, sender Role) (TransportParameters, error) {
	p := DefaultTransportParameters()
	var (
		seen     uint32 // bit tpKnownIndex(id) is set once id was seen
		unknown  int    // parameters with an ID not known here
		count    int
		minAckUs uint64
	)
	for off := 0; off < len(b); {
		if count++; count > tpMaxParameters {
			return TransportParameters{}, tpError("too many transport parameters")
		}
		rawID, n := ParseVarint(b[off:])
		if n == 0 {
			return TransportParameters{}, tpError("truncated transport parameter ID")
		}
		off += n
		length, n := ParseVarint(b[off:])
		if n == 0 {
			return TransportParameters{}, tpError("truncated transport parameter length")
		}
		off += n
		if length > uint64(len(b)-off) {
			return TransportParameters{}, tpError("transport parameter " + TransportParameterID(rawID).String() + " longer than the input")
		}
		val := b[off : off+int(length) : off+int(length)]
		off += int(length)

		id := TransportParameterID(rawID)
		idx := tpKnownIndex(id)
		if idx < 0 {
			// "An endpoint MUST ignore transport parameters that it does
			// not support." RFC 9000, Section 7.4.2. Reserved IDs
			// (Section 18.1) fall here too. Duplicates among them are
			// found after the loop.
			unknown++
			continue
		}
		// "An endpoint MUST NOT send a parameter more than once in a given
		// transport parameters extension. An endpoint SHOULD treat receipt
		// of duplicate transport parameters as a connection error of type
		// TRANSPORT_PARAMETER_ERROR." RFC 9000, Section 7.4
		if seen&(1<<idx) != 0 {
			return TransportParameters{}, tpError("duplicate transport parameter " + id.String())
		}
		seen |= 1 << idx
		if err := p.parseOne(id, val, sender, &minAckUs); err != nil {
			return TransportParameters{}, err
		}
	}
	if unknown > 1 {
		if err := tpCheckUnknownDuplicates(b); err != nil {
			return TransportParameters{}, err
		}
	}

	// "Endpoints that support this extension MUST treat receipt of a
	// min_ack_delay that is greater than the max_ack_delay as a connection
	// error of type TRANSPORT_PARAMETER_ERROR."
	// draft-ietf-quic-ack-frequency, Section 3. Compared in microseconds
	// after all parameters are read, as max_ack_delay may come later or be
	// absent (then its default applies).
	if p.HasMinAckDelay {
		if minAckUs > uint64(p.MaxAckDelay/time.Microsecond) {
			return TransportParameters{}, tpError("min_ack_delay greater than max_ack_delay")
		}
		p.MinAckDelay = time.Duration(minAckUs) * time.Microsecond
	}

	// "An endpoint MUST treat the absence of the
	// initial_source_connection_id transport parameter from either endpoint
	// or the absence of the original_destination_connection_id transport
	// parameter from the server as a connection error of type
	// TRANSPORT_PARAMETER_ERROR." RFC 9000, Section 7.3
	if !p.HasInitialSourceConnectionID {
		return TransportParameters{}, tpError("missing initial_source_connection_id")
	}
	if sender != RoleClient && !p.HasOriginalDestinationConnectionID {
		return TransportParameters{}, tpError("missing original_destination_connection_id")
	}

	// "A server that chooses a zero-length connection ID MUST NOT provide a
	// preferred address. [...] A client MUST treat a violation of these
	// requirements as a connection error of type
	// TRANSPORT_PARAMETER_ERROR." RFC 9000, Section 18.2. The server's
	// chosen connection ID is its initial_source_connection_id.
	if p.HasPreferredAddress && p.InitialSourceConnectionID.Len() == 0 {
		return TransportParameters{}, tpError("preferred_address with a zero-length initial_source_connection_id")
	}
	return p, nil
}

// parseOne parses and validates the value val of the known parameter id and
// stores it in p. min_ack_delay is returned in *minAckUs, to be checked once
// max_ack_delay is known.
func (p *TransportParameters) parseOne(id TransportParameterID, val []byte, sender Role, minAckUs *uint64) error {
	switch id {
	case TransportParameterOriginalDestinationConnectionID,
		TransportParameterStatelessResetToken,
		TransportParameterPreferredAddress,
		TransportParameterRetrySourceConnectionID:
		// "A client MUST NOT include any server-only transport parameter:
		// original_destination_connection_id, preferred_address,
		// retry_source_connection_id, or stateless_reset_token. A server
		// MUST treat receipt of any of these transport parameters as a
		// connection error of type TRANSPORT_PARAMETER_ERROR."
		// RFC 9000, Section 18.2
		if sender == RoleClient {
			return tpError(id.String() + " sent by a client")
		}
	}

	switch id {
	case TransportParameterOriginalDestinationConnectionID:
		c, err := tpParseConnectionID(id, val)
		p.OriginalDestinationConnectionID, p.HasOriginalDestinationConnectionID = c, true
		return err
	case TransportParameterInitialSourceConnectionID:
		c, err := tpParseConnectionID(id, val)
		p.InitialSourceConnectionID, p.HasInitialSourceConnectionID = c, true
		return err
	case TransportParameterRetrySourceConnectionID:
		c, err := tpParseConnectionID(id, val)
		p.RetrySourceConnectionID, p.HasRetrySourceConnectionID = c, true
		return err

	case TransportParameterStatelessResetToken:
		// "This parameter is a sequence of 16 bytes." RFC 9000, Section 18.2
		if len(val) != StatelessResetTokenLen {
			return tpError("stateless_reset_token is not 16 bytes")
		}
		p.StatelessResetToken, p.HasStatelessResetToken = StatelessResetToken(val), true
		return nil

	case TransportParameterPreferredAddress:
		a, err := ParsePreferredAddress(val)
		if err != nil {
			return err
		}
		p.PreferredAddress, p.HasPreferredAddress = a, true
		return nil

	case TransportParameterDisableActiveMigration:
		// "This parameter is a zero-length value." RFC 9000, Section 18.2
		if len(val) != 0 {
			return tpError("disable_active_migration has a non-empty value")
		}
		p.DisableActiveMigration = true
		return nil
	case TransportParameterGreaseQUICBit:
		// "an endpoint that understands this transport parameter MUST treat
		// receipt of a non-empty value of the transport parameter as a
		// connection error of type TRANSPORT_PARAMETER_ERROR." RFC 9287,
		// Section 3
		if len(val) != 0 {
			return tpError("grease_quic_bit has a non-empty value")
		}
		p.GreaseQUICBit = true
		return nil
	case TransportParameterResetStreamAt:
		// "An implementation that understands this transport parameter MUST
		// treat the receipt of a non-empty value as a connection error of
		// type TRANSPORT_PARAMETER_ERROR."
		// draft-ietf-quic-reliable-stream-reset, Section 3
		if len(val) != 0 {
			return tpError("reset_stream_at has a non-empty value")
		}
		p.ResetStreamAt = true
		return nil

	case TransportParameterVersionInformation:
		vi, err := tpParseVersionInformation(val, sender)
		if err != nil {
			return err
		}
		p.VersionInformation, p.HasVersionInformation = vi, true
		return nil
	}

	// The rest are integers: "Those transport parameters that are
	// identified as integers use a variable-length integer encoding"
	// (RFC 9000, Section 18.2), which must fill the value exactly.
	v, n := ParseVarint(val)
	if n == 0 || n != len(val) {
		return tpError(id.String() + " value is not exactly one variable-length integer")
	}
	switch id {
	case TransportParameterMaxIdleTimeout:
		// Milliseconds; clamped rather than overflowing time.Duration.
		p.MaxIdleTimeout = time.Duration(min(v, uint64(tpMaxIdleTimeoutMs))) * time.Millisecond
	case TransportParameterMaxUDPPayloadSize:
		// "Values below 1200 are invalid." RFC 9000, Section 18.2
		if v < tpMinMaxUDPPayloadSize {
			return tpError("max_udp_payload_size below 1200")
		}
		p.MaxUDPPayloadSize = v
	case TransportParameterInitialMaxData:
		p.InitialMaxData = v
	case TransportParameterInitialMaxStreamDataBidiLocal:
		p.InitialMaxStreamDataBidiLocal = v
	case TransportParameterInitialMaxStreamDataBidiRemote:
		p.InitialMaxStreamDataBidiRemote = v
	case TransportParameterInitialMaxStreamDataUni:
		p.InitialMaxStreamDataUni = v
	case TransportParameterInitialMaxStreamsBidi, TransportParameterInitialMaxStreamsUni:
		// "If a max_streams transport parameter or a MAX_STREAMS frame is
		// received with a value greater than 2^60, [...] the connection
		// MUST be closed immediately with a connection error of type
		// TRANSPORT_PARAMETER_ERROR if the offending value was received in
		// a transport parameter" RFC 9000, Section 4.6
		if v > tpMaxInitialMaxStreams {
			return tpError(id.String() + " greater than 2^60")
		}
		if id == TransportParameterInitialMaxStreamsBidi {
			p.InitialMaxStreamsBidi = v
		} else {
			p.InitialMaxStreamsUni = v
		}
	case TransportParameterAckDelayExponent:
		// "Values above 20 are invalid." RFC 9000, Section 18.2
		if v > tpMaxAckDelayExponent {
			return tpError("ack_delay_exponent greater than 20")
		}
		p.AckDelayExponent = uint8(v)
	case TransportParameterMaxAckDelay:
		// "Values of 2^14 or greater are invalid." RFC 9000, Section 18.2
		if v >= 1<<14 {
			return tpError("max_ack_delay of 2^14 ms or more")
		}
		p.MaxAckDelay = time.Duration(v) * time.Millisecond
	case TransportParameterActiveConnectionIDLimit:
		// "An endpoint that receives a value less than 2 MUST close the
		// connection with an error of type TRANSPORT_PARAMETER_ERROR."
		// RFC 9000, Section 18.2
		if v < tpDefaultActiveConnectionIDLimit {
			return tpError("active_connection_id_limit less than 2")
		}
		p.ActiveConnectionIDLimit = v
	case TransportParameterMaxDatagramFrameSize:
		p.MaxDatagramFrameSize = v
	case TransportParameterMinAckDelay:
		*minAckUs, p.HasMinAckDelay = v, true
	}
	return nil
}

// tpParseConnectionID parses a connection ID parameter value. Connection IDs
// in version 1 are at most 20 bytes (RFC 9000, Section 17.2); "If a
// zero-length connection ID is selected, the corresponding transport
// parameter is included with a zero-length value" (Section 7.3).
func tpParseConnectionID(id TransportParameterID, val []byte) (ConnectionID, error) {
	if len(val) > MaxConnectionIDLen {
		return ConnectionID{}, tpError(id.String() + " longer than 20 bytes")
	}
	return NewConnectionID(val), nil
}

// tpParseVersionInformation parses a version_information value
// (RFC 9368, Section 3) and applies the parsing-failure rules of Section 4:
// "If that leads to a parsing failure (for example, if it is too short or if
// its length is not divisible by four), then the endpoint MUST close the
// connection; if the connection was using QUIC version 1, that connection
// closure MUST use a transport error of type TRANSPORT_PARAMETER_ERROR."
func tpParseVersionInformation(val []byte, sender Role) (VersionInformation, error) {
	if len(val) < 4 || len(val)%4 != 0 {
		return VersionInformation{}, tpError("version_information length is not a positive multiple of 4")
	}
	// "If an endpoint receives a Chosen Version equal to zero, or any
	// Available Version equal to zero, it MUST treat it as a parsing
	// failure." RFC 9368, Section 4
	vi := VersionInformation{ChosenVersion: Version(binary.BigEndian.Uint32(val))}
	if vi.ChosenVersion == 0 {
		return VersionInformation{}, tpError("version_information chosen version is 0")
	}
	chosenListed := false
	for i := 4; i < len(val); i += 4 {
		v := Version(binary.BigEndian.Uint32(val[i:]))
		if v == 0 {
			return VersionInformation{}, tpError("version_information available version is 0")
		}
		chosenListed = chosenListed || v == vi.ChosenVersion
	}
	// "If a server receives Version Information where the Chosen Version is
	// not included in Available Versions, it MUST treat it as a parsing
	// failure." RFC 9368, Section 4. A server's own list need not include
	// its Chosen Version and "MAY be empty" (Section 3).
	if sender == RoleClient && !chosenListed {
		return VersionInformation{}, tpError("version_information from client does not list its chosen version")
	}
	if len(val) > 4 {
		vi.AvailableVersions = make([]Version, 0, (len(val)-4)/4)
		for i := 4; i < len(val); i += 4 {
			vi.AvailableVersions = append(vi.AvailableVersions, Version(binary.BigEndian.Uint32(val[i:])))
		}
	}
	return vi, nil
}

// tpCheckUnknownDuplicates reports a TRANSPORT_PARAMETER_ERROR if b, which
// ParseTransportParameters has already walked successfully, holds any
// parameter unknown to this package more than once (RFC 9000, Section 7.4
// applies to every parameter). The IDs are sorted in a stack array bounded
// by tpMaxParameters, so the check is O(n log n) and does not allocate; it
// runs only when there are at least two unknown parameters.
func tpCheckUnknownDuplicates(b []byte) error {
	var buf [tpMaxParameters]uint64
	ids := buf[:0]
	for off := 0; off < len(b); {
		id, n := ParseVarint(b[off:])
		off += n
		length, n := ParseVarint(b[off:])
		off += n + int(length)
		if tpKnownIndex(TransportParameterID(id)) < 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return tpError("duplicate transport parameter " + TransportParameterID(ids[i]).String())
		}
	}
	return nil
}

// tpDurationUnits converts d to a whole number of units, rounding up. It
// panics if d is negative.
func tpDurationUnits(d, unit time.Duration) uint64 {
	if d < 0 {
		panic("wire: negative duration in transport parameters")
	}
	u := uint64(d / unit)
	if d%unit != 0 {
		u++
	}
	return u
}

// tpVarintParamLen returns the encoded length of an integer parameter.
func tpVarintParamLen(id TransportParameterID, v uint64) int {
	n := VarintLen(v)
	return VarintLen(uint64(id)) + VarintLen(uint64(n)) + n
}

// tpAppendVarintParam appends an integer parameter.
func tpAppendVarintParam(b []byte, id TransportParameterID, v uint64) []byte {
	b = AppendVarint(b, uint64(id))
	b = AppendVarint(b, uint64(VarintLen(v)))
	return AppendVarint(b, v)
}

// tpBytesParamLen returns the encoded length of a parameter with an n-byte
// value.
func tpBytesParamLen(id TransportParameterID, n int) int {
	return VarintLen(uint64(id)) + VarintLen(uint64(n)) + n
}

// tpAppendBytesParam appends a parameter whose value is v.
func tpAppendBytesParam(b []byte, id TransportParameterID, v []byte) []byte {
	b = AppendVarint(b, uint64(id))
	b = AppendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// Append appends the encoding of p (RFC 9000, Section 18) to b and returns
// the extended slice. It writes each parameter that differs from its default
// or whose Has flag or boolean is set, in ascending order of ID, so the
// output is deterministic; it does not check which role may send what, and
// it writes out-of-range values as they are (a peer rejects them). Durations
// are rounded up to whole milliseconds (microseconds for MinAckDelay).
// Append does not allocate if b has room; it panics on a negative duration
// or an integer of 2^62 or more. Use AppendGreaseParameter to add a reserved
// parameter.
func (p *TransportParameters) Append(b []byte) []byte {
	if p.HasOriginalDestinationConnectionID {
		b = tpAppendBytesParam(b, TransportParameterOriginalDestinationConnectionID, p.OriginalDestinationConnectionID.Bytes())
	}
	if v := tpDurationUnits(p.MaxIdleTimeout, time.Millisecond); v != 0 {
		b = tpAppendVarintParam(b, TransportParameterMaxIdleTimeout, v)
	}
	if p.HasStatelessResetToken {
		b = tpAppendBytesParam(b, TransportParameterStatelessResetToken, p.StatelessResetToken[:])
	}
	if p.MaxUDPPayloadSize != tpDefaultMaxUDPPayloadSize {
		b = tpAppendVarintParam(b, TransportParameterMaxUDPPayloadSize, p.MaxUDPPayloadSize)
	}
	if p.InitialMaxData != 0 {
		b = tpAppendVarintParam(b, TransportParameterInitialMaxData, p.InitialMaxData)
	}
	if p.InitialMaxStreamDataBidiLocal != 0 {
		b = tpAppendVarintParam(b, TransportParameterInitialMaxStreamDataBidiLocal, p.InitialMaxStreamDataBidiLocal)
	}
	if p.InitialMaxStreamDataBidiRemote != 0 {
		b = tpAppendVarintParam(b, TransportParameterInitialMaxStreamDataBidiRemote, p.InitialMaxStreamDataBidiRemote)
	}
	if p.InitialMaxStreamDataUni != 0 {
		b = tpAppendVarintParam(b, TransportParameterInitialMaxStreamDataUni, p.InitialMaxStreamDataUni)
	}
	if p.InitialMaxStreamsBidi != 0 {
		b = tpAppendVarintParam(b, TransportParameterInitialMaxStreamsBidi, p.InitialMaxStreamsBidi)
	}
	if p.InitialMaxStreamsUni != 0 {
		b = tpAppendVarintParam(b, TransportParameterInitialMaxStreamsUni, p.InitialMaxStreamsUni)
	}
	if p.AckDelayExponent != tpDefaultAckDelayExponent {
		b = tpAppendVarintParam(b, TransportParameterAckDelayExponent, uint64(p.AckDelayExponent))
	}
	if v := tpDurationUnits(p.MaxAckDelay, time.Millisecond); v != uint64(tpDefaultMaxAckDelay/time.Millisecond) {
		b = tpAppendVarintParam(b, TransportParameterMaxAckDelay, v)
	}
	if p.DisableActiveMigration {
		b = tpAppendBytesParam(b, TransportParameterDisableActiveMigration, nil)
	}
	if p.HasPreferredAddress {
		b = AppendVarint(b, uint64(TransportParameterPreferredAddress))
		b = AppendVarint(b, uint64(p.PreferredAddress.EncodedLen()))
		b = p.PreferredAddress.Append(b)
	}
	if p.ActiveConnectionIDLimit != tpDefaultActiveConnectionIDLimit {
		b = tpAppendVarintParam(b, TransportParameterActiveConnectionIDLimit, p.ActiveConnectionIDLimit)
	}
	if p.HasInitialSourceConnectionID {
		b = tpAppendBytesParam(b, TransportParameterInitialSourceConnectionID, p.InitialSourceConnectionID.Bytes())
	}
	if p.HasRetrySourceConnectionID {
		b = tpAppendBytesParam(b, TransportParameterRetrySourceConnectionID, p.RetrySourceConnectionID.Bytes())
	}
	if p.HasVersionInformation {
		vi := &p.VersionInformation
		b = AppendVarint(b, uint64(TransportParameterVersionInformation))
		b = AppendVarint(b, uint64(4+4*len(vi.AvailableVersions)))
		b = binary.BigEndian.AppendUint32(b, uint32(vi.ChosenVersion))
		for _, v := range vi.AvailableVersions {
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		}
	}
	if p.ResetStreamAt {
		b = tpAppendBytesParam(b, TransportParameterResetStreamAt, nil)
	}
	if p.MaxDatagramFrameSize != 0 {
		b = tpAppendVarintParam(b, TransportParameterMaxDatagramFrameSize, p.MaxDatagramFrameSize)
	}
	if p.GreaseQUICBit {
		b = tpAppendBytesParam(b, TransportParameterGreaseQUICBit, nil)
	}
	if p.HasMinAckDelay {
		b = tpAppendVarintParam(b, TransportParameterMinAckDelay, tpDurationUnits(p.MinAckDelay, time.Microsecond))
	}
	return b
}

// EncodedLen returns the number of bytes Append writes.
func (p *TransportParameters) EncodedLen() int {
	n := 0
	if p.HasOriginalDestinationConnectionID {
		n += tpBytesParamLen(TransportParameterOriginalDestinationConnectionID, p.OriginalDestinationConnectionID.Len())
	}
	if v := tpDurationUnits(p.MaxIdleTimeout, time.Millisecond); v != 0 {
		n += tpVarintParamLen(TransportParameterMaxIdleTimeout, v)
	}
	if p.HasStatelessResetToken {
		n += tpBytesParamLen(TransportParameterStatelessResetToken, StatelessResetTokenLen)
	}
	if p.MaxUDPPayloadSize != tpDefaultMaxUDPPayloadSize {
		n += tpVarintParamLen(TransportParameterMaxUDPPayloadSize, p.MaxUDPPayloadSize)
	}
	if p.InitialMaxData != 0 {
		n += tpVarintParamLen(TransportParameterInitialMaxData, p.InitialMaxData)
	}
	if p.InitialMaxStreamDataBidiLocal != 0 {
		n += tpVarintParamLen(TransportParameterInitialMaxStreamDataBidiLocal, p.InitialMaxStreamDataBidiLocal)
	}
	if p.InitialMaxStreamDataBidiRemote != 0 {
		n += tpVarintParamLen(TransportParameterInitialMaxStreamDataBidiRemote, p.InitialMaxStreamDataBidiRemote)
	}
	if p.InitialMaxStreamDataUni != 0 {
		n += tpVarintParamLen(TransportParameterInitialMaxStreamDataUni, p.InitialMaxStreamDataUni)
	}
	if p.InitialMaxStreamsBidi != 0 {
		n += tpVarintParamLen(TransportParameterInitialMaxStreamsBidi, p.InitialMaxStreamsBidi)
	}
	if p.InitialMaxStreamsUni != 0 {
		n += tpVarintParamLen(TransportParameterInitialMaxStreamsUni, p.InitialMaxStreamsUni)
	}
	if p.AckDelayExponent != tpDefaultAckDelayExponent {
		n += tpVarintParamLen(TransportParameterAckDelayExponent, uint64(p.AckDelayExponent))
	}
	if v := tpDurationUnits(p.MaxAckDelay, time.Millisecond); v != uint64(tpDefaultMaxAckDelay/time.Millisecond) {
		n += tpVarintParamLen(TransportParameterMaxAckDelay, v)
	}
	if p.DisableActiveMigration {
		n += tpBytesParamLen(TransportParameterDisableActiveMigration, 0)
	}
	if p.HasPreferredAddress {
		n += tpBytesParamLen(TransportParameterPreferredAddress, p.PreferredAddress.EncodedLen())
	}
	if p.ActiveConnectionIDLimit != tpDefaultActiveConnectionIDLimit {
		n += tpVarintParamLen(TransportParameterActiveConnectionIDLimit, p.ActiveConnectionIDLimit)
	}
	if p.HasInitialSourceConnectionID {
		n += tpBytesParamLen(TransportParameterInitialSourceConnectionID, p.InitialSourceConnectionID.Len())
	}
	if p.HasRetrySourceConnectionID {
		n += tpBytesParamLen(TransportParameterRetrySourceConnectionID, p.RetrySourceConnectionID.Len())
	}
	if p.HasVersionInformation {
		n += tpBytesParamLen(TransportParameterVersionInformation, 4+4*len(p.VersionInformation.AvailableVersions))
	}
	if p.ResetStreamAt {
		n += tpBytesParamLen(TransportParameterResetStreamAt, 0)
	}
	if p.MaxDatagramFrameSize != 0 {
		n += tpVarintParamLen(TransportParameterMaxDatagramFrameSize, p.MaxDatagramFrameSize)
	}
	if p.GreaseQUICBit {
		n += tpBytesParamLen(TransportParameterGreaseQUICBit, 0)
	}
	if p.HasMinAckDelay {
		n += tpVarintParamLen(TransportParameterMinAckDelay, tpDurationUnits(p.MinAckDelay, time.Microsecond))
	}
	return n
}
