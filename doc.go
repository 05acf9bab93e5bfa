// Package quic is a QUIC transport (RFC 9000, 9001, 9002; QUIC version 2,
// RFC 9369) for clients and servers.
//
// # Using it
//
// A server listens and accepts connections, then streams:
//
//	l, err := quic.ListenAddr("0.0.0.0:4433", tlsConf, nil)
//	conn, err := l.Accept(ctx)
//	stream, err := conn.AcceptStream(ctx)
//
// A client dials and opens streams:
//
//	conn, err := quic.DialAddr(ctx, "example.com:4433", tlsConf, nil)
//	stream, err := conn.OpenStreamSync(ctx)
//	stream.Write(request)
//	stream.CloseWrite()
//	response, err := io.ReadAll(stream)
//
// tls.Config must name the application protocol in NextProtos (QUIC
// requires ALPN). A Transport lets one UDP socket serve a listener and any
// number of dialed connections at once, and holds socket-wide settings:
// the connection-ID generator, the stateless reset key, the handshake
// limit. Config holds per-connection settings; its zero value is usable.
//
// # Resumption, 0-RTT and address validation
//
// A client whose tls.Config has a ClientSessionCache resumes sessions.
// Transport.DialEarly also sends 0-RTT data when the session allows it
// and the server set Config.Allow0RTT (Transport.ListenEarly hands such
// connections to the application before their handshake completes). 0-RTT
// data can be replayed: see Stream.ReceivedEarlyData. If the server
// declines, the data is sent again after the handshake without the
// application noticing. A server validates client addresses with Retry
// packets (Transport.RequireAddressValidation, or automatically under
// load) and gives clients NEW_TOKEN tokens for their next connection
// (Config.TokenStore), all protected by Transport.TokenKey.
//
// # Paths
//
// A connection survives a change of the client's address: a server
// follows a client whose NAT rebinds or that migrates, after validating
// the new address, and reverts if the validation fails. A client moves to
// another socket with Conn.Migrate, and to a server's preferred address
// (Listener.SetPreferredAddress) on its own. Each side discovers the
// largest datagram its path carries (Config.MaxPacketSize,
// Config.DisablePathMTUDiscovery). docs/paths.md has the
// details.
//
// # Layers
//
//	application ── Conn, Stream, SendStream, ReceiveStream (this package)
//	              Transport: UDP socket, routing by connection ID
//	              endpoint: what to do with a datagram no connection owns
//	              connState: the protocol state machine of one connection
//	protocol    ── wire/        bytes <-> headers, frames, transport parameters
//	              handshake/   TLS 1.3 through crypto/tls, packet protection, key update
//	              ackhandler/  ACK generation, sent packets, loss detection, PTO
//	              congestion/  RTT, Cubic (default), BBR, NewReno, pacing
//	              flowcontrol/ stream and connection windows, auto-tuned
//
// # The life of a packet
//
// In: the Transport's single read goroutine reads a datagram into a pooled
// buffer, parses the destination connection ID (without allocating),
// looks it up in a sharded table and hands the datagram to that
// connection's bounded queue; if the queue is full the datagram is dropped
// and counted, so a slow connection never blocks the others. A datagram
// no connection owns goes to the endpoint, a state machine like the
// connection's, which decides, given the time, to start a connection
// (with the state its address token validated), to answer with a Retry,
// a Version Negotiation packet or a stateless reset, to keep 0-RTT data
// that overtook its Initial, or to drop it. The
// connection's goroutine removes header protection, decrypts in place,
// parses the frames straight from the buffer and updates its state;
// stream data is copied once, into the stream's reassembly buffer, and
// wakes the reader.
//
// Out: Write copies data once into the stream's send buffer and wakes the
// connection goroutine. When congestion control and the pacer allow, the
// goroutine packs ACKs, control frames (regenerated with current values
// after a loss), CRYPTO data, datagrams and stream data from the streams in
// round-robin order into full-size packets, coalescing Initial, Handshake
// and 1-RTT packets into one datagram during the handshake, seals them in
// place and writes them to the socket.
//
// # Who owns what
//
// connState never reads the clock, never touches a socket and starts no
// goroutine: it is handed datagrams and the time and is asked for packets
// and its next deadline. This makes whole connections testable on a
// simulated network with a simulated clock (internal/netsim), where an
// hour of idle time takes milliseconds. Each Conn runs one goroutine that
// owns its connState; nothing else touches protocol state, so it needs no
// lock. Application goroutines meet it only at the edges: a stream's
// buffers under the stream's mutex, the stream map (open, accept) under
// its own mutex, the datagram queues, and a non-blocking wake-up channel.
// No lock is held while another is taken, so there is no lock order to
// get wrong. The endpoint, like connState, is handed the time and
// datagrams; only the goroutines that carry datagrams and time between
// the socket, the endpoint and the connections read the clock or touch
// the socket.
//
// A connection that neither received nor sent a datagram for a second
// releases what it can make again (its expanded 1-RTT keys, sent-packet
// records, buffers; conn_idle_release.go) and its goroutine exits; the next
// datagram, timer or application call starts another, one at a time
// (conn_driver_park.go). An idle server connection so keeps about 12 KB of heap
// and no goroutine stack.
//
// Errors are typed: *TransportError, *ApplicationError (each says whether
// the peer sent it), *IdleTimeoutError and *HandshakeTimeoutError
// (net.Error timeouts), *StatelessResetError, *VersionNegotiationError and
// *StreamError. The package never reads environment variables and never
// writes to the global logger.
package quic

// The map of the files, for maintainers (not part of the package
// documentation). TestDocSansIO checks it: the files listed under
// "Driver files" exist, and every other file of this package, and every
// file of ackhandler, congestion, flowcontrol, handshake and wire, never
// reads the clock (time.Now, time.Since, time.Until, timers, sleeps),
// never opens a socket (net.Dial*, net.Listen*), imports neither os nor
// syscall nor x/sys, and starts no goroutine.
//
// The way of a datagram from the socket to its connection, a straight
// path through these functions:
//
//	Transport.readLoop   transport_io.go     reads a batch from the socket
//	Transport.deliver    transport_io.go     splits GRO runs by connection ID
//	Transport.route      transport.go        asks the endpoint, does what
//	                                         it decided
//	endpoint.handle      endpoint_routes.go  the routing decision, sans-IO:
//	                                         the connection ID's connection
//	                                         (64 sharded locks, no
//	                                         allocation), a closed
//	                                         connection's record, or the
//	                                         connection whose peer's
//	                                         stateless reset token ends the
//	                                         datagram (reset_tokens.go)
//	Conn.enqueue         conn_driver_io.go   the connection's bounded queue
//	Conn.run             conn.go             the connection's goroutine
//	connState.handleDatagramOn  conn_path.go, then conn_recv.go: the core
//
// or, when no connection owns it:
//
//	Transport.handleUnrouted  transport.go  reads the clock, asks the
//	                                        endpoint, does what it decided
//	endpoint.handleUnrouted   endpoint.go   the decision, sans-IO: Version
//	                                        Negotiation, Retry, stateless
//	                                        reset, a new connection, or drop
//	Listener.startConnection  listener.go   a new connection, whose first
//	                                        IDs the endpoint picks and
//	                                        routes (endpoint.newConnID)
//
// and back, the connection's own IDs: connState queues connIDEvent values
// (conn_id_local.go: issue, retire); Conn.routeConnIDs
// (conn_driver_routes.go) hands them to endpoint.handleConnIDEvent before
// each poll for datagrams, and the connection sends an ID to its peer only
// once the endpoint routes it.
//
// Core files (sans-IO): connState and its parts (conn_*.go but conn.go
// and the conn_driver_*.go files), the endpoint (endpoint*.go), the
// streams' state (stream_*.go), and the protocol packages.
//
// The driver: conn.go and conn_driver_*.go (the Conn and its goroutine),
// transport*.go, listener*.go, closed_conn.go and sys_conn*.go. Of these,
// the driver files that read the clock, touch the socket or start
// goroutines are listed here; the others need not.
//
// Driver files (may read the clock, touch the socket, start goroutines):
// conn.go, conn_driver_io.go, conn_driver_park.go, conn_driver_runner.go,
// closed_conn.go, listener.go, transport.go, transport_io.go,
// transport_reuseport.go, reuseport.go, reuseport_linux.go,
// reuseport_other.go, keys_fleet.go, conn_driver_follow.go, addr_early.go,
// netwatch_linux.go, netwatch_other.go, netlink_linux.go, stream.go,
// sys_conn.go, sys_conn_linux.go, sys_conn_other.go,
// sys_conn_errors_windows.go; and two clock-reading wrappers for callers
// outside the state machines, whose connections use the variants that take
// the time: conn_driver_antireplay.go (AntiReplayCache.Admit; connections
// call AdmitAt) and handshake/session_ticket_clock.go
// (handshake.ConfigureSessionTickets; connections seal tickets through
// handshake.Config.SessionTickets at their own time).
