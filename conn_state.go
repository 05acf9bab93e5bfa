package quic

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/flowcontrol"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// connState is the protocol core of one connection: a state machine that is
// handed time and datagrams and returns datagrams, deadlines and events. It
// never reads the clock, never touches a socket and starts no goroutine; the
// Conn goroutine (or the simulator in tests) drives it:
//
//   - handleDatagram(now, datagram) for every datagram received,
//   - handleTimeout(now) when nextDeadline() has passed,
//   - localIDs.pollEvent() for the routing changes of its connection IDs,
//     handed to the endpoint with the answers back (localIDs.onRouted),
//     before each pollTransmit and whenever pollTransmit returned nothing
//     with events pending (Conn.routeConnIDs),
//   - pollTransmit(now, buf) until it returns no more datagrams.
//
// Only one goroutine at a time may call it. Application goroutines reach
// the streams through their own mutex-guarded buffers (see stream.go).
type connState struct {
	role    wire.Role
	config  *Config
	version wire.Version // the version whose packet format and keys are used
	// offeredVersion, if not zero, is a version this package cannot speak
	// that a client offers anyway, to solicit Version Negotiation: it goes
	// in the Version field of long headers instead of version.
	offeredVersion wire.Version
	// handshakeCompleted, if set, is called when the handshake completes,
	// before the rest of the datagram is processed (Conn.publishHandshake).
	handshakeCompleted func()
	// firstVersion is the version of the client's first flight (RFC 9368's
	// Original Version); version differs from it after compatible version
	// negotiation (see conn_version_negotiation.go). 0-RTT always uses firstVersion.
	firstVersion wire.Version
	// firstInitialOpen, after a switch of version, opens the Initial
	// packets still sent in firstVersion, until the Initial space goes.
	firstInitialOpen *handshake.Opener
	// sendECN is the ECN codepoint of the datagram pollTransmit last
	// returned, for the socket to set (RFC 9000, Section 13.4).
	sendECN ackhandler.ECNMark

	// Connection IDs (RFC 9000, Section 7.2).
	origDstConnID wire.ConnectionID // the client's first Destination Connection ID
	localConnID   wire.ConnectionID // our handshake Source Connection ID (sequence 0)
	peerConnID    wire.ConnectionID // the peer's handshake Source Connection ID
	localIDs      localConnIDs      // the IDs we issued; routes packets to us
	peerIDs       peerConnIDs       // the IDs the peer issued; active() is our destination
	rxDstConnID   wire.ConnectionID // destination ID of the packet being processed
	idSeqs        []uint64          // scratch: sequence numbers of connection-ID frames sent
	// initialKeyConnID is what the Initial keys derive from: origDstConnID,
	// or on a server after a Retry the Retry's Source Connection ID.
	initialKeyConnID wire.ConnectionID
	retrySrcConnID   wire.ConnectionID // client: the Retry's SCID, if any
	hasRetried       bool
	retryToken       []byte // client: sent in every Initial after a Retry
	// serverConnIDTaken: a client took peerConnID from the server's
	// first Initial packet, and discards packets with another Source
	// Connection ID (RFC 9000, Section 7.2; acceptsServerLongHeader).
	serverConnIDTaken bool

	tls         *handshake.CryptoSetup
	spaces      [3]packetSpace // by ackhandler.Space
	oneRTT      *handshake.OneRTTKeys
	appWrite    []byte // 1-RTT write secret waiting for its read secret
	appSuite    uint16
	zeroRTTSeal *handshake.Sealer
	zeroRTTOpen *handshake.Opener
	// zeroRTTDiscard is when a server discards zeroRTTOpen, three PTOs
	// after the first 1-RTT packet (RFC 9001, Section 4.9.3); zero
	// before it.
	zeroRTTDiscard time.Time
	// aeadFailures counts the received packets of the Initial, 0-RTT and
	// Handshake levels that failed authentication (1-RTT keys count
	// their own), and integrityLimit is the limit on all of them
	// together, of the AEAD selected (conn_aead_limit.go).
	aeadFailures   uint64
	integrityLimit uint64

	rtt    *congestion.RTTStats
	cc     congestion.Controller
	pacer  *congestion.Pacer
	sent   *ackhandler.SentPacketHandler
	frames connFrameHandler

	// params are the transport parameters this endpoint sends, kept
	// while the handshake may need them (version negotiation, tracing)
	// and dropped when it is confirmed; maxDatagramFrameSize stays.
	params               *wire.TransportParameters
	maxDatagramFrameSize uint64 // ours (RFC 9221, Section 3)
	peerParams           *wire.TransportParameters

	handshakeComplete   bool
	handshakeConfirmed  bool
	handshakeDoneToSend bool
	sentHandshakePacket bool
	spareConnIDsDue     bool // see confirmHandshake

	// Anti-amplification (RFC 9000, Section 8.1): before the client's
	// address is validated a server sends at most three times what it
	// received.
	addressValidated bool
	bytesReceived    uint64
	bytesSent        uint64
	packetsReceived  uint64 // packets decrypted and processed
	packetsSent      uint64

	maxDatagramSize int

	// Flow control and streams.
	connRecv *flowcontrol.ReceiveWindow
	connSend flowcontrol.SendWindow
	streams  *streamsMap

	// Timers.
	idleTimeout      time.Duration
	idleDeadline     time.Time
	handshakeTimeout time.Time
	lastAckEliciting time.Time // last ack-eliciting packet sent, for keep-alive
	// lastActivity is when a datagram was last received or sent; quiet
	// for long enough, the connection releases memory (conn_idle_release.go) and
	// sets idleReleased.
	lastActivity time.Time
	// idleReleaseLow is a lower bound of idleReleaseDeadline while the
	// connection may release (zero: none known), which spares
	// nextDeadline the time arithmetic per packet (conn_idle_release.go).
	idleReleaseLow time.Time
	pingToSend     bool
	idleReleased   bool
	// idleRestartOnSend: a packet was received and processed since the
	// last ack-eliciting packet sent, which restarts the idle timer when
	// it goes (RFC 9000, Section 10.1).
	idleRestartOnSend bool
	// Path probes (conn_path_probe.go): when a packet was last received,
	// the probes sent since stream data last arrived, and the
	// connection's received stream data then.
	lastReceived time.Time
	probes       int
	probeData    uint64

	// Closing (RFC 9000, Section 10.2).
	closeState  closeState
	closeToSend bool
	closeErr    error         // why the connection ended, for the application
	closing     *closingState // made when closing or draining starts

	// undecryptable holds a few packets that arrived before their keys
	// (RFC 9001, Section 5.7), to be retried when keys arrive.
	undecryptable [][]byte

	// rxFrame is reused for parsing: made on first use, dropped when the
	// connection is quiet (conn_idle_release.go).
	rxFrame *wire.Frame
	// onFrame, if set, observes every frame received, after the check
	// that its packet type allows it; for tests and tracing. The frame
	// is valid only during the call.
	onFrame func(space ackhandler.Space, f *wire.Frame)

	datagrams datagramQueue

	// Network paths (RFC 9000, Section 9; conn_path.go), and what
	// processing the current datagram learned about its path.
	paths        paths
	rxNonProbing bool // the packet has a non-probing frame
	rxMigrate    bool // a new path to migrate to once it has a place
	txPath       int  // the path of the datagram pollTransmit returns
	// ccw is cc: the controller of the active path, behind a wrapper
	// that can swap it and keeps probes out of congestion control.
	ccw    *pathController
	ccSeed uint64
	pmtud  pmtuDiscovery // path MTU discovery (conn_pmtud.go)

	events connEvents

	// 0-RTT (RFC 9001, Section 4.6).
	used0RTT     bool                      // 0-RTT was accepted (known at handshake completion)
	earlyParams  *wire.TransportParameters // client: the remembered server limits in force during 0-RTT
	rxPacketType wire.PacketType           // type of the packet being processed
	rxNewCrypto  bool                      // the packet being processed advanced its space's CRYPTO stream
	// cryptoReadLevel is the encryption level TLS reads at
	// (conn_tls_checks.go).
	cryptoReadLevel handshake.EncryptionLevel
	// heldStreams, on a client whose 0-RTT was rejected, are the streams
	// it opened beyond the server's real stream limit, which send nothing
	// until the limit rises (conn_early.go).
	heldStreams []*stream

	// NEW_TOKEN (RFC 9000, Section 8.1.3): a server's token to send
	// (minted for newTokenFor when the frame is first built, so that a
	// connection that ends with its handshake seals none), a client's key
	// to store received ones under.
	newTokenToSend bool
	newToken       []byte
	newTokenFor    tokenMint
	// tokenMigrations is the count of migrations (paths.migrations) the
	// last NEW_TOKEN after a migration was for (conn_path_validation.go).
	tokenMigrations int
	tokenKey        string

	obs connObs // statistics and tracing (tracer_events.go)

	ackFreq ackFreqSender // draft-ietf-quic-ack-frequency (conn_ack_frequency.go)
}

// Every established connection keeps a connState: its size (1,976 bytes,
// plus the 8-byte header the allocator adds to objects with pointers)
// fits the 2,048-byte size class, with room for 64 bytes more; beyond, it
// takes the next class, 2,304 bytes. What only some connections need
// (closing, tracing, paths beyond the first) sits behind pointers
// (TestIdleServerConnMemory bounds the total).

// closingState is what a connection in the closing or draining state
// keeps (RFC 9000, Section 10.2).
type closingState struct {
	frame     wire.ConnectionCloseFrame // sent again in the closing state
	deadline  time.Time                 // when the state can go
	datagrams uint64                    // datagrams received while closing
	// rxBytes and txBytes are the bytes received while closing and those
	// sent in answer (closeAllowance).
	rxBytes, txBytes uint64
	// datagram is the first datagram of CONNECTION_CLOSE packets, sent
	// again as it is (conn_close_draining.go); packets is how many it holds.
	datagram []byte
	packets  uint64
	// released is set once what the closing and draining states do not
	// use was let go; keyUpdates keeps what the statistics need of it.
	released   bool
	keyUpdates int
}

// closeState is where a connection is in closing (RFC 9000, Section 10).
type closeState uint8

const (
	stateActive   closeState = iota
	stateClosing             // we sent CONNECTION_CLOSE; answer packets with it
	stateDraining            // the peer sent CONNECTION_CLOSE; send nothing
	stateClosed              // all state can go
)

// connEvents records what the application side must learn from the core,
// consumed by the Conn goroutine after each call.
type connEvents struct {
	handshakeComplete bool
	closed            bool
}

// packetSpace holds what each packet number space owns
// (RFC 9000, Section 12.3).
type packetSpace struct {
	seal *handshake.Sealer // Initial and Handshake; 1-RTT uses oneRTT
	open *handshake.Opener
	recv *ackhandler.ReceivedPackets // nil once discarded
	// crypto is the space's CRYPTO stream, made on first use and
	// dropped with the space: an established connection keeps only the
	// application space's.
	crypto    *cryptoStream
	discarded bool
	ackFrame  wire.AckFrame // reused
}

// cryptoStream is the CRYPTO stream of a packet number space (RFC 9000,
// Section 19.6): data received, reassembled for TLS, and TLS's data to
// send until acknowledged.
type cryptoStream struct {
	recv recvBuffer
	send sendBuffer
	// partial, in the application space, is a post-handshake TLS message
	// received in part (conn_tls_checks.go).
	partial []byte
}

// cryptoStream returns the space's CRYPTO stream, making it if needed.
func (sp *packetSpace) cryptoStream() *cryptoStream {
	if sp.crypto == nil {
		sp.crypto = &cryptoStream{
			recv: newRecvBuffer(maxCryptoBufferPerLevel),
			send: newSendBuffer(maxCryptoBufferPerLevel),
		}
	}
	return sp.crypto
}

// dropCrypto drops the space's CRYPTO stream, giving its chunks back to
// the pool (stream_buffer_chunks.go).
func (sp *packetSpace) dropCrypto() {
	if sp.crypto != nil {
		sp.crypto.send.release()
		sp.crypto.recv.reset()
		sp.crypto = nil
	}
}

// cryptoToSend reports whether the space has CRYPTO data to send.
func (sp *packetSpace) cryptoToSend() bool { return sp.crypto != nil && sp.crypto.send.hasData() }

// connParams are what a connection needs besides its Config.
type connParams struct {
	tls *tls.Config // prepared by handshake.PrepareTLSConfig
	// sessionTickets, on a server, are the rotating keys that seal its
	// session tickets at the connection's time, or nil (keys_fleet.go).
	sessionTickets *handshake.EpochKeys
	// Connection IDs: our IDs come from connIDGen, and the driver has
	// them routed by its endpoint (connIDEvent). localConnID and
	// preferredConnID, if set, are the IDs of sequence numbers 0 and 1
	// that the endpoint generated and routed already (endpoint.newConnID);
	// unset, the connection generates them. For a client, origDstConnID
	// is the random initial destination and peerConnID equals it until
	// the server answers; for a server, both come from the client's first
	// Initial.
	connIDGen       ConnectionIDGenerator
	localConnID     wire.ConnectionID
	preferredConnID wire.ConnectionID
	peerConnID      wire.ConnectionID
	origDstConnID   wire.ConnectionID
	// initialKeyConnID, if set, is the connection ID the Initial keys
	// derive from, when it is not origDstConnID: on a server after a
	// Retry, the Retry's Source Connection ID (RFC 9001, Section 5.2).
	initialKeyConnID wire.ConnectionID
	version          wire.Version
	// initialSeal and initialOpen, if set, are the Initial keys of
	// version derived from the Initial key connection ID, which a
	// listener derived to authenticate the client's first Initial.
	initialSeal    *handshake.Sealer
	initialOpen    *handshake.Opener
	statelessReset *handshake.StatelessResetter
	// retrySrcConnID is set on a server that sent a Retry.
	retrySrcConnID    wire.ConnectionID
	hasRetrySrcConnID bool
	addressValidated  bool
	seed              uint64
	// early, on a client, offers 0-RTT when the resumed session allows
	// it (DialEarly).
	early bool
	// token, on a client, is a NEW_TOKEN token to send in Initial
	// packets (RFC 9000, Section 8.1.3).
	token []byte
	// tokenKey, on a client, is the TokenStore key for NEW_TOKEN tokens.
	tokenKey string
	// ecn reports that the socket can mark packets ECT(0) and read the
	// marks of received ones; without it ECN validation starts failed.
	ecn bool
	// newToken, on a server, mints the NEW_TOKEN token to send once the
	// handshake completes.
	newToken tokenMint
	// path is the handshake path's addresses, if known.
	path pathAddrs
	// maxSendPayload and maxRecvPayload are the socket layer's
	// payloadLimits (0: the portable defaults).
	maxSendPayload, maxRecvPayload int
	// preferredAddress, on a server, is the address to offer in the
	// preferred_address transport parameter (RFC 9000, Section 9.6); its
	// connection ID and token are made here.
	preferredAddress *wire.PreferredAddress
	// tracer, if not nil, receives the connection's events.
	tracer *Tracer
}

func newConnState(now time.Time, role wire.Role, cfg *Config, p connParams) (*connState, error) {
	c := &connState{
		role:             role,
		config:           cfg,
		version:          p.version,
		origDstConnID:    p.origDstConnID,
		peerConnID:       p.peerConnID,
		maxDatagramSize:  cfg.InitialPacketSize,
		addressValidated: role == wire.RoleClient || p.addressValidated,
		rtt:              congestion.NewRTTStats(),
		retryToken:       p.token,
		integrityLimit:   handshake.AESGCMIntegrityLimit, // Initial packets' AEAD (conn_aead_limit.go)
		newTokenFor:      p.newToken,
		tokenKey:         p.tokenKey,
		obs:              connObs{t: p.tracer},
	}
	c.datagrams.limit = cfg.DatagramQueueLen
	if c.datagrams.limit <= 0 {
		c.datagrams.limit = datagramQueueLen // a Config without defaults (tests)
	}
	c.rtt.SetMaxAckDelay(0) // until the peer's transport parameters arrive
	if !p.version.IsSupported() {
		// "A client MAY send a packet using a reserved version number.
		// This can be used to solicit a list of supported versions from a
		// server." (RFC 9000, Section 6.3) A client configured with a
		// version it cannot speak sends Initial packets laid out and
		// protected as in version 1 but carrying that version number: no
		// server can process them, and the point is the Version
		// Negotiation packet that answers them (RFC 9000, Section 6.1).
		// A server never gets here: unknown versions are answered with
		// Version Negotiation before a connection exists.
		if role != wire.RoleClient {
			return nil, fmt.Errorf("quic: server connection for unsupported version %v", p.version)
		}
		c.offeredVersion, c.version = p.version, wire.Version1
	}
	c.firstVersion = c.version
	if err := c.localIDs.init(p.connIDGen, p.statelessReset, p.localConnID, 0); err != nil {
		return nil, err
	}
	c.localConnID = c.localIDs.initial()
	c.peerIDs.init(p.peerConnID, defaultActiveConnIDLimit)
	c.ccSeed = p.seed
	c.ccw = newPathController(c.newController())
	c.cc = c.ccw
	c.paths.init(true)
	c.paths.list[0].addrs = p.path
	c.paths.handshakeRemote = p.path.remote
	c.pacer = congestion.NewPacer(c.maxDatagramSize)
	c.frames.c = c
	c.sent = ackhandler.New(ackhandler.Config{
		Role: role, RTT: c.rtt, Controller: c.cc, Frames: &c.frames, Seed: p.seed, DisableECN: !p.ecn,
	})
	c.initPMTUD(p.maxSendPayload)
	for s := range c.spaces {
		c.spaces[s].recv = ackhandler.NewReceivedPackets(ackhandler.Space(s))
	}
	c.spaces[ackhandler.SpaceApplication].recv.SetMaxAckDelay(defaultMaxAckDelay)
	c.initialKeyConnID = p.origDstConnID
	if p.initialKeyConnID.Len() > 0 {
		c.initialKeyConnID = p.initialKeyConnID
	}
	c.installInitialKeys(p.initialSeal, p.initialOpen)

	c.connRecv = flowcontrol.NewReceiveWindow(flowcontrol.ReceiveConfig{
		InitialWindow: cfg.InitialConnectionReceiveWindow, MaxWindow: cfg.MaxConnectionReceiveWindow, Shared: true,
	})
	c.streams = newStreamsMap(c)

	params := c.ourTransportParameters(p)
	c.params, c.maxDatagramFrameSize = &params, params.MaxDatagramFrameSize
	setup := &handshake.Config{TLS: p.tls, Params: params, EnableEarlyData: p.early, SessionTickets: p.sessionTickets}
	if role == wire.RoleServer {
		setup.EnableEarlyData = cfg.Allow0RTT
		setup.AdmitEarlyData = c.admitEarlyData(p) // conn_antireplay.go
	}
	var err error
	if role == wire.RoleClient {
		c.tls, err = handshake.NewClient(setup)
	} else {
		c.tls, err = handshake.NewServer(setup)
	}
	if err != nil {
		return nil, err
	}
	c.idleTimeout = cfg.HandshakeIdleTimeout
	c.handshakeTimeout = now.Add(cfg.HandshakeIdleTimeout)
	c.idleDeadline = c.handshakeTimeout
	if err := c.tls.Start(context.Background()); err != nil {
		return nil, err
	}
	if err := c.processTLSEvents(now); err != nil {
		return nil, err
	}
	return c, nil
}

// newController makes a congestion controller in its initial state.
func (c *connState) newController() congestion.Controller {
	return congestion.New(c.config.Congestion, congestion.ControllerConfig{
		RTT: c.rtt, MaxDatagramSize: c.maxDatagramSize, Seed: c.ccSeed,
	})
}

// testHookTransportParameters, set by tests only, changes the transport
// parameters an endpoint sends, to play a peer that sends unusual ones.
var testHookTransportParameters func(wire.Role, *wire.TransportParameters)

// ourTransportParameters builds the transport parameters this endpoint
// sends (RFC 9000, Section 18.2).
func (c *connState) ourTransportParameters(p connParams) wire.TransportParameters {
	cfg := c.config
	tp := wire.DefaultTransportParameters()
	if cfg.MaxIdleTimeout > 0 {
		tp.MaxIdleTimeout = cfg.MaxIdleTimeout
	}
	tp.InitialMaxData = cfg.InitialConnectionReceiveWindow
	tp.InitialMaxStreamDataBidiLocal = cfg.InitialStreamReceiveWindow
	tp.InitialMaxStreamDataBidiRemote = cfg.InitialStreamReceiveWindow
	tp.InitialMaxStreamDataUni = cfg.InitialStreamReceiveWindow
	tp.InitialMaxStreamsBidi = uint64(max(cfg.MaxIncomingStreams, 0))
	tp.InitialMaxStreamsUni = uint64(max(cfg.MaxIncomingUniStreams, 0))
	tp.MaxAckDelay = defaultMaxAckDelay
	if c.ackFrequencyNegotiated() {
		// draft-ietf-quic-ack-frequency, Section 3 (conn_ack_frequency.go).
		tp.MinAckDelay, tp.HasMinAckDelay = localMinAckDelay, true
	}
	// What the socket's receive buffers hold whole: larger datagrams
	// would be truncated.
	tp.MaxUDPPayloadSize = uint64(p.maxRecvPayload)
	if p.maxRecvPayload == 0 {
		tp.MaxUDPPayloadSize = 1472 // an Ethernet MTU less IPv4 and UDP headers
	}
	tp.ActiveConnectionIDLimit = defaultActiveConnIDLimit
	tp.InitialSourceConnectionID, tp.HasInitialSourceConnectionID = c.localConnID, true
	if c.offeredVersion == 0 {
		tp.VersionInformation, tp.HasVersionInformation = c.versionInformation(c.version), true
	}
	if cfg.EnableDatagrams {
		tp.MaxDatagramFrameSize = defaultMaxDatagramFrameSize
	}
	// "Support for receiving RESET_STREAM_AT frames is advertised by
	// sending the reset_stream_at (0x1d) transport parameter ... with an
	// empty value." (draft-ietf-quic-reliable-stream-reset, Section 3)
	tp.ResetStreamAt = cfg.EnableResetStreamAt
	if c.role == wire.RoleServer {
		// "Each endpoint includes the value of the Source Connection ID
		// field from the first Initial packet it sent in the
		// initial_source_connection_id transport parameter ... a server
		// includes the Destination Connection ID field from the first
		// Initial packet it received from the client in the
		// original_destination_connection_id transport parameter"
		// (RFC 9000, Section 7.3).
		tp.OriginalDestinationConnectionID, tp.HasOriginalDestinationConnectionID = c.origDstConnID, true
		if p.hasRetrySrcConnID {
			tp.RetrySourceConnectionID, tp.HasRetrySourceConnectionID = p.retrySrcConnID, true
		}
		tp.StatelessResetToken, tp.HasStatelessResetToken = c.localIDs.initialResetToken(), true
		c.offerPreferredAddress(&tp, p.preferredAddress, p.preferredConnID)
	}
	tp.DisableActiveMigration = cfg.DisableActiveMigration
	if testHookTransportParameters != nil {
		testHookTransportParameters(c.role, &tp)
	}
	return tp
}

// installInitialKeys installs the Initial keys derived from the client's
// first Destination Connection ID (RFC 9001, Section 5.2): seal and open
// if they are given, else derived here.
func (c *connState) installInitialKeys(seal *handshake.Sealer, open *handshake.Opener) {
	if seal == nil || open == nil {
		seal, open = handshake.NewInitialKeys(c.version, c.initialKeyConnID.Bytes(), c.role == wire.RoleClient)
	}
	sp := &c.spaces[ackhandler.SpaceInitial]
	sp.seal, sp.open = seal, open
}

// processTLSEvents acts on everything the TLS driver has to say.
func (c *connState) processTLSEvents(now time.Time) error {
	c.tls.SetTime(now)
	for {
		ev, err := c.tls.NextEvent()
		if err != nil {
			return err
		}
		switch ev.Kind {
		case handshake.EventNone:
			c.tls.ReleaseIfDone() // a server's idle connections keep no TLS state
			return nil
		case handshake.EventWriteCrypto:
			sp := c.spaceForLevel(ev.Level)
			if sp == nil {
				return &wire.TransportError{Code: wire.InternalError, Reason: "TLS wrote data at 0-RTT level"}
			}
			if n := sp.cryptoStream().send.write(ev.Data); n < len(ev.Data) {
				return &wire.TransportError{Code: wire.CryptoBufferExceeded, Reason: "outgoing CRYPTO data exceeds buffer"}
			}
		case handshake.EventReadSecret, handshake.EventWriteSecret:
			if err := c.installSecret(now, ev); err != nil {
				return err
			}
		case handshake.EventPeerParams:
			if err := c.applyPeerParams(now, c.tls.PeerParams()); err != nil {
				return err
			}
		case handshake.EventHandshakeComplete:
			c.onHandshakeComplete(now)
		case handshake.EventEarlyDataRejected:
			c.onEarlyDataRejected(now)
		}
	}
}

// spaceForLevel returns the packet number space whose CRYPTO stream carries
// data of a TLS encryption level, or nil for 0-RTT, which has none.
func (c *connState) spaceForLevel(l handshake.EncryptionLevel) *packetSpace {
	switch l {
	case handshake.LevelInitial:
		return &c.spaces[ackhandler.SpaceInitial]
	case handshake.LevelHandshake:
		return &c.spaces[ackhandler.SpaceHandshake]
	case handshake.LevelApplication:
		return &c.spaces[ackhandler.SpaceApplication]
	}
	return nil
}

func (c *connState) installSecret(now time.Time, ev handshake.Event) error {
	write := ev.Kind == handshake.EventWriteSecret
	c.traceKeyInstalled(ev.Level, write)
	if !write && ev.Level != handshake.LevelEarlyData {
		if err := c.onReadLevel(ev.Level); err != nil {
			return err
		}
	}
	switch ev.Level {
	case handshake.LevelHandshake:
		c.setIntegrityLimit(ev.Suite)
		sp := &c.spaces[ackhandler.SpaceHandshake]
		var err error
		if write {
			sp.seal, err = handshake.NewSealer(ev.Suite, c.version, ev.Data)
		} else {
			sp.open, err = handshake.NewOpener(ev.Suite, c.version, ev.Data)
		}
		if err == nil && !write {
			c.retryUndecryptable(now)
		}
		return err
	case handshake.LevelEarlyData:
		var err error
		if write {
			c.zeroRTTSeal, err = handshake.NewSealer(ev.Suite, c.firstVersion, ev.Data)
			if err == nil {
				c.onEarlyDataOffered(now)
			}
		} else {
			c.zeroRTTOpen, err = handshake.NewOpener(ev.Suite, c.firstVersion, ev.Data)
			if err == nil {
				// 0-RTT packets that arrived before the ClientHello was
				// processed (reordered) can be read now.
				c.retryUndecryptable(now)
			}
		}
		return err
	case handshake.LevelApplication:
		if write && c.role == wire.RoleServer {
			// 0.5-RTT: the server may send 1-RTT packets as soon as it
			// has sent its Finished (RFC 9001, Section 5.7), which answers
			// a 0-RTT request one round trip after the client's first
			// flight; it reads them once the client's Finished arrives.
			// The keys keep the secret (they are expanded on first use
			// and updated from it), and crypto/tls owns ev.Data only
			// "until the next NextEvent call" (tls.QUICEvent).
			keys, err := handshake.NewOneRTTWriteKeys(ev.Suite, c.version, append([]byte(nil), ev.Data...))
			if err != nil {
				return err
			}
			keys.SetUpdateInterval(c.config.KeyUpdateInterval)
			c.oneRTT = keys
			return nil
		}
		if write {
			c.appWrite, c.appSuite = append([]byte(nil), ev.Data...), ev.Suite
			return nil
		}
		if c.oneRTT != nil { // a server's write-only keys
			if err := c.oneRTT.SetReadSecret(ev.Suite, c.version, append([]byte(nil), ev.Data...)); err != nil {
				return err
			}
			if c.handshakeConfirmed {
				c.oneRTT.SetHandshakeConfirmed()
			}
			c.retryUndecryptable(now)
			return nil
		}
		keys, err := handshake.NewOneRTTKeys(ev.Suite, c.version, c.appWrite, append([]byte(nil), ev.Data...))
		if err != nil {
			return err
		}
		keys.SetUpdateInterval(c.config.KeyUpdateInterval)
		if c.handshakeConfirmed {
			// A server's handshake can complete, and so be confirmed,
			// before crypto/tls hands over the 1-RTT read secret.
			keys.SetHandshakeConfirmed()
		}
		c.oneRTT = keys
		c.appWrite = nil
		c.retryUndecryptable(now)
	}
	return nil
}

// applyPeerParams checks the peer's transport parameters against what this
// endpoint saw (RFC 9000, Section 7.3) and puts them into force.
func (c *connState) applyPeerParams(now time.Time, p *wire.TransportParameters) error {
	if err := c.negotiateVersion(p); err != nil {
		return err
	}
	// "An endpoint MUST treat the absence of the
	// initial_source_connection_id transport parameter from either endpoint
	// or the absence of the original_destination_connection_id transport
	// parameter from the server as a connection error of type
	// TRANSPORT_PARAMETER_ERROR. An endpoint MUST treat the following as a
	// connection error of type TRANSPORT_PARAMETER_ERROR or
	// PROTOCOL_VIOLATION: a mismatch between values received from a peer in
	// these transport parameters and the value sent in the corresponding
	// Destination or Source Connection ID fields of Initial packets."
	if p.InitialSourceConnectionID != c.peerConnID {
		return &wire.TransportError{Code: wire.TransportParameterError, Reason: "initial_source_connection_id mismatch"}
	}
	if c.role == wire.RoleClient {
		if p.OriginalDestinationConnectionID != c.origDstConnID {
			return &wire.TransportError{Code: wire.TransportParameterError, Reason: "original_destination_connection_id mismatch"}
		}
		if c.hasRetried != p.HasRetrySourceConnectionID || (c.hasRetried && p.RetrySourceConnectionID != c.retrySrcConnID) {
			return &wire.TransportError{Code: wire.TransportParameterError, Reason: "retry_source_connection_id mismatch"}
		}
	}
	c.peerParams = p
	if p.HasPreferredAddress && c.role == wire.RoleClient {
		// The client moves to the preferred address once the handshake
		// is confirmed, and the server's replies there need connection
		// IDs of ours it has not used on the handshake path (RFC 9000,
		// Section 9.5): they go out now (see confirmHandshake).
		if err := c.localIDs.setPeerLimit(p.ActiveConnectionIDLimit); err != nil {
			return err
		}
	}
	if p.HasStatelessResetToken {
		c.peerIDs.setInitialResetToken(p.StatelessResetToken)
	}
	if p.HasPreferredAddress && c.role == wire.RoleClient {
		pa := p.PreferredAddress
		if err := c.peerIDs.addPreferredAddress(pa.ConnectionID, pa.StatelessResetToken); err != nil {
			return err
		}
	}
	c.rtt.SetMaxAckDelay(p.MaxAckDelay)
	if c.earlyParams == nil {
		// A client that may still send 0-RTT packets keeps the
		// remembered limits until the handshake completes (end0RTT).
		c.applyPeerLimits()
	}
	if p.MaxUDPPayloadSize < uint64(c.maxDatagramSize) {
		c.maxDatagramSize = int(p.MaxUDPPayloadSize)
	}
	c.pmtuOnPeerParams(p.MaxUDPPayloadSize)
	// "Each endpoint advertises a max_idle_timeout, but the effective
	// value at an endpoint is computed as the minimum of the two
	// advertised values (or the sole advertised value, if only one
	// endpoint advertises a non-zero value)." (RFC 9000, Section 10.1)
	idle := c.config.MaxIdleTimeout
	if idle < 0 {
		idle = 0
	}
	if p.MaxIdleTimeout > 0 && (idle == 0 || p.MaxIdleTimeout < idle) {
		idle = p.MaxIdleTimeout
	}
	c.idleTimeout = idle
	return nil
}

// applyPeerLimits puts the flow-control and stream limits of the peer's
// transport parameters in force.
func (c *connState) applyPeerLimits() {
	c.connSend.OnMaxData(c.peerParams.InitialMaxData)
	c.streams.onConnCredit()
	c.streams.onPeerParams(c.peerParams)
	c.releaseHeldStreams()
}

func (c *connState) onHandshakeComplete(now time.Time) {
	c.handshakeComplete = true
	c.used0RTT = c.tls.EarlyDataAccepted()
	if c.role == wire.RoleClient {
		// "a client MUST NOT send 0-RTT packets once it starts processing
		// 1-RTT packets" (RFC 9001, Section 4.1.4 / 5.6)
		c.zeroRTTSeal = nil
		c.end0RTT()
	}
	c.events.handshakeComplete = true
	c.handshakeTimeout = time.Time{}
	if c.role == wire.RoleServer {
		// "the TLS handshake is considered confirmed at the server when
		// the handshake completes" (RFC 9001, Section 4.1.2); "The server
		// MUST send a HANDSHAKE_DONE frame as soon as the handshake is
		// complete." (RFC 9000, Section 19.20)
		c.handshakeDoneToSend = true
		c.newTokenToSend = c.newTokenFor.valid()
		c.confirmHandshake(now)
	}
	c.resetIdleTimer(now)
	if c.handshakeCompleted != nil {
		c.handshakeCompleted()
	}
}

// confirmHandshake discards the Handshake keys: "An endpoint MUST discard
// its Handshake keys when the TLS handshake is confirmed"
// (RFC 9001, Section 4.9.2).
func (c *connState) confirmHandshake(now time.Time) {
	if c.handshakeConfirmed {
		return
	}
	c.handshakeConfirmed = true
	c.params = nil
	c.sent.SetHandshakeConfirmed(now)
	c.dropSpace(now, ackhandler.SpaceHandshake)
	if c.oneRTT != nil {
		c.oneRTT.SetHandshakeConfirmed()
	}
	// Spare connection IDs serve a peer that moves to another path (or
	// retires IDs), which "MUST NOT initiate connection migration before
	// the handshake is confirmed" (RFC 9000, Section 9): they are issued
	// now rather than with the peer's transport parameters, by the next
	// pollTransmit (issueSpareConnIDs). A server's first flight thus
	// spends none of its anti-amplification allowance on
	// NEW_CONNECTION_ID frames, and a connection that ends with its
	// handshake (the peer's CONNECTION_CLOSE arriving with its Finished)
	// makes and routes none.
	c.spareConnIDsDue = c.peerParams != nil
	c.migrateToPreferredAddress(now)
}

// issueDueConnIDs issues the spare connection IDs that are due, if any,
// so that their issue events reach the endpoint, and their frames the
// next datagram, as the driver routes the events before it polls
// (Conn.routeConnIDs); pollTransmit issues them otherwise.
func (c *connState) issueDueConnIDs(now time.Time) {
	if c.spareConnIDsDue && c.closeState == stateActive {
		c.issueSpareConnIDs(now)
	}
}

// issueSpareConnIDs issues the connection IDs that confirmHandshake made
// due, up to the peer's active_connection_id_limit (RFC 9000,
// Section 5.1.1).
func (c *connState) issueSpareConnIDs(now time.Time) {
	c.spareConnIDsDue = false
	if err := c.localIDs.setPeerLimit(c.peerParams.ActiveConnectionIDLimit); err != nil {
		c.closeWithError(now, err)
	}
}

// dropSpace discards the keys and state of a packet number space
// (RFC 9001, Section 4.9).
func (c *connState) dropSpace(now time.Time, s ackhandler.Space) {
	sp := &c.spaces[s]
	if sp.discarded {
		return
	}
	sp.discarded = true
	sp.seal, sp.open = nil, nil
	// Nothing reads the received packets of a discarded space, nor
	// sends its ACK frames.
	sp.recv, sp.ackFrame = nil, wire.AckFrame{}
	if s == ackhandler.SpaceInitial {
		// The first version's Initial keys, kept after a switch of
		// version, go with the space (RFC 9369, Section 4.1).
		c.firstInitialOpen = nil
	}
	sp.dropCrypto()
	c.sent.DropSpace(now, s)
}

// retryUndecryptable processes packets buffered before their keys arrived.
func (c *connState) retryUndecryptable(now time.Time) {
	pending := c.undecryptable
	c.undecryptable = nil
	for _, p := range pending {
		c.handlePacket(now, p, ackhandler.NotECT, false)
	}
}
