package webtransport

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
)

// A Server accepts WebTransport sessions in the handlers of an
// http3.Server: ConfigureServer sets the HTTP/3 server up, and a handler
// calls Upgrade on a request for a WebTransport resource. It speaks both
// the current drafts (upgrade token "webtransport-h3", as quic-go's
// webtransport-go does) and draft-02 ("webtransport", as Chromium does).
// Multiple goroutines may invoke methods on a Server simultaneously.
//
//	wt := &webtransport.Server{}
//	srv := &http3.Server{Addr: ":443", TLSConfig: tlsConf}
//	wt.ConfigureServer(srv)
//	http.HandleFunc("/wt", func(w http.ResponseWriter, r *http.Request) {
//		sess, err := wt.Upgrade(w, r)
//		if err != nil {
//			return // Upgrade answered the request
//		}
//		go serve(sess)
//	})
type Server struct {
	// Config holds the flow control limits granted to clients; nil
	// means the defaults.
	Config *Config
	// CheckOrigin reports whether a request's Origin header is
	// acceptable: "the WebTransport server MUST verify the Origin header
	// to ensure that the specified origin is allowed to access the server
	// in question" (draft-ietf-webtrans-http3, Section 3.2). nil accepts a
	// request without Origin, and one whose Origin's host and port are
	// the request's :authority.
	CheckOrigin func(r *http.Request) bool
	// SettingsTimeout bounds how long Upgrade waits for the client's
	// SETTINGS, which may arrive after the CONNECT request (Section 4.6).
	// Zero means 5 seconds.
	SettingsTimeout time.Duration

	conns conns
}

// ConfigureServer enables on srv what WebTransport needs: extended
// CONNECT (RFC 9220), HTTP/3 and QUIC datagrams (RFC 9297, RFC 9221),
// the WebTransport settings (SETTINGS_WT_ENABLED, the draft-02
// SETTINGS_ENABLE_WEBTRANSPORT, SETTINGS_WT_MAX_SESSIONS and the flow
// control limits), and the stream handlers that route WebTransport
// streams to their sessions (srv.Extensions, which it replaces). Call it
// before srv serves.
func (s *Server) ConfigureServer(srv *http3.Server) {
	srv.EnableExtendedConnect = true
	srv.EnableDatagrams = true
	qc := &quic.Config{}
	if srv.QUICConfig != nil {
		*qc = *srv.QUICConfig
	}
	qc.EnableDatagrams = true
	// "WebTransport over HTTP/3 relies on the RESET_STREAM_AT frame"
	// (Section 3.1).
	qc.EnableResetStreamAt = true
	srv.QUICConfig = qc
	settings := []http3.Setting{
		{ID: settingWTEnabled, Value: 1},
		{ID: settingEnableWebTransportDraft02, Value: 1},
		{ID: settingWTMaxSessions, Value: maxStreamsLimit},
	}
	settings = append(settings, s.Config.initialSettings()...)
	srv.Extensions = s.conns.extensions(settings)
}

// Upgrade accepts a WebTransport session on an extended CONNECT request
// (Section 3.2) and answers it with 200. r must come from an http3.Server
// that ConfigureServer set up. If the request is not acceptable, Upgrade
// answers it and returns an error: 405 (Method Not Allowed) for a request
// that is not a WebTransport CONNECT ("If the target resource does not
// support WebTransport, the server SHOULD reply with status code 405"),
// 403 (Forbidden) for an origin CheckOrigin refuses, 400 (Bad Request) if
// the client's SETTINGS lack HTTP/3 datagrams or do not come in time, and
// 429 (Too Many Requests) for a second session on a connection without
// flow control (Section 5.2). A handler that wants another answer checks
// first.
//
// Response headers set on w before the call are sent with the 200. The
// session lives on after the handler returns, until it is closed.
func (s *Server) Upgrade(w http.ResponseWriter, r *http.Request) (*Session, error) {
	proto := r.Header.Get(":protocol")
	if r.Method != http.MethodConnect || (proto != protocolH3 && proto != protocolDraft02) {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return nil, errors.New("webtransport: not a WebTransport CONNECT request")
	}
	ew, ok := w.(http3.ExtendedConnectWriter)
	if !ok {
		w.WriteHeader(http.StatusInternalServerError)
		return nil, errors.New("webtransport: the ResponseWriter is not an http3 one")
	}
	check := s.CheckOrigin
	if check == nil {
		check = sameOrigin
	}
	if !check(r) {
		w.WriteHeader(http.StatusForbidden)
		return nil, errors.New("webtransport: origin not allowed")
	}
	// "the server MUST NOT process any incoming WebTransport requests
	// until the client's SETTINGS have been received" (Section 3.1).
	timeout := s.SettingsTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	peer, err := ew.PeerSettings(ctx)
	cancel()
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return nil, err
	}
	// "If the server receives SETTINGS that do not have correct values
	// for every required setting ... the server MUST treat all
	// established and newly incoming WebTransport sessions as malformed"
	// (Section 3.1): the client must support HTTP/3 datagrams.
	if !hasSetting(peer, 0x33, 1) || !ew.QUICConn().ConnectionState().SupportsDatagrams {
		w.WriteHeader(http.StatusBadRequest)
		return nil, errors.New("webtransport: the client did not enable HTTP/3 datagrams")
	}
	qc := ew.QUICConn()
	cs := s.conns.get(qc)
	fc := newFlowControl(s.Config, peer)
	// "A server that receives more than one session on an underlying
	// transport connection when flow control is not enabled MUST reset
	// the excessive CONNECT streams" (Section 5.1); 429 "indicates that
	// the request was rejected due to rate limiting" (Section 5.2).
	if !cs.reserve(!fc.enabled) {
		w.WriteHeader(http.StatusTooManyRequests)
		return nil, errors.New("webtransport: a second session on a connection without flow control")
	}
	if r.Header.Get(draft02Header) == "1" {
		w.Header().Set(draft02ResponseHeader, "draft02")
	}
	// The session is known before the response goes out, so that the
	// streams the client opens once it reads the response find it.
	rs := ew.HTTPStream() // sends the response header
	sess := newSession(rs, cs, proto, fc)
	if !cs.add(sess) {
		rs.CancelWrite(codeSessionGone)
		return nil, context.Cause(qc.Context())
	}
	sess.start()
	return sess, nil
}

// sameOrigin accepts requests without Origin and those whose Origin's
// host is the request's authority.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// hasSetting reports whether settings hold id with value v.
func hasSetting(settings []http3.Setting, id, v uint64) bool {
	for _, s := range settings {
		if s.ID == id {
			return s.Value == v
		}
	}
	return false
}

// Drain asks the peer of every session the server has established to end
// it soon, with a WT_DRAIN_SESSION capsule (Section 4.7); the sessions go
// on meanwhile. Call it before http3.Server.Shutdown, whose GOAWAY makes
// new requests go elsewhere but does not end sessions: Shutdown waits for
// their CONNECT streams to end, or for its context.
func (s *Server) Drain() {
	for _, sess := range s.conns.sessions() {
		sess.Drain()
	}
}
