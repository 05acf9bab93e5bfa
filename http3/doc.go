// Package http3 implements HTTP/3 (RFC 9114) over the QUIC transport of
// package quic, with QPACK (RFC 9204) field compression from package
// qpack, for net/http: a Server serves an http.Handler and a Transport is
// an http.RoundTripper.
//
// A Server serves an http.Handler:
//
//	srv := &http3.Server{Addr: ":443", Handler: mux, TLSConfig: tlsConf}
//	err := srv.ListenAndServe() // or ListenAndServeTLS(certFile, keyFile)
//
// Serve takes a net.PacketConn and ServeListener a *quic.Listener (made
// with quic.Transport.ListenEarly to serve requests sent in 0-RTT).
// Shutdown sends GOAWAY and lets the requests in flight finish. A
// DualServer serves HTTP/1.1 and HTTP/2 over TCP (a net/http Server, with
// an Alt-Svc header, see Server.SetQUICHeaders) and HTTP/3 over UDP (a
// Server) on the same port, with a graceful Shutdown of both; the
// package-level ListenAndServeTLS is its short form.
//
// Handlers see net/http semantics: r.Proto "HTTP/3.0", r.TLS, streamed
// bodies, trailers both ways (response trailers that RFC 9110, Section
// 6.5.1 does not allow, such as Content-Length or Authorization, are
// dropped, as net/http's HTTP/2 server drops them), HEAD, 1xx responses
// (WriteHeader(103) sends
// Early Hints), 100 Continue when the handler reads an Expect:
// 100-continue body, http.Flusher, http.ResponseController (deadlines,
// FlushError, EnableFullDuplex) and http.MaxBytesReader; a panic resets
// only its request stream (H3_INTERNAL_ERROR) and is logged, with its
// stack, to Server.Logger if set. The package never writes to the global
// logger. Error messages name HTTP/3 codes (H3_INTERNAL_ERROR, not 0x102).
//
// An AutoTransport is the http.RoundTripper for clients that talk to
// sites as browsers do: HTTP/2 or HTTP/1.1 over TCP until a site
// advertises HTTP/3 (Alt-Svc, or DNS HTTPS records), then HTTP/3, racing
// QUIC against TCP and falling back to TCP when UDP does not get through,
// its QUIC connections following the device from one network to another:
//
//	client := &http.Client{Transport: &http3.AutoTransport{}}
//	resp, err := client.Get("https://example.com/")
//
// A Transport is an http.RoundTripper for https URLs over HTTP/3 only:
//
//	client := &http.Client{Transport: &http3.Transport{}}
//	resp, err := client.Get("https://example.com/")
//
// It keeps one connection per authority for concurrent requests, takes a
// new one after GOAWAY or when the server's stream limit stays reached,
// cancels requests with their context (H3_REQUEST_CANCELLED), reports
// interim responses to httptrace.ClientTrace.Got1xxResponse (and can hold
// an Expect: 100-continue body back, ExpectContinueTimeout), decompresses
// gzip transparently unless DisableCompression, and can send GET and HEAD
// requests in 0-RTT on resumed connections (Allow0RTT).
//
// Extended CONNECT (RFC 9220) and HTTP datagrams with the capsule
// protocol (RFC 9297) are the base of WebTransport and MASQUE: with
// Server.EnableExtendedConnect (and EnableDatagrams) a handler takes the
// request stream over through HTTPStreamer, and a client opens one with
// Transport.OpenRequestStream; both get a RequestStream to read, write,
// exchange capsules and datagrams on.
//
// Each side opens its control stream (SETTINGS first) and the QPACK
// encoder and decoder streams; the QPACK dynamic table is used in both
// directions (SETTINGS_QPACK_MAX_TABLE_CAPACITY 4096,
// SETTINGS_QPACK_BLOCKED_STREAMS 100). SETTINGS_MAX_FIELD_SECTION_SIZE is
// enforced on receipt (Server.MaxHeaderBytes, 431 for a request above it;
// Transport.MaxResponseHeaderBytes) and the peer's value is honoured when
// sending. Fields are validated with golang.org/x/net/http/httpguts;
// malformed messages are reset with H3_MESSAGE_ERROR. Server push is not
// supported: no MAX_PUSH_ID is ever sent, so a server never pushes to this
// client. Protocol violations close the connection or reset the stream
// with the error codes of RFC 9114, Section 8.1 (ErrCode).
package http3
