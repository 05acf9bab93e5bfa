// Package masque proxies UDP in HTTP/3: CONNECT-UDP (RFC 9298), as
// private relays (Apple's iCloud Private Relay, Cloudflare's WARP) use it
// to carry QUIC and DNS for their clients.
//
// A Proxy is an http.Handler for an http3.Server (set up with
// ConfigureServer) that serves extended CONNECT requests with the
// "connect-udp" upgrade token: it takes the target from the request's URI
// (a URI Template with target_host and target_port, DefaultTemplate
// unless Proxy.Template says otherwise), authenticates the request
// (Proxy.Authenticate), resolves the target's name, checks it against a
// policy (Proxy.Policy; DefaultPolicy refuses loopback, private,
// link-local, multicast and broadcast targets and the proxy's own
// addresses, so that the proxy is no open relay into its operator's
// network), opens a connected UDP socket to it, and relays payloads in
// HTTP Datagrams with Context ID 0 (RFC 9298, Section 5), or in DATAGRAM
// capsules where the connection has no HTTP/3 datagrams. A tunnel idle
// for Proxy.IdleTimeout (two minutes by default) is closed.
//
//	srv := &http3.Server{Addr: ":443", TLSConfig: tlsConf, Handler: &masque.Proxy{}}
//	masque.ConfigureServer(srv)
//	err := srv.ListenAndServe()
//
// A Client opens tunnels through a proxy: DialUDP returns a Conn, a
// net.PacketConn connected to the target, on which a quic.Transport runs
// a QUIC connection through the proxy (QUIC inside MASQUE):
//
//	c := &masque.Client{Template: "https://proxy.example/.well-known/masque/udp/{target_host}/{target_port}/"}
//	tunnel, err := c.DialUDP(ctx, "192.0.2.1:443")
//	tr := &quic.Transport{Conn: tunnel}
//	conn, err := tr.Dial(ctx, tunnel.RemoteAddr(), tlsConf, &quic.Config{InitialPacketSize: 1200})
//
// Context IDs other than 0 (extensions) are dropped on receipt.
package masque
