// Package http3 implements HTTP/3 (RFC 9114) over the QUIC transport of
// package quic, with QPACK (RFC 9204) field compression from package
// qpack.
//
// A Server serves an http.Handler:
//
//	srv := &http3.Server{Handler: mux, TLSConfig: tlsConf}
//	err := srv.ListenAndServe("0.0.0.0:443")
//
// A Transport is an http.RoundTripper for https URLs:
//
//	client := &http.Client{Transport: &http3.Transport{}}
//	resp, err := client.Get("https://example.com/")
//
// Each side opens its control stream (SETTINGS first) and the QPACK
// encoder and decoder streams; the QPACK dynamic table is used in both
// directions (SETTINGS_QPACK_MAX_TABLE_CAPACITY 4096,
// SETTINGS_QPACK_BLOCKED_STREAMS 100). Server push is not supported: no
// MAX_PUSH_ID is ever sent, so a server never pushes to this client. Protocol
// violations close the connection or reset the stream with the error codes
// of RFC 9114, Section 8.1 (ErrCode).
package http3
