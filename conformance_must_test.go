package quic

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// The MUSTs of RFC 9000, Sections 4.5, 4.6, 7.4.1, 10.1 and 17.2, and of
// RFC 9001, Sections 4.1.3, 4.6.1, 4.9.3 and 6, each with the tests that
// check it (package-qualified outside the root package). Requirements
// that hold by construction, or that bind documents rather than
// implementations, say so in note; they still name the tests closest to
// them. TestConformanceMustTable checks that every test named exists, so
// the table follows renames. Section 10.1 has a single MUST; its other
// rules, which the issue asked about, are listed too (SHOULD-free
// statements of behaviour).
var mustTable = []struct {
	section, must string
	tests         []string
	note          string
}{
	// RFC 9000, Section 4.5: Stream Final Size.
	{"RFC 9000, 4.5", "The receiver MUST use the final size of the stream to account for all bytes sent on the stream in its connection-level flow controller.",
		[]string{"flowcontrol.TestStreamReceiverResetAccounting", "flowcontrol.TestStreamReceiverFinalSize"}, ""},
	{"RFC 9000, 4.5", "An endpoint MUST NOT send data on a stream at or beyond the final size.",
		[]string{"FuzzSendBuffer", "TestSendBufferFIN", "TestSendBufferReset"}, ""},

	// RFC 9000, Section 4.6: Controlling Concurrency.
	{"RFC 9000, 4.6", "If a max_streams transport parameter or a MAX_STREAMS frame is received with a value greater than 2^60, ... the connection MUST be closed immediately with a connection error of type TRANSPORT_PARAMETER_ERROR if the offending value was received in a transport parameter or of type FRAME_ENCODING_ERROR if it was received in a frame.",
		[]string{"wire.TestParseTransportParametersErrors", "wire.TestMaxStreamsFrame"}, ""},
	{"RFC 9000, 4.6", "Endpoints MUST NOT exceed the limit set by their peer.",
		[]string{"TestSimManyStreamsThroughLimit", "TestSim0RTTRejectedStreamsBeyondLimit", "TestSim0RTTUnderRememberedLimits"}, ""},
	{"RFC 9000, 4.6", "An endpoint that receives a frame with a stream ID exceeding the limit it has sent MUST treat this as a connection error of type STREAM_LIMIT_ERROR.",
		[]string{"TestHostileStreamBeyondLimit"}, ""},
	{"RFC 9000, 4.6", "MAX_STREAMS frames that do not increase the stream limit MUST be ignored.",
		[]string{"TestSimMaxStreamsNotIncreasingIgnored", "TestSimMaxStreamsAfterRaiseNotLowered"}, ""},
	{"RFC 9000, 4.6", "An endpoint MUST NOT wait to receive this signal [STREAMS_BLOCKED] before advertising additional credit.",
		[]string{"TestSimManyStreamsThroughLimit"}, "MAX_STREAMS follows closed streams (streamsMap.retire, maxStreamsDue)"},

	// RFC 9000, Section 7.4.1: Values of Transport Parameters for 0-RTT.
	{"RFC 9000, 7.4.1", "The definition of a new transport parameter (Section 7.4.2) MUST specify whether storing the transport parameter for 0-RTT is mandatory, optional, or prohibited.",
		[]string{"handshake.TestRememberedParamsKeepAllOthers"},
		"binds specifications; for the extensions implemented, handshake.RememberedParams documents what is stored (max_datagram_frame_size, grease_quic_bit, reset_stream_at) and what not (min_ack_delay, version_information)"},
	{"RFC 9000, 7.4.1", "A client MUST NOT use remembered values for the following parameters: ack_delay_exponent, max_ack_delay, initial_source_connection_id, original_destination_connection_id, preferred_address, retry_source_connection_id, and stateless_reset_token.",
		[]string{"handshake.TestRememberedParamsKeepAllOthers"}, ""},
	{"RFC 9000, 7.4.1", "The client MUST use the server's new values in the handshake instead; if the server does not provide new values, the default values are used.",
		[]string{"TestSim0RTTUnderRememberedLimits"}, ""},
	{"RFC 9000, 7.4.1", "A client that attempts to send 0-RTT data MUST remember all other transport parameters used by the server that it is able to process.",
		[]string{"handshake.TestRememberedParamsKeepAllOthers", "TestSim0RTTRememberedDatagramSizeAndIdle", "TestSim0RTTUnderRememberedLimits"}, ""},
	{"RFC 9000, 7.4.1", "If 0-RTT data is accepted by the server, the server MUST NOT reduce any limits or alter any values that might be violated by the client with its 0-RTT data.",
		[]string{"TestSim0RTTRejected", "handshake.TestHandshakeEarlyDataRejectedAfterLimitLowered", "handshake.TestRememberedParamsEncoding"},
		"the server rejects 0-RTT instead (handshake.RememberedParams.AllowsEarlyDataUnder)"},
	{"RFC 9000, 7.4.1", "In particular, a server that accepts 0-RTT data MUST NOT set values for the following parameters (Section 18.2) that are smaller than the remembered values of the parameters: active_connection_id_limit, initial_max_data, initial_max_stream_data_bidi_local, initial_max_stream_data_bidi_remote, initial_max_stream_data_uni, initial_max_streams_bidi, initial_max_streams_uni.",
		[]string{"handshake.TestRememberedParamsEncoding", "handshake.TestHandshakeEarlyDataRejectedAfterLimitLowered", "TestSim0RTTRejected", "TestSim0RTTRejectedStreamsBeyondLimit"}, ""},
	{"RFC 9000, 7.4.1", "A server MUST reject 0-RTT data if the restored values for transport parameters cannot be supported.",
		[]string{"TestSim0RTTRejected", "TestSim0RTTRejectedStreamsBeyondLimit", "handshake.TestRememberedParamsKeepAllOthers"}, ""},
	{"RFC 9000, 7.4.1", "When sending frames in 0-RTT packets, a client MUST only use remembered transport parameters; importantly, it MUST NOT use updated values that it learns from the server's updated transport parameters or from frames received in 1-RTT packets.",
		[]string{"TestSim0RTTUnderRememberedLimits", "TestSim0RTTRememberedDatagramSizeAndIdle"},
		"1-RTT packets are read only once the 1-RTT keys arrive, as the handshake completes and 0-RTT ends (connState.end0RTT)"},

	// RFC 9000, Section 10.1: Idle Timeout.
	{"RFC 9000, 10.1", "To avoid excessively small idle timeout periods, endpoints MUST increase the idle timeout period to be at least three times the current Probe Timeout (PTO).",
		[]string{"TestSimIdleTimeoutAtLeastThreePTO"}, ""},
	{"RFC 9000, 10.1", "(behaviour) The connection is silently closed when it remains idle for longer than the minimum of the max_idle_timeout value advertised by both endpoints.",
		[]string{"TestSimIdleTimeout", "TestSimIdleTimeoutMinimumOfBoth"}, ""},
	{"RFC 9000, 10.1", "(behaviour) An endpoint restarts its idle timer when a packet from its peer is received and processed successfully.",
		[]string{"TestSimKeepAlive", "TestSimIdleTimerNotRestartedBySendsAlone"}, ""},
	{"RFC 9000, 10.1", "(behaviour) An endpoint also restarts its idle timer when sending an ack-eliciting packet if no other ack-eliciting packets have been sent since last receiving and processing a packet.",
		[]string{"TestSimIdleTimerRestartsOnSend", "TestSimIdleTimerNotRestartedBySendsAlone"}, ""},

	// RFC 9000, Section 17.2: Long Header Packets (with 17.2.1 to 17.2.5).
	{"RFC 9000, 17.2", "Packets containing a zero value for this bit [the Fixed Bit] are not valid packets in this version and MUST be discarded.",
		[]string{"TestSimFixedBitZeroDiscarded"}, ""},
	{"RFC 9000, 17.2", "In QUIC version 1, this value [the connection ID lengths] MUST NOT exceed 20 bytes.",
		[]string{"TestRandomConnectionIDGeneratorLengths", "wire.TestLongHeaderAppendPanics"}, ""},
	{"RFC 9000, 17.2", "Endpoints that receive a version 1 long header with a value larger than 20 MUST drop the packet.",
		[]string{"wire.TestLongHeaderErrors"}, "the connection drops packets its parsers reject (processDatagram, handleLongHeaderPacket)"},
	{"RFC 9000, 17.2", "The value included prior to protection MUST be set to 0 [the Reserved Bits].",
		[]string{"wire.TestFirstByteHelpers", "wire.TestLongHeaderRoundTrip"}, ""},
	{"RFC 9000, 17.2", "An endpoint MUST treat receipt of a packet that has a non-zero value for these bits after removing both packet and header protection as a connection error of type PROTOCOL_VIOLATION.",
		[]string{"TestSimReservedBitsProtocolViolation", "wire.TestFirstByteHelpers"}, ""},
	{"RFC 9000, 17.2.1", "Clients MUST ignore the value of this field [Unused, of Version Negotiation].",
		[]string{"wire.TestVersionNegotiationRoundTrip", "TestSimVersionNegotiation"}, ""},
	{"RFC 9000, 17.2.1", "The Version field of a Version Negotiation packet MUST be set to 0x00000000.",
		[]string{"wire.TestVersionNegotiationHex"}, ""},
	{"RFC 9000, 17.2.1", "The server MUST include the value from the Source Connection ID field of the packet it receives in the Destination Connection ID field.",
		[]string{"TestUDPDialUnsupportedVersion"}, "the client there accepts only a Version Negotiation packet that echoes both connection IDs"},
	{"RFC 9000, 17.2.1", "The value for Source Connection ID MUST be copied from the Destination Connection ID of the received packet, which is initially randomly selected by a client.",
		[]string{"TestUDPDialUnsupportedVersion"}, ""},
	{"RFC 9000, 17.2.1", "Version-specific rules for the connection ID therefore MUST NOT influence a decision about whether to send a Version Negotiation packet.",
		[]string{"wire.TestParseInvariantHeader", "wire.TestLongHeaderErrors"},
		"the Transport decides from the invariant header (wire.ParseInvariantHeader: connection IDs up to 255 bytes) and the version alone"},
	{"RFC 9000, 17.2.1", "A server MUST NOT send more than one Version Negotiation packet in response to a single UDP datagram.",
		[]string{"TestUDPTransportStats"}, "by construction: Transport.handleDatagram answers a datagram at most once, from its first packet"},
	{"RFC 9000, 17.2.2", "Initial packets sent by the server MUST set the Token Length field to 0; clients that receive an Initial packet with a non-zero Token Length field MUST either discard the packet or generate a connection error of type PROTOCOL_VIOLATION.",
		[]string{"TestSimClientDiscardsServerInitialWithToken"}, ""},
	{"RFC 9000, 17.2.3", "New packet numbers MUST be used for any new packets that are sent.",
		[]string{"ackhandler.TestOnPacketSentPanicsOnNonIncreasingPacketNumber", "TestClientFollowsRetry"}, ""},
	{"RFC 9000, 17.2.3", "A client MUST NOT send 0-RTT packets once it starts processing 1-RTT packets from the server.",
		[]string{"TestSim0RTTUnderRememberedLimits"}, ""},
	{"RFC 9000, 17.2.3", "An acknowledgment for a 1-RTT packet MUST be carried in a 1-RTT packet.",
		[]string{"wire.TestFrameAllowedIn"},
		"by construction: ACK frames of the application space go in 1-RTT packets only (appendPacket; ACK is not allowed in 0-RTT), and a client reads 1-RTT packets only once it no longer sends 0-RTT"},
	{"RFC 9000, 17.2.4", "Endpoints MUST treat receipt of Handshake packets with other frames as a connection error of type PROTOCOL_VIOLATION.",
		[]string{"TestSimFrameNotAllowedInHandshake", "wire.TestFrameAllowedIn"}, ""},
	{"RFC 9000, 17.2.5", "The value in the Unused field is set to an arbitrary value by the server; a client MUST ignore these bits.",
		[]string{"wire.TestRetryErrors"}, ""},
	{"RFC 9000, 17.2.5", "This value [the Retry's Source Connection ID] MUST NOT be equal to the Destination Connection ID field of the packet sent by the client.",
		[]string{"TestUDPRetry"}, "by construction: Listener.sendRetry takes a new connection ID from the generator"},
	{"RFC 9000, 17.2.5", "A client MUST discard a Retry packet that contains a Source Connection ID field that is identical to the Destination Connection ID field of its Initial packet.",
		[]string{"TestClientRetryChecks"}, ""},
	{"RFC 9000, 17.2.5", "The client MUST use the value from the Source Connection ID field of the Retry packet in the Destination Connection ID field of subsequent packets that it sends.",
		[]string{"TestClientFollowsRetry", "TestSimRetryLost"}, ""},
	{"RFC 9000, 17.2.5", "A server MUST NOT send more than one Retry packet in response to a single UDP datagram.",
		[]string{"TestUDPRetry"}, "by construction: Listener.handleNewConnection answers a datagram at most once"},
	{"RFC 9000, 17.2.5.2", "A client MUST accept and process at most one Retry packet for each connection attempt.",
		[]string{"TestClientFollowsRetry"}, ""},
	{"RFC 9000, 17.2.5.2", "After the client has received and processed an Initial or Retry packet from the server, it MUST discard any subsequent Retry packets that it receives.",
		[]string{"TestClientFollowsRetry", "TestClientRetryChecks"}, ""},
	{"RFC 9000, 17.2.5.2", "Clients MUST discard Retry packets that have a Retry Integrity Tag that cannot be validated.",
		[]string{"TestClientFollowsRetry", "handshake.TestRetryRejects"}, ""},
	{"RFC 9000, 17.2.5.2", "A client MUST discard a Retry packet with a zero-length Retry Token field.",
		[]string{"wire.TestRetryErrors"}, ""},
	{"RFC 9000, 17.2.5.2", "The client MUST NOT change the Source Connection ID because the server could include the connection ID as part of its token validation logic.",
		[]string{"TestClientRetryChecks"}, ""},
	{"RFC 9000, 17.2.5.3", "A client MUST use the same cryptographic handshake message it included in this packet.",
		[]string{"TestClientRetryChecks"}, ""},
	{"RFC 9000, 17.2.5.3", "A client MUST NOT reset the packet number for any packet number space after processing a Retry packet.",
		[]string{"TestClientFollowsRetry", "TestSimRetryLost"}, ""},

	// RFC 9001, Section 4.1.3: Sending and Receiving Handshake Messages.
	{"RFC 9001, 4.1.3", "If the packet is from a previously installed encryption level, it MUST NOT contain data that extends past the end of previously received data in that flow.",
		[]string{"TestSimCryptoDataAtPreviousLevel"}, ""},
	{"RFC 9001, 4.1.3", "Implementations MUST treat any violations of this requirement as a connection error of type PROTOCOL_VIOLATION.",
		[]string{"TestSimCryptoDataAtPreviousLevel", "handshake.TestCryptoErrorsOfPreviousLevel"}, ""},
	{"RFC 9001, 4.1.3", "When TLS provides keys for a higher encryption level, if there is data from a previous encryption level that TLS has not consumed, this MUST be treated as a connection error of type PROTOCOL_VIOLATION.",
		[]string{"TestSimCryptoDataLeftAtPreviousLevel", "handshake.TestCryptoErrorsOfPreviousLevel"}, ""},

	// RFC 9001, Section 4.6.1: Enabling 0-RTT.
	{"RFC 9001, 4.6.1", "Servers MUST NOT send the early_data extension with a max_early_data_size field set to any value other than 0xffffffff.",
		[]string{"TestSimServerTicketEarlyDataSentinel"}, ""},
	{"RFC 9001, 4.6.1", "A client MUST treat receipt of a NewSessionTicket that contains an early_data extension with any other value as a connection error of type PROTOCOL_VIOLATION.",
		[]string{"TestSimNewSessionTicketMaxEarlyDataSize", "TestSimPostHandshakeMessageSplit"}, ""},

	// RFC 9001, Section 4.9.3: Discarding 0-RTT Keys.
	{"RFC 9001, 4.9.3", "After receiving a 1-RTT packet, servers MUST discard 0-RTT keys within a short time; the RECOMMENDED time period is three times the Probe Timeout (PTO).",
		[]string{"TestSimServerDiscards0RTTKeys", "TestSimServerReads0RTTReorderedBehind1RTT"}, ""},

	// RFC 9001, Section 6: Key Update (with 6.1 to 6.6).
	{"RFC 9001, 6", "Endpoints MUST NOT send a TLS KeyUpdate message.",
		[]string{"TestSimKeyUpdateDuringTransfer"},
		"by construction: crypto/tls's QUIC API cannot send one (QUICConn has no key update), and key updates use the Key Phase bit (handshake.OneRTTKeys)"},
	{"RFC 9001, 6", "Endpoints MUST treat the receipt of a TLS KeyUpdate message as a connection error of type 0x010a, equivalent to a fatal TLS alert of unexpected_message.",
		[]string{"TestSimTLSKeyUpdateMessage"}, ""},
	{"RFC 9001, 6.1", "An endpoint MUST NOT initiate a key update prior to having confirmed the handshake.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed"}, ""},
	{"RFC 9001, 6.1", "An endpoint MUST NOT initiate a subsequent key update unless it has received an acknowledgment for a packet that was sent protected with keys from the current key phase.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed"}, ""},
	{"RFC 9001, 6.1", "An endpoint MUST retain old keys until it has successfully unprotected a packet sent using the new keys.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed", "TestSimKeyUpdateReordering"}, ""},
	{"RFC 9001, 6.2", "The endpoint MUST update its send keys to the corresponding key phase in response.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed", "TestSimKeyUpdateDuringTransfer", "TestSimServerInitiatedKeyUpdate"}, ""},
	{"RFC 9001, 6.2", "Sending keys MUST be updated before sending an acknowledgment for the packet that was received with updated keys.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed"}, "by construction: OneRTTKeys.Open switches the write keys when it opens the packet"},
	{"RFC 9001, 6.3", "Endpoints responding to an apparent key update MUST NOT generate a timing side-channel signal that might indicate that the Key Phase bit was invalid.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed"},
		"by construction: the next read keys are derived in advance (OneRTTKeys.next), so a packet of the other phase costs one AEAD attempt like any other"},
	{"RFC 9001, 6.3", "For this reason, endpoints MUST be able to retain two sets of packet protection keys for receiving packets: the current and the next.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed", "handshake.TestOneRTTKeysRelease"}, ""},
	{"RFC 9001, 6.4", "Packets with higher packet numbers MUST be protected with either the same or newer packet protection keys than packets with lower packet numbers.",
		[]string{"handshake.TestKeyUpdateInitiatedAndFollowed"}, "by construction: the write phase only moves forward (OneRTTKeys.Seal)"},
	{"RFC 9001, 6.4", "An endpoint that successfully removes protection with old keys when newer keys were used for packets with lower packet numbers MUST treat this as a connection error of type KEY_UPDATE_ERROR.",
		[]string{"handshake.TestOldKeysOnlyBelowNewPhase"},
		"old keys are tried only for packet numbers below the first of the current phase (OneRTTKeys.Open), so such a packet never opens: it fails authentication"},
	{"RFC 9001, 6.6", "Endpoints MUST count the number of encrypted packets for each set of keys.",
		[]string{"handshake.TestConfidentialityLimit"}, ""},
	{"RFC 9001, 6.6", "If the total number of encrypted packets with the same key exceeds the confidentiality limit for the selected AEAD, the endpoint MUST stop using those keys.",
		[]string{"handshake.TestConfidentialityLimit"}, ""},
	{"RFC 9001, 6.6", "Endpoints MUST initiate a key update before sending more protected packets than the confidentiality limit for the selected AEAD permits.",
		[]string{"handshake.TestConfidentialityLimit"}, ""},
	{"RFC 9001, 6.6", "If a key update is not possible or integrity limits are reached, the endpoint MUST stop using the connection and only send stateless resets in response to receiving packets.",
		[]string{"handshake.TestConfidentialityLimit", "handshake.TestIntegrityLimit", "TestSimIntegrityLimitAcrossKeys"},
		"it closes with AEAD_LIMIT_REACHED, as the RFC recommends, and answers in the closing state"},
	{"RFC 9001, 6.6", "In addition to counting packets sent, endpoints MUST count the number of received packets that fail authentication during the lifetime of a connection.",
		[]string{"handshake.TestIntegrityLimit", "TestSimIntegrityLimitAcrossKeys"}, ""},
	{"RFC 9001, 6.6", "If the total number of received packets that fail authentication within the connection, across all keys, exceeds the integrity limit for the selected AEAD, the endpoint MUST immediately close the connection with a connection error of type AEAD_LIMIT_REACHED and not process any more packets.",
		[]string{"TestSimIntegrityLimitAcrossKeys", "handshake.TestIntegrityLimit"}, ""},
	{"RFC 9001, 6.6", "Any TLS cipher suite that is specified for use with QUIC MUST define limits on the use of the associated AEAD function that preserves margins for confidentiality and integrity.",
		[]string{"handshake.TestAEADLimits"}, "binds specifications; the limits of the three suites are handshake.ConfidentialityLimit and handshake.IntegrityLimit"},
	{"RFC 9001, 6.6", "That is, limits MUST be specified for the number of packets that can be authenticated and for the number of packets that can fail authentication.",
		[]string{"handshake.TestAEADLimits"}, "binds specifications"},
}

// TestConformanceMustTable checks that every test mustTable names is
// declared in its package's test files.
func TestConformanceMustTable(t *testing.T) {
	declared := map[string]bool{}
	for _, dir := range []string{".", "ackhandler", "congestion", "flowcontrol", "handshake", "wire"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		prefix := ""
		if dir != "." {
			prefix = dir + "."
		}
		for _, name := range files {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
					declared[prefix+fn.Name.Name] = true
				}
			}
		}
	}
	for _, e := range mustTable {
		if len(e.tests) == 0 {
			t.Errorf("%s: no test for %q", e.section, e.must)
		}
		for _, name := range e.tests {
			if !declared[name] || !(strings.Contains(name, "Test") || strings.Contains(name, "Fuzz")) {
				t.Errorf("%s: %q names %s, which does not exist", e.section, e.must, name)
			}
		}
	}
}

// RFC 9000, Section 17.2: "An endpoint MUST treat receipt of a packet that
// has a non-zero value for these bits [the Reserved Bits] after removing
// both packet and header protection as a connection error of type
// PROTOCOL_VIOLATION"; Section 17.3.1 says the same of short headers.
func TestSimReservedBitsProtocolViolation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		space ackhandler.Space
		bits  byte
	}{
		{"Handshake", ackhandler.SpaceHandshake, 0x0c},
		{"1-RTT", ackhandler.SpaceApplication, 0x18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newSimPair(t, testLink, nil, 170)
			if tc.space == ackhandler.SpaceHandshake {
				runUntilClientHasHandshakeKeys(t, p)
			} else {
				p.connect(t)
			}
			c, s := p.client.c, p.server.c
			pt, _ := s.packetTypeFor(tc.space)
			pn, pnLen := s.sent.NextPacketNumber(tc.space)
			var b []byte
			if pt == wire.PacketType1RTT {
				h := wire.ShortHeader{DstConnID: s.peerIDs.active(), KeyPhase: s.oneRTT.KeyPhase() == 1}
				b = h.Append(make([]byte, 0, 1500), pn, pnLen)
			} else {
				h := wire.LongHeader{Type: pt, Version: s.version, DstConnID: s.peerIDs.active(), SrcConnID: s.localConnID}
				b = h.Append(make([]byte, 0, 1500), pn, pnLen)
			}
			b[0] |= tc.bits // under header protection
			pnOff := len(b) - pnLen
			b = append(b, byte(wire.FrameTypePing), 0, 0, 0, 0)
			d := s.sealPacket(p.sim.Now(), b, 0, pnOff, pnLen, pn, tc.space, pt, false, false)
			c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
			p.client.dropIn = nil
			checkCloseErrors(t, p, wire.RoleClient,
				&TransportError{Code: wire.ProtocolViolation},
				&TransportError{Code: wire.ProtocolViolation, Remote: true})
		})
	}
}

// RFC 9000, Section 17.2.4: "Endpoints MUST treat receipt of Handshake
// packets with other frames [than CRYPTO, ACK, PING, PADDING and
// CONNECTION_CLOSE] as a connection error of type PROTOCOL_VIOLATION."
func TestSimFrameNotAllowedInHandshake(t *testing.T) {
	p := newSimPair(t, testLink, nil, 171)
	runUntilClientHasHandshakeKeys(t, p)
	c, s := p.client.c, p.server.c
	frame := wire.StreamFrame{StreamID: 1, Data: []byte("x"), HasLength: true}.Append(nil)
	d, _ := sealLongTestPacket(s, p.sim.Now(), ackhandler.SpaceHandshake, s.localConnID, nil, frame)
	c.handleDatagram(p.sim.Now(), d, ackhandler.NotECT)
	checkCloseErrors(t, p, wire.RoleClient,
		&TransportError{Code: wire.ProtocolViolation},
		&TransportError{Code: wire.ProtocolViolation, Remote: true})
}

// clientHello polls all the Initial packets client c has to send now and
// returns the CRYPTO data they carry, with the header of the first; their
// keys derive from dcid.
func clientHello(t *testing.T, c *connState, now time.Time, dcid wire.ConnectionID) (wire.LongHeader, []byte) {
	t.Helper()
	var first wire.LongHeader
	var hello []byte
	for i := 0; ; i++ {
		d := c.pollTransmit(now, make([]byte, 0, 1500))
		if d == nil {
			break
		}
		hdr, crypto := initialCrypto(t, d, dcid, len(hello))
		if i == 0 {
			first = hdr
		}
		hello = append(hello, crypto...)
	}
	return first, hello
}

// initialCrypto returns the CRYPTO data of the client Initial that starts
// datagram d, whose keys derive from dcid, with its header; the data must
// continue at offset off.
func initialCrypto(t *testing.T, d []byte, dcid wire.ConnectionID, off int) (wire.LongHeader, []byte) {
	t.Helper()
	pkt, _, err := wire.NextPacket(append([]byte(nil), d...), 8)
	if err != nil {
		t.Fatal(err)
	}
	hdr, pnOff, err := wire.ParseLongHeader(pkt)
	if err != nil {
		t.Fatal(err)
	}
	_, open := handshake.NewInitialKeys(hdr.Version, dcid.Bytes(), false)
	pnLen, err := open.RemoveHeaderProtection(pkt, pnOff)
	if err != nil {
		t.Fatal(err)
	}
	trunc, _ := wire.ParseTruncatedPacketNumber(pkt[pnOff:], pnLen)
	payload, err := open.Open(pkt, pnOff, pnLen, wire.DecodePacketNumber(wire.InvalidPacketNumber, trunc, pnLen))
	if err != nil {
		t.Fatal(err)
	}
	var crypto []byte
	var f wire.Frame
	for len(payload) > 0 {
		n, err := wire.ParseFrame(payload, &f, 0)
		if err != nil {
			t.Fatal(err)
		}
		payload = payload[n:]
		if f.Type == wire.FrameTypeCrypto {
			if int(f.Crypto.Offset) != off+len(crypto) {
				t.Fatalf("CRYPTO data at %d after %d bytes", f.Crypto.Offset, off+len(crypto))
			}
			crypto = append(crypto, f.Crypto.Data...)
		}
	}
	return hdr, crypto
}

// RFC 9000, Section 17.2.5: "A client MUST discard a Retry packet that
// contains a Source Connection ID field that is identical to the
// Destination Connection ID field of its Initial packet." Section
// 17.2.5.2: "The client MUST NOT change the Source Connection ID" and,
// "After the client has received and processed an Initial or Retry packet
// from the server, it MUST discard any subsequent Retry packets". Section
// 17.2.5.3: "A client MUST use the same cryptographic handshake message it
// included in this packet."
func TestClientRetryChecks(t *testing.T) {
	p := newSimPair(t, testLink, nil, 172)
	c := p.client.c
	now := p.sim.Now()
	odcid := c.origDstConnID
	hdr1, hello1 := clientHello(t, c, now, odcid)
	token := []byte("retry-token")
	c.handleDatagram(now, makeRetry(wire.Version1, c.localConnID, odcid, odcid, token), 0)
	if c.hasRetried {
		t.Fatal("followed a Retry whose Source Connection ID is the client's Destination Connection ID")
	}
	newID := wire.NewConnectionID([]byte{9, 9, 9, 9, 9, 9, 9, 9})
	c.handleDatagram(now, makeRetry(wire.Version1, c.localConnID, odcid, newID, token), 0)
	if !c.hasRetried {
		t.Fatal("valid Retry ignored")
	}
	hdr2, hello2 := clientHello(t, c, now, newID)
	if hdr2.SrcConnID != hdr1.SrcConnID {
		t.Errorf("Source Connection ID %v after the Retry, %v before", hdr2.SrcConnID, hdr1.SrcConnID)
	}
	if len(hello1) == 0 || !bytes.Equal(hello1, hello2) {
		t.Errorf("ClientHello of %d bytes after the Retry differs from the %d bytes before", len(hello2), len(hello1))
	}

	// A client that processed the server's Initial ignores a Retry.
	p = newSimPair(t, testLink, nil, 173)
	p.run(t, 5*time.Second, func() bool { return p.client.c.receivedInitial() })
	c = p.client.c
	c.handleDatagram(p.sim.Now(), makeRetry(wire.Version1, c.localConnID, c.origDstConnID, newID, token), 0)
	if c.hasRetried || c.closeState != stateActive {
		t.Fatalf("Retry after the server's Initial: followed %v, state %v", c.hasRetried, c.closeState)
	}
	p.connect(t)
}

// RFC 9001, Section 4.6.1: "Servers MUST NOT send the early_data extension
// with a max_early_data_size field set to any value other than
// 0xffffffff. ... To indicate that the server does not accept 0-RTT data,
// the early_data extension is omitted from the NewSessionTicket."
func TestSimServerTicketEarlyDataSentinel(t *testing.T) {
	for _, allow := range []bool{true, false} {
		ctls, stls, cache := resumeTLS(t)
		p := newSimPairOpts(t, testLink, 174, simPairOpts{server: &Config{Allow0RTT: allow}, ctls: ctls, stls: stls})
		var ticket []byte
		p.client.c.onFrame = func(space ackhandler.Space, f *wire.Frame) {
			if space == ackhandler.SpaceApplication && f.Type == wire.FrameTypeCrypto && f.Crypto.Offset == 0 {
				ticket = append([]byte(nil), f.Crypto.Data...)
			}
		}
		p.run(t, 5*time.Second, func() bool { return p.confirmed() && cache.stored() > 0 })
		if len(ticket) < 4 || ticket[0] != tlsNewSessionTicket || len(ticket) < 4+tlsMessageLen(ticket) {
			t.Fatalf("Allow0RTT %v: no whole NewSessionTicket in the first CRYPTO frame: %x", allow, ticket)
		}
		v, ok := ticketMaxEarlyData(ticket[4 : 4+tlsMessageLen(ticket)])
		if ok != allow || (allow && v != 0xffffffff) {
			t.Errorf("Allow0RTT %v: early_data extension present %v, max_early_data_size %#x", allow, ok, v)
		}
	}
}

// RFC 9000, Section 4.6: "Once a receiver advertises a stream limit using
// the MAX_STREAMS frame, advertising a smaller limit has no effect.
// MAX_STREAMS frames that do not increase the stream limit MUST be
// ignored."
func TestSimMaxStreamsAfterRaiseNotLowered(t *testing.T) {
	p := newSimPair(t, testLink, &Config{MaxIncomingStreams: 10}, 175)
	p.connect(t)
	c := p.client.c
	raise := wire.MaxStreamsFrame{Bidi: true, MaximumStreams: 20}.Append(nil)
	p.injectFrames(p.server, ackhandler.SpaceApplication, raise)
	p.run(t, time.Second, func() bool { return c.streams.peerMaxBidi == 20 })
	lower := wire.MaxStreamsFrame{Bidi: true, MaximumStreams: 5}.Append(nil)
	p.injectFrames(p.server, ackhandler.SpaceApplication, lower)
	p.sim.RunFor(100 * time.Millisecond)
	if c.streams.peerMaxBidi != 20 || c.closeState != stateActive {
		t.Fatalf("after MAX_STREAMS 5: limit %d, state %v", c.streams.peerMaxBidi, c.closeState)
	}
	for i := range 20 {
		if s, _, err := c.streams.openStream(true); s == nil || err != nil {
			t.Fatalf("stream %d of 20 not opened: %v", i, err)
		}
	}
}
