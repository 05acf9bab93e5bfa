// Package webtransport implements WebTransport over HTTP/3
// (draft-ietf-webtrans-http3) on package http3: sessions that multiplex
// bidirectional and unidirectional streams and datagrams over an HTTP/3
// connection, established with extended CONNECT (RFC 9220) and carried
// with HTTP Datagrams and the Capsule Protocol (RFC 9297).
//
// Two generations of the draft are spoken, chosen by the SETTINGS the
// peers exchange (Section 8.1, negotiating the draft version): the
// current one (SETTINGS_WT_ENABLED 0x2c7cf000, upgrade token
// "webtransport-h3", flow control with WT_MAX_STREAMS and WT_MAX_DATA),
// which quic-go's webtransport-go speaks, and draft-02
// (SETTINGS_ENABLE_WEBTRANSPORT 0x2b603742, upgrade token
// "webtransport"), which Chromium's JavaScript WebTransport API speaks.
// Streams, datagrams, stream error codes and WT_CLOSE_SESSION are the
// same in both.
//
// A Server accepts sessions in the handlers of an http3.Server set up by
// ConfigureServer; a Dialer opens sessions to URLs. Both give a Session,
// with AcceptStream, AcceptUniStream, OpenStream(Sync),
// OpenUniStream(Sync), SendDatagram, ReceiveDatagram, CloseWithError
// (WT_CLOSE_SESSION), Drain and Draining (WT_DRAIN_SESSION). Streams are
// associated with their session by the session ID in their header;
// resets carry 32-bit application error codes, mapped into the HTTP/3
// range WT_APPLICATION_ERROR, and are sent as RESET_STREAM_AT frames that
// still deliver the stream header (quic.Config.EnableResetStreamAt,
// which ConfigureServer and the Dialer set). A connection carries several
// sessions when both sides send flow control limits (Config), as this
// package does by default; otherwise one at a time (Section 5.1).
//
// Streams that arrive before their session (at most 16 per connection,
// for 5 seconds) wait for it, and are then reset with
// WT_BUFFERED_STREAM_REJECTED; when a session ends, its streams are reset
// with WT_SESSION_GONE. Origin checks are the handler's, through
// Server.CheckOrigin (by default, the Origin must be the request's own
// authority).
package webtransport
