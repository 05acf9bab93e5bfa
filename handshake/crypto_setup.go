package handshake

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"time"

	"github.com/quicstack/quic/wire"
)

// The texts of crypto/tls's errors for handshake data at the wrong
// encryption level (see toTransportError).
const (
	tlsErrBufferNotEmpty = "tls: handshake buffer not empty before setting read traffic secret"
	tlsErrWrongLevel     = "tls: handshake data received at wrong level"
)

// TLS alerts this package raises itself (RFC 8446, Section 6).
const (
	alertInternalError         = 80
	alertNoApplicationProtocol = 120
	alertMissingExtension      = 109
	alertUnexpectedMessage     = 10
)

// A Config configures a CryptoSetup.
type Config struct {
	// TLS is the TLS configuration, prepared by PrepareTLSConfig. It is
	// used as is, not cloned, so that a server's automatically generated
	// session ticket keys, which crypto/tls creates on first use and keeps
	// in the Config, are shared by all its connections. Everything
	// crypto/tls offers works as with TLS over TCP: Certificates and
	// GetCertificate (SNI), ClientAuth and ClientCAs,
	// VerifyPeerCertificate and VerifyConnection, KeyLogWriter
	// (SSLKEYLOGFILE format), ClientSessionCache, and SetSessionTicketKeys
	// for servers of a fleet that resume each other's sessions. crypto/tls
	// chooses the TLS 1.3 cipher suite itself (AES-128-GCM, AES-256-GCM or
	// ChaCha20-Poly1305); it cannot be restricted.
	TLS *tls.Config
	// Params are the transport parameters this endpoint sends.
	Params wire.TransportParameters
	// EnableEarlyData, on a client, offers 0-RTT when a resumed session
	// allows it; on a server, accepts 0-RTT when the session's remembered
	// transport parameters are still honoured (RFC 9000, Section 7.4.1)
	// and issues session tickets that allow it.
	EnableEarlyData bool
	// AdmitEarlyData, on a server, is asked before 0-RTT is accepted for a
	// resumed session, with the ID and issue time that this package
	// recorded in the session's ticket (see SetTime); false declines
	// 0-RTT, and the session still resumes in 1-RTT. A session without
	// them (a ticket from another implementation) gets no 0-RTT. nil
	// admits every session. now is the time given to SetTime. It runs on
	// the goroutine that calls NextEvent.
	AdmitEarlyData func(ticketID []byte, issued, now time.Time) bool
	// SessionTickets, on a server whose TLS config sets neither
	// WrapSession nor UnwrapSession, seals session tickets with these
	// rotating keys in the epoch of the time given to SetTime (or of
	// TLS.Time, if set): see ConfigureSessionTicketsAt. The TLS config is
	// then copied for the connection.
	SessionTickets *EpochKeys
}

// PrepareTLSConfig returns a copy of c fit for QUIC, to be made once per
// listener or dialer and shared by its connections: MinVersion is raised to
// TLS 1.3 ("Clients MUST NOT offer TLS versions older than 1.3",
// RFC 9001, Section 4.2), and NextProtos must not be empty, since QUIC
// requires ALPN (RFC 9001, Section 8.1). A server's GetConfigForClient is
// wrapped to see whether the client can resume sessions at all (see
// observeClientHello).
func PrepareTLSConfig(c *tls.Config) (*tls.Config, error) {
	if c == nil {
		return nil, errors.New("handshake: a tls.Config is required")
	}
	if len(c.NextProtos) == 0 {
		return nil, errors.New("handshake: tls.Config.NextProtos must name the application protocol (QUIC requires ALPN, RFC 9001, Section 8.1)")
	}
	tc := c.Clone()
	if tc.MinVersion < tls.VersionTLS13 {
		tc.MinVersion = tls.VersionTLS13
	}
	observeClientHello(tc)
	return tc, nil
}

// An EventKind says what an Event reports.
type EventKind uint8

const (
	// EventNone: nothing more to do until more CRYPTO data arrives.
	EventNone EventKind = iota
	// EventWriteCrypto: Data is to be sent in CRYPTO frames at Level.
	EventWriteCrypto
	// EventReadSecret: Data is the secret that opens packets at Level,
	// for cipher suite Suite (see NewOpener).
	EventReadSecret
	// EventWriteSecret: Data is the secret that seals packets at Level,
	// for cipher suite Suite (see NewSealer).
	EventWriteSecret
	// EventPeerParams: the peer's transport parameters arrived and passed
	// validation; see PeerParams.
	EventPeerParams
	// EventEarlyDataRejected: on a client, the server declined 0-RTT; data
	// sent in 0-RTT must be sent again in 1-RTT (RFC 9001, Section 4.6.2).
	EventEarlyDataRejected
	// EventHandshakeComplete: the TLS handshake completed
	// (RFC 9001, Section 4.1.1), with an application protocol negotiated.
	EventHandshakeComplete
)

// String returns the event kind's name.
func (k EventKind) String() string {
	return [...]string{"None", "WriteCrypto", "ReadSecret", "WriteSecret", "PeerParams",
		"EarlyDataRejected", "HandshakeComplete"}[k]
}

// An Event is one step of the handshake for the connection to act on.
type Event struct {
	Kind  EventKind
	Level EncryptionLevel
	// Data is owned by crypto/tls and valid only until the next call to
	// NextEvent.
	Data  []byte
	Suite uint16
}

// A CryptoSetup drives the TLS 1.3 handshake of one QUIC connection through
// crypto/tls's QUIC API (RFC 9001, Section 4). The connection feeds it the
// CRYPTO data it receives with HandleCrypto and acts on what NextEvent
// returns until EventNone. Like the connection state it belongs to, a
// CryptoSetup is not safe for concurrent use.
//
// What only the handshake needs sits behind pointers that ReleaseIfDone
// drops, so that a server's established connection keeps a small
// CryptoSetup, the peer's parameters and its TLS state.
type CryptoSetup struct {
	role wire.Role
	conn *tls.QUICConn
	// params are the parameters this endpoint sends (a copy of
	// Config.Params); nil once released.
	params     *wire.TransportParameters
	earlyData  bool                      // Config.EnableEarlyData
	peerParams *wire.TransportParameters // nil before EventPeerParams
	// remembered holds, on a client resuming a session, the server's
	// parameters from that session; on a server, the parameters a session
	// ticket was issued under.
	remembered    RememberedParams
	hasRemembered bool
	earlyOffered  bool // client: 0-RTT keys were installed
	earlyRejected bool
	earlyAccepted bool // server: 0-RTT read keys were installed
	complete      bool
	err           error
	// helloSeen, helloOffersPSK and helloOffersEarly are set, on a
	// server, by observeClientHello's hook.
	helloSeen, helloOffersPSK, helloOffersEarly bool
	// resumeOffered: the client tried to resume (see ResumptionOffered).
	resumeOffered bool
	// early is what a server knows of the TLS state once the ClientHello
	// was processed (early_state.go).
	early *tls.ConnectionState
	// state is the TLS state recorded when the handshake completed, kept
	// when conn is released.
	state *tls.ConnectionState
	// admit is Config.AdmitEarlyData; now is the time set by SetTime.
	admit func(id []byte, issued, now time.Time) bool
	now   time.Time
}

// NewClient returns a CryptoSetup for a client connection.
func NewClient(c *Config) (*CryptoSetup, error) { return newCryptoSetup(wire.RoleClient, c) }

// NewServer returns a CryptoSetup for a server connection.
func NewServer(c *Config) (*CryptoSetup, error) { return newCryptoSetup(wire.RoleServer, c) }

func newCryptoSetup(role wire.Role, c *Config) (*CryptoSetup, error) {
	if c.TLS == nil {
		return nil, errors.New("handshake: a tls.Config is required")
	}
	tc := c.TLS
	if len(tc.NextProtos) == 0 || tc.MinVersion < tls.VersionTLS13 {
		return nil, errors.New("handshake: tls.Config not prepared by PrepareTLSConfig (needs NextProtos and TLS 1.3)")
	}
	params := c.Params
	s := &CryptoSetup{role: role, params: &params, earlyData: c.EnableEarlyData, admit: c.AdmitEarlyData}
	if role == wire.RoleServer && c.SessionTickets != nil && tc.WrapSession == nil && tc.UnwrapSession == nil {
		tc = tc.Clone()
		user := tc.Time
		ConfigureSessionTicketsAt(tc, c.SessionTickets, func() time.Time {
			if user != nil {
				return user()
			}
			return s.now
		})
	}
	qc := &tls.QUICConfig{TLSConfig: tc, EnableSessionEvents: true}
	if role == wire.RoleClient {
		s.conn = tls.QUICClient(qc)
	} else {
		s.conn = tls.QUICServer(qc)
	}
	if role == wire.RoleClient {
		// A server's parameters may depend on the client's (the
		// version_information of compatible version negotiation,
		// RFC 9368, Section 3), so crypto/tls asks for them with
		// QUICTransportParametersRequired once it has the client's, and
		// SetParams can change them until then.
		s.conn.SetTransportParameters(c.Params.Append(nil))
	}
	return s, nil
}

// SetParams replaces the transport parameters a server sends. It has an
// effect only before TLS asks for them, which it does after reporting the
// client's parameters with EventPeerParams: a server calls it while
// handling that event.
func (s *CryptoSetup) SetParams(p wire.TransportParameters) {
	if s.params != nil {
		*s.params = p
	}
}

// Start begins the handshake; a client's first flight is then available
// from NextEvent. ctx is passed to crypto/tls callbacks such as
// GetCertificate through ClientHelloInfo.Context.
func (s *CryptoSetup) Start(ctx context.Context) error {
	if s.role == wire.RoleServer {
		ctx = s.observedContext(ctx)
	}
	if err := s.conn.Start(ctx); err != nil {
		return s.fail(err)
	}
	return nil
}

// HandleCrypto passes CRYPTO data received at level, in order and without
// gaps (reassembly is the caller's job), to TLS.
func (s *CryptoSetup) HandleCrypto(level EncryptionLevel, data []byte) error {
	if s.err != nil {
		return s.err
	}
	if s.conn == nil {
		// Released: a TLS 1.3 client sends no handshake message after its
		// Finished over QUIC (no KeyUpdate, RFC 9001, Section 6), so this
		// is what crypto/tls would call an unexpected message.
		return s.fail(&wire.TransportError{Code: wire.CryptoError(alertUnexpectedMessage), Reason: "unexpected post-handshake CRYPTO data"})
	}
	if err := s.conn.HandleData(level.tls(), data); err != nil {
		return s.fail(err)
	}
	return nil
}

// NextEvent returns the next thing the connection must do. After an error
// the connection must close with the *wire.TransportError returned: a
// CRYPTO_ERROR carrying the TLS alert (RFC 9001, Section 4.8), or a
// TRANSPORT_PARAMETER_ERROR.
func (s *CryptoSetup) NextEvent() (Event, error) {
	for s.err == nil && s.conn != nil {
		e := s.conn.NextEvent()
		switch e.Kind {
		case tls.QUICNoEvent:
			return Event{}, nil
		case tls.QUICSetReadSecret, tls.QUICSetWriteSecret:
			ev := Event{Kind: EventReadSecret, Level: levelFromTLS(e.Level), Data: e.Data, Suite: e.Suite}
			if e.Kind == tls.QUICSetWriteSecret {
				ev.Kind = EventWriteSecret
			}
			if ev.Level == LevelEarlyData {
				if s.role == wire.RoleClient {
					s.earlyOffered = true
				} else {
					s.earlyAccepted = true
				}
			}
			return ev, nil
		case tls.QUICWriteData:
			return Event{Kind: EventWriteCrypto, Level: levelFromTLS(e.Level), Data: e.Data}, nil
		case tls.QUICTransportParameters:
			p, err := wire.ParseTransportParameters(e.Data, s.role.Peer())
			if err != nil {
				return Event{}, s.fail(err)
			}
			s.peerParams = &p
			return Event{Kind: EventPeerParams}, nil
		case tls.QUICTransportParametersRequired:
			// A server's parameters are set now, after the client's were
			// reported (see SetParams).
			s.conn.SetTransportParameters(s.params.Append(nil))
		case tls.QUICRejectedEarlyData:
			s.earlyRejected = true
			return Event{Kind: EventEarlyDataRejected}, nil
		case tls.QUICResumeSession:
			s.onResumeSession(e.SessionState)
		case tls.QUICStoreSession:
			s.onStoreSession(e.SessionState)
		case tls.QUICHandshakeDone:
			if err := s.onHandshakeDone(); err != nil {
				return Event{}, s.fail(err)
			}
			return Event{Kind: EventHandshakeComplete}, nil
		case tls.QUICErrorEvent:
			return Event{}, s.fail(e.Err)
		}
	}
	return Event{}, s.err
}

// onResumeSession decides whether 0-RTT goes ahead with a resumed session.
func (s *CryptoSetup) onResumeSession(ss *tls.SessionState) {
	if s.role == wire.RoleClient {
		s.resumeOffered = true
	}
	r, ok := findRememberedParams(ss)
	s.remembered, s.hasRemembered = r, ok
	if !ss.EarlyData {
		return
	}
	if s.role == wire.RoleClient {
		// Without the server's remembered limits a client cannot send
		// 0-RTT data safely.
		ss.EarlyData = s.earlyData && ok
		return
	}
	// "A server MAY ... reject 0-RTT if ... the server's transport
	// parameters ... would be violated" (RFC 9000, Section 7.4.1).
	ss.EarlyData = s.earlyData && ok && r.AllowsEarlyDataUnder(RememberParams(s.params))
	if ss.EarlyData && s.admit != nil {
		// "0-RTT provides no protection against replay attacks"; a
		// server limits them with single-use tickets (RFC 8446,
		// Sections 8 and 8.1), which the anti-replay store behind admit
		// implements.
		id, issued, found := findTicketStamp(ss)
		ss.EarlyData = found && s.admit(id, issued, s.now)
	}
}

// SetTime sets the time of what the handshake does next: the issue time
// recorded in a server's session tickets. The connection calls it with
// the time it is handed before it feeds the handshake.
func (s *CryptoSetup) SetTime(now time.Time) { s.now = now }

// onStoreSession keeps, with a client's session, the server parameters that
// 0-RTT on a later connection will rely on.
func (s *CryptoSetup) onStoreSession(ss *tls.SessionState) {
	if s.peerParams != nil {
		ss.Extra = append(ss.Extra, RememberParams(s.peerParams).marshal())
	} else {
		ss.EarlyData = false
	}
	if err := s.conn.StoreSession(ss); err != nil {
		s.fail(err)
	}
}

func (s *CryptoSetup) onHandshakeDone() error {
	st := s.conn.ConnectionState()
	// "When using ALPN, endpoints MUST immediately close a connection ...
	// with a no_application_protocol TLS alert ... if an application
	// protocol is not negotiated" (RFC 9001, Section 8.1).
	if st.NegotiatedProtocol == "" {
		return &wire.TransportError{Code: wire.CryptoError(alertNoApplicationProtocol), Reason: "no application protocol negotiated"}
	}
	// "endpoints that receive ClientHello or EncryptedExtensions messages
	// without the quic_transport_parameters extension MUST close the
	// connection with an error of type 0x016d" (RFC 9001, Section 8.2).
	// crypto/tls enforces this too; this guards the invariant that a
	// completed handshake has the peer's parameters.
	if s.peerParams == nil {
		return &wire.TransportError{Code: wire.CryptoError(alertMissingExtension), Reason: "missing quic_transport_parameters extension"}
	}
	s.complete = true
	s.state = &st
	if s.role == wire.RoleServer && s.sendsSessionTicket() {
		// The one session ticket goes out in 1-RTT CRYPTO data right after
		// the handshake. It carries the parameters that 0-RTT on a later
		// connection relies on, so the server can check them then.
		// crypto/tls sends nothing if SessionTicketsDisabled is set.
		err := s.conn.SendSessionTicket(tls.QUICSessionTicketOptions{
			EarlyData: s.earlyData,
			Extra:     [][]byte{RememberParams(s.params).marshal(), newTicketStamp(s.now)},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// PeerParams returns the peer's transport parameters, or nil before
// EventPeerParams.
func (s *CryptoSetup) PeerParams() *wire.TransportParameters { return s.peerParams }

// RememberedParams returns, on a client resuming a session, the server's
// transport parameters remembered from that session, which limit what it
// may send in 0-RTT (RFC 9000, Section 7.4.1); on a server, those the
// client's session ticket was issued under. ok is false when no session
// was resumed or it carried none.
func (s *CryptoSetup) RememberedParams() (p RememberedParams, ok bool) {
	return s.remembered, s.hasRemembered
}

// EarlyDataAccepted reports whether 0-RTT was used: on a client, 0-RTT keys
// were installed and the server did not reject them (meaningful once the
// handshake is complete); on a server, it accepted 0-RTT.
func (s *CryptoSetup) EarlyDataAccepted() bool {
	if s.role == wire.RoleClient {
		return s.earlyOffered && !s.earlyRejected
	}
	return s.earlyAccepted
}

// HandshakeComplete reports whether EventHandshakeComplete was returned.
func (s *CryptoSetup) HandshakeComplete() bool { return s.complete }

// ConnectionState returns the TLS state: negotiated protocol and cipher
// suite, peer certificates, whether the session was resumed.
func (s *CryptoSetup) ConnectionState() tls.ConnectionState {
	if s.conn == nil {
		if s.state == nil {
			return tls.ConnectionState{}
		}
		return *s.state
	}
	return s.conn.ConnectionState()
}

// HandshakeState returns the TLS state recorded when the handshake
// completed, or nil before. It is shared: the caller must not modify it.
func (s *CryptoSetup) HandshakeState() *tls.ConnectionState { return s.state }

// Close releases crypto/tls's resources. It does not send anything.
func (s *CryptoSetup) Close() error {
	if s.conn == nil {
		return nil
	}
	return s.conn.Close()
}

// Release closes crypto/tls's connection and drops it, with what only the
// handshake needs, for a connection that is closing: ConnectionState,
// HandshakeState and PeerParams stay available; HandleCrypto fails.
func (s *CryptoSetup) Release() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	s.params = nil
}

// ReleaseIfDone, on a server whose handshake completed and whose session
// ticket was taken from NextEvent, closes crypto/tls's connection and
// drops it, with the handshake buffers it keeps (about 5 KB of an idle
// connection's memory), and the parameters it sent. ConnectionState and
// PeerParams stay available. On a client, which may still receive session
// tickets, it does nothing.
func (s *CryptoSetup) ReleaseIfDone() {
	if s.role != wire.RoleServer || !s.complete || s.conn == nil || s.err != nil {
		return
	}
	s.conn.Close()
	s.conn = nil
	s.params = nil
}

// fail records err, converted to the *wire.TransportError the connection
// closes with, and returns it.
func (s *CryptoSetup) fail(err error) error {
	if s.err == nil {
		s.err = toTransportError(err)
	}
	return s.err
}

// toTransportError maps TLS errors onto CRYPTO_ERROR codes: "The alert
// description is added to 0x0100 to produce a QUIC error code from the
// range reserved for CRYPTO_ERROR" (RFC 9001, Section 4.8).
//
// Two crypto/tls errors are violations of RFC 9001, Section 4.1.3, which
// names PROTOCOL_VIOLATION for them, where crypto/tls reports
// unexpected_message or internal_error: handshake data left over at an encryption level when
// TLS moves to the next ("When TLS provides keys for a higher encryption
// level, if there is data from a previous encryption level that TLS has
// not consumed, this MUST be treated as a connection error of type
// PROTOCOL_VIOLATION"), and data at a level TLS does not read (the
// connection checks that before handing data over; this is the backstop).
// crypto/tls has no typed error for either: they are recognised by their
// text, and TestCryptoErrorsOfPreviousLevel fails if it changes.
func toTransportError(err error) error {
	var te *wire.TransportError
	if errors.As(err, &te) {
		return te
	}
	if msg := err.Error(); strings.Contains(msg, tlsErrBufferNotEmpty) || strings.Contains(msg, tlsErrWrongLevel) {
		return &wire.TransportError{Code: wire.ProtocolViolation, FrameType: wire.FrameTypeCrypto, Reason: msg}
	}
	var alert tls.AlertError
	if errors.As(err, &alert) {
		return &wire.TransportError{Code: wire.CryptoError(uint8(alert)), Reason: err.Error()}
	}
	return &wire.TransportError{Code: wire.CryptoError(alertInternalError), Reason: err.Error()}
}
