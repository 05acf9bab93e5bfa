package quic

import (
	"context"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/wire"
)

// Config configures a QUIC connection. The zero value is valid: every field
// left zero takes the default its comment states. A Config may be shared by
// many connections and must not be modified once in use.
type Config struct {
	// HandshakeIdleTimeout bounds how long the handshake may stay idle
	// (no packet received) before the attempt fails with a
	// *HandshakeTimeoutError. Default 5 s.
	HandshakeIdleTimeout time.Duration

	// MaxIdleTimeout is the idle timeout this endpoint advertises: the
	// connection closes silently after this long without receiving a
	// packet, or after the peer's value if smaller (RFC 9000,
	// Section 10.1). Default 30 s. Negative disables the idle timeout on
	// this side.
	MaxIdleTimeout time.Duration

	// KeepAlivePeriod, when positive, sends a PING after this long without
	// sending ack-eliciting packets, to keep the connection and NAT
	// bindings alive. It is capped at half the effective idle timeout.
	// Default 0: no keep-alive; 15 s with FollowNetwork.
	KeepAlivePeriod time.Duration

	// InitialStreamReceiveWindow is the initial flow-control window of
	// each stream. Default 512 KiB.
	InitialStreamReceiveWindow uint64
	// MaxStreamReceiveWindow is how far auto-tuning may grow a stream's
	// window when the application reads fast. Default 16 MiB. Both
	// windows are clamped to 2^62-1; MaxStreamReceiveWindow is at least
	// InitialStreamReceiveWindow.
	MaxStreamReceiveWindow uint64
	// InitialConnectionReceiveWindow is the initial connection-level
	// window. Default 768 KiB.
	InitialConnectionReceiveWindow uint64
	// MaxConnectionReceiveWindow bounds connection-level auto-tuning, and
	// so how much received data the connection buffers. The window grows
	// when the application reads fast, and also when the peer has used
	// the window up with data the application has not read yet while an
	// application goroutine waits in a Read or an Accept: an application
	// that reads the streams one after another, or accepts streams before
	// it reads them, would otherwise wait forever. One that leaves this
	// much unread while it waits for more still blocks.
	// Default 24 MiB. Both connection windows are clamped to 2^62-1.
	MaxConnectionReceiveWindow uint64

	// MaxIncomingStreams is how many bidirectional streams the peer may
	// have open at once. A stream counts until the application has
	// accepted it and both directions are finished, so streams waiting
	// to be accepted are bounded too. Default 100. Negative allows none;
	// values above 2^60 are treated as 2^60.
	MaxIncomingStreams int64
	// MaxIncomingUniStreams is how many unidirectional streams the peer
	// may have open at once, counted as for MaxIncomingStreams.
	// Default 100. Negative allows none; values above 2^60 are treated as
	// 2^60.
	MaxIncomingUniStreams int64

	// EnableDatagrams enables the unreliable datagram extension
	// (RFC 9221).
	EnableDatagrams bool
	// DatagramQueueLen bounds each of a connection's two datagram
	// queues: the payloads SendDatagram queued that wait to be sent
	// (congestion control paces them), and those received that wait for
	// ReceiveDatagram. When a queue is full, a new payload pushes out the
	// oldest, which is counted in ConnectionStats and reported to the
	// Tracer; SendDatagramWait waits for room instead. The receive queue
	// holds up to DatagramQueueLen times 64 KiB. Default 32, at most
	// 65536.
	DatagramQueueLen int

	// EnableResetStreamAt enables RESET_STREAM_AT
	// (draft-ietf-quic-reliable-stream-reset): the connection advertises
	// the reset_stream_at transport parameter, so that the peer may reset
	// a stream while still delivering its first bytes, and
	// Stream.CancelWriteAt sends such resets when the peer advertised it
	// too. WebTransport over HTTP/3 requires it.
	EnableResetStreamAt bool

	// Versions are the QUIC versions to use, most preferred first.
	// Default: version 1, then version 2.
	Versions []wire.Version

	// Congestion makes the congestion controller of each connection.
	// Default congestion.NewBBR, for clients and servers alike;
	// congestion.NewCubic and congestion.NewNewReno are provided too, and
	// applications may supply their own congestion.Controller.
	//
	// BBR is the default in both roles because of the weak-network table
	// (docs/weaknet.md, make weaknet): over a 100 ms, 20 Mbit/s link with
	// random loss, a server sending with BBR delivers 100 KB and 1 MB
	// responses several times faster than with Cubic from 1% loss up
	// (1 MB at 5% loss: about 1.6 s against 13 s), where RFC 9438's Cubic
	// stays in its Reno-friendly region and loses to quic-go's more
	// aggressive Reno; without loss the two are equal, and a client's
	// uploads see the same. BBR shares a bottleneck with kernel TCP Cubic
	// within 0.5-2x (internal/linkem's TestCheckFairnessTCP) and with
	// other flows as the ccsim fairness tests check. Cubic remains the
	// better choice where loss means congestion, such as a shallow
	// drop-tail queue shared with many loss-based flows.
	Congestion congestion.ControllerFactory

	// InitialPacketSize is the size of the UDP payloads sent before path
	// MTU discovery finds more, at least 1200. Default 1252, which fits
	// IPv6 tunnels on a 1280-byte MTU path.
	InitialPacketSize int

	// MaxPacketSize is the largest UDP payload path MTU discovery
	// (DPLPMTUD, RFC 8899) searches for; it also stops at the peer's
	// max_udp_payload_size and, on Linux, at the interface's MTU, which
	// the kernel reports. Default on Linux 65527, the largest UDP payload:
	// the search finds 1472 bytes on an Ethernet path (IPv4) and, once
	// the connection sent 4 MB, up to 8972 with jumbo frames and 65507
	// on loopback (within 1.5%), where the larger packets halve the CPU
	// time per byte. Elsewhere 1452 (an Ethernet MTU less the IPv6 and
	// UDP headers). At most 65527. Set below the default
	// InitialPacketSize (with InitialPacketSize unset), it lowers that
	// too, down to 1200: then no datagram is larger than MaxPacketSize.
	MaxPacketSize int
	// DisablePathMTUDiscovery keeps every packet at InitialPacketSize.
	// Default false: the connection probes for larger packets once the
	// handshake is confirmed, falls back to 1200 bytes when large
	// packets stop arriving, and searches again every 10 minutes.
	DisablePathMTUDiscovery bool

	// DisableActiveMigration sends the disable_active_migration transport
	// parameter: the peer must not move the connection to another local
	// address (RFC 9000, Section 9). NAT rebinding is followed anyway.
	// Default false.
	DisableActiveMigration bool
	// FollowNetwork, on a client, moves the connection to a new local
	// socket by itself when the device's network changes, as an
	// application calling Migrate would: when the local address it
	// sends from disappears or the route to the server changes (on
	// Linux, netlink announcements of address and route changes in the
	// socket's network namespace), when a write fails (network
	// unreachable), or when the path stops answering (two probe
	// timeouts in a row without an acknowledgment). It asks the system
	// which local address reaches the server now, probes the path from a
	// new UDP socket on that address (PATH_CHALLENGE, RFC 9000, Section
	// 8.2) and moves there once the path validated; the old path is used
	// until then, and kept if the new one does not validate (tried again
	// at the next change, or after 1 s, doubling to 30 s, while the path
	// stays silent). Streams carry on with their data intact.
	// KeepAlivePeriod defaults to 15 s with it, which keeps NAT bindings
	// that expire after 30 s of silence (common, although RFC 4787,
	// REQ-5 asks NATs for at least 2 minutes) and shows a dead path
	// within seconds. Nothing happens if the server sent
	// disable_active_migration. Sockets of another network namespace
	// than the process's are followed in theirs, which needs
	// CAP_SYS_ADMIN. Default false.
	FollowNetwork bool

	// DisablePreferredAddress, on a client, ignores a server's preferred
	// address. Default false: once the handshake is confirmed, the client
	// validates the preferred address and moves there (RFC 9000,
	// Section 9.6).
	DisablePreferredAddress bool
	// DisableAckFrequency turns the ACK frequency extension off
	// (draft-ietf-quic-ack-frequency): the connection neither sends the
	// min_ack_delay transport parameter, so that the peer may not send it
	// ACK_FREQUENCY or IMMEDIATE_ACK frames, nor asks a peer that sent
	// one for fewer acknowledgments. Default false: the connection
	// advertises a min_ack_delay of 1 ms and follows the peer's requests;
	// with a peer that advertises one, on paths with a smoothed RTT of
	// 4 ms or more (4 times the peer's min_ack_delay, if larger) and once
	// its congestion window holds 32 packets or more, it asks for an
	// acknowledgment every 4 to 32 packets (an eighth of the window, at
	// most) instead of every second one, within a quarter of the RTT, and
	// it puts IMMEDIATE_ACK in its probes.
	DisableAckFrequency bool

	// Allow0RTT, on a server, accepts 0-RTT data from clients resuming a
	// session (RFC 9001, Section 4.6) and issues session tickets that
	// allow it. 0-RTT is accepted only if the limits the client
	// remembers from the earlier connection (stream counts, flow-control
	// windows, datagram size) did not shrink since (RFC 9000,
	// Section 7.4.1). 0-RTT data is not protected against replay: see
	// Stream.ReceivedEarlyData. Clients use 0-RTT through
	// Transport.DialEarly. Default false.
	Allow0RTT bool

	// AntiReplay, on a server with Allow0RTT, is the store that admits each
	// session ticket to 0-RTT at most once, across every server sharing
	// it (see AntiReplay): a replayed first flight then gets no 0-RTT,
	// and its handshake continues in 1-RTT. 0-RTT is also declined for
	// tickets issued more than AntiReplayWindow ago, and whenever the
	// store fails or takes longer than AntiReplayTimeout to answer: a
	// store outage costs 0-RTT, never a handshake. Default nil: 0-RTT is
	// accepted for any valid ticket, as often as it is presented.
	AntiReplay AntiReplay
	// AntiReplayWindow is how long after a ticket's issue 0-RTT may be
	// accepted with it, and so how long the store keeps its key.
	// Default 1 hour.
	AntiReplayWindow time.Duration
	// AntiReplayTimeout bounds each question to the store; the
	// connection's handshake waits that long at most. Default 50 ms.
	AntiReplayTimeout time.Duration

	// TokenStore, on a client, keeps the address tokens servers send in
	// NEW_TOKEN frames and hands one to the next connection to the same
	// server, which can then skip address validation (RFC 9000,
	// Section 8.1.3). Share one store (NewLRUTokenStore) between the
	// Configs of a client. Default nil: tokens are not kept.
	TokenStore TokenStore

	// KeyUpdateInterval, when positive, makes the connection initiate a
	// key update (RFC 9001, Section 6) every KeyUpdateInterval packets it
	// sends, when the RFC allows one. Default 0: update only before the
	// AEAD's confidentiality limit (after 2^22 packets for AES-GCM;
	// ChaCha20-Poly1305 has no practical limit). Connections always follow
	// the peer's key updates.
	KeyUpdateInterval uint64

	// Tracer, if not nil, is called once for each new connection, with
	// the connection's context, its role and its original destination
	// connection ID (the client's first Destination Connection ID, which
	// names qlog files), and returns the connection's Tracer, or nil not
	// to trace it. Package qlog provides one that writes qlog files.
	Tracer func(ctx context.Context, isClient bool, odcid ConnectionID) *Tracer
}

// Defaults of Config.
const (
	defaultHandshakeIdleTimeout  = 5 * time.Second
	defaultMaxIdleTimeout        = 30 * time.Second
	defaultInitialStreamWindow   = 512 << 10
	defaultMaxStreamWindow       = 16 << 20
	defaultInitialConnWindow     = 768 << 10
	defaultMaxConnWindow         = 24 << 20
	defaultMaxIncomingStreams    = 100
	defaultInitialPacketSize     = 1252
	minInitialPacketSize         = 1200
	defaultActiveConnIDLimit     = 4
	defaultMaxDatagramFrameSize  = 65535
	defaultMaxAckDelay           = 25 * time.Millisecond
	defaultAckDelayExponent      = 3
	maxCryptoBufferPerLevel      = 64 << 10
	maxBufferedUndecryptable     = 16
	defaultMaxStreamSendBuffered = 1 << 20
	// maxUDPPayloadSize is the largest UDP payload: "Values above 65527
	// are invalid" for max_udp_payload_size (RFC 9000, Section 18.2).
	maxUDPPayloadSize = 65527
)

// withDefaults returns a copy of c with every zero field set to its
// default. A nil c gives the defaults.
func (c *Config) withDefaults() *Config {
	var d Config
	if c != nil {
		d = *c
	}
	if d.HandshakeIdleTimeout <= 0 {
		d.HandshakeIdleTimeout = defaultHandshakeIdleTimeout
	}
	if d.MaxIdleTimeout == 0 {
		d.MaxIdleTimeout = defaultMaxIdleTimeout
	}
	if d.FollowNetwork && d.KeepAlivePeriod == 0 {
		d.KeepAlivePeriod = defaultFollowKeepAlive
	}
	if d.InitialStreamReceiveWindow == 0 {
		d.InitialStreamReceiveWindow = defaultInitialStreamWindow
	}
	if d.MaxStreamReceiveWindow == 0 {
		d.MaxStreamReceiveWindow = defaultMaxStreamWindow
	}
	// No stream offset exceeds 2^62-1: "The largest offset delivered on a
	// stream -- the sum of the offset and data length -- cannot exceed
	// 2^62-1, as it is not possible to provide flow control credit for
	// that data." (RFC 9000, Section 19.8) Larger windows are clamped, so
	// that the receive buffer, sized by MaxStreamReceiveWindow, holds
	// whatever flow control lets the peer send.
	d.InitialStreamReceiveWindow = min(d.InitialStreamReceiveWindow, wire.MaxVarint)
	d.MaxStreamReceiveWindow = min(max(d.MaxStreamReceiveWindow, d.InitialStreamReceiveWindow), wire.MaxVarint)
	if d.InitialConnectionReceiveWindow == 0 {
		d.InitialConnectionReceiveWindow = defaultInitialConnWindow
	}
	if d.MaxConnectionReceiveWindow == 0 {
		d.MaxConnectionReceiveWindow = defaultMaxConnWindow
	}
	// Sent as initial_max_data, a variable-length integer (RFC 9000,
	// Sections 16 and 18.2): at most 2^62-1.
	d.InitialConnectionReceiveWindow = min(d.InitialConnectionReceiveWindow, wire.MaxVarint)
	d.MaxConnectionReceiveWindow = min(max(d.MaxConnectionReceiveWindow, d.InitialConnectionReceiveWindow), wire.MaxVarint)
	if d.MaxIncomingStreams == 0 {
		d.MaxIncomingStreams = defaultMaxIncomingStreams
	}
	if d.MaxIncomingUniStreams == 0 {
		d.MaxIncomingUniStreams = defaultMaxIncomingStreams
	}
	// A larger max_streams is a TRANSPORT_PARAMETER_ERROR (RFC 9000,
	// Section 4.6).
	d.MaxIncomingStreams = min(d.MaxIncomingStreams, wire.MaxStreamCount)
	d.MaxIncomingUniStreams = min(d.MaxIncomingUniStreams, wire.MaxStreamCount)
	if d.DatagramQueueLen <= 0 {
		d.DatagramQueueLen = datagramQueueLen
	}
	d.DatagramQueueLen = min(d.DatagramQueueLen, maxDatagramQueueLen)
	if len(d.Versions) == 0 {
		d.Versions = []wire.Version{wire.Version1, wire.Version2}
	}
	if d.Congestion == nil {
		d.Congestion = congestion.NewBBR
	}
	if d.InitialPacketSize == 0 {
		d.InitialPacketSize = defaultInitialPacketSize
		// A MaxPacketSize below the default initial size caps it too:
		// no datagram is larger than MaxPacketSize (down to the 1200
		// bytes every path must carry, RFC 9000, Section 14).
		if d.MaxPacketSize > 0 {
			d.InitialPacketSize = min(d.InitialPacketSize, d.MaxPacketSize)
		}
	}
	d.InitialPacketSize = min(max(d.InitialPacketSize, minInitialPacketSize), maxUDPPayloadSize)
	return &d
}
