package webtransport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
)

// A Dialer opens WebTransport sessions (draft-ietf-webtrans-http3) to
// servers given by URL, over an HTTP/3 Transport that it makes and
// reuses: sessions to the same authority share a connection when the
// server offers flow control, as does this package's Server. Multiple
// goroutines may invoke methods on a Dialer simultaneously.
//
//	d := &webtransport.Dialer{TLSClientConfig: tlsConf}
//	defer d.Close()
//	resp, sess, err := d.Dial(ctx, "https://example.com/wt", nil)
type Dialer struct {
	// TLSClientConfig is the TLS configuration of the connections; nil
	// means the defaults (see http3.Transport).
	TLSClientConfig *tls.Config
	// QUICConfig configures the QUIC connections; nil means the
	// defaults. Datagrams are enabled on a copy.
	QUICConfig *quic.Config
	// Config holds the flow control limits granted to servers; nil means
	// the defaults.
	Config *Config
	// DialQUIC, if not nil, makes the QUIC connections (see
	// http3.Transport.Dial).
	DialQUIC func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error)

	once  sync.Once
	tr    *http3.Transport
	conns conns
}

// transport returns the Dialer's HTTP/3 Transport, made on first use.
func (d *Dialer) transport() *http3.Transport {
	d.once.Do(func() {
		qc := &quic.Config{}
		if d.QUICConfig != nil {
			*qc = *d.QUICConfig
		}
		qc.EnableDatagrams = true
		// "WebTransport over HTTP/3 relies on the RESET_STREAM_AT frame"
		// (Section 3.1).
		qc.EnableResetStreamAt = true
		// "For draft versions of WebTransport only, clients MUST also
		// send SETTINGS_WT_ENABLED with the draft-specific codepoint"
		// (Section 3.1).
		settings := []http3.Setting{
			{ID: settingWTEnabled, Value: 1},
			{ID: settingEnableWebTransportDraft02, Value: 1},
		}
		settings = append(settings, d.Config.initialSettings()...)
		d.tr = &http3.Transport{
			TLSClientConfig: d.TLSClientConfig,
			QUICConfig:      qc,
			EnableDatagrams: true,
			Dial:            d.DialQUIC,
			Extensions:      d.conns.extensions(settings),
		}
	})
	return d.tr
}

// Close closes the Dialer's connections, ending their sessions.
func (d *Dialer) Close() error {
	return d.transport().Close()
}

// errSecondSession is a Dial to a server that offers no flow control on a
// connection that already carries a session.
var errSecondSession = errors.New("webtransport: the server does not offer flow control, and the connection already carries a session")

// Dial opens a session with an extended CONNECT request for urlStr (an
// https URL) with header h (nil for none), and returns the server's
// response and the session. It waits for the server's SETTINGS and
// returns ErrNotSupported if they do not offer WebTransport (Section
// 3.1); it speaks the current drafts if the server does
// (SETTINGS_WT_ENABLED, upgrade token "webtransport-h3"), draft-02
// otherwise. A response other than 2xx is returned with an error, and no
// session. ctx bounds the dial and the request; the session outlives it.
//
// Browsers send an Origin header (Section 3.2), which a server may
// require: put it in h.
func (d *Dialer) Dial(ctx context.Context, urlStr string, h http.Header) (*http.Response, *Session, error) {
	u, err := url.Parse(urlStr)
	if err != nil {
		return nil, nil, err
	}
	if u.Scheme != "https" {
		return nil, nil, errors.New("webtransport: the URL's scheme must be https")
	}
	hdr := make(http.Header)
	for k, v := range h {
		hdr[k] = append([]string(nil), v...)
	}
	hdr[":protocol"] = []string{protocolH3}
	// Cancelling a request's context resets its stream at any time: the
	// session outlives ctx, which bounds only the dial and the response.
	reqCtx, cancelReq := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancelReq)
	defer stop()
	req := (&http.Request{Method: http.MethodConnect, URL: u, Host: u.Host, Header: hdr}).WithContext(reqCtx)
	var (
		proto string
		cs    *connState
		fc    flowControl
		// reserved is the connection on which the session is reserved
		// (connState.reserve), until it is added or given up.
		reserved *connState
	)
	resp, rs, err := d.transport().OpenRequestStreamIf(req, func(qc *quic.Conn, peer []http3.Setting) error {
		if !hasSetting(peer, 0x33, 1) || !qc.ConnectionState().SupportsDatagrams {
			return ErrNotSupported
		}
		switch {
		case hasSetting(peer, settingWTEnabled, 1):
			proto = protocolH3
		case hasSetting(peer, settingEnableWebTransportDraft02, 1):
			proto = protocolDraft02
			hdr.Set(draft02Header, "1")
		default:
			return ErrNotSupported
		}
		hdr[":protocol"] = []string{proto}
		cs = d.conns.get(qc)
		fc = newFlowControl(d.Config, peer)
		// "If flow control is not enabled, clients MUST NOT attempt to
		// establish more than one simultaneous WebTransport session."
		// (Section 5.1)
		// The check reserves the session at once, so that concurrent
		// Dials cannot all pass it before one adds its session.
		if reserved != nil {
			reserved.unreserve() // a second call, for another connection
			reserved = nil
		}
		if !cs.reserve(!fc.enabled) {
			return errSecondSession
		}
		reserved = cs
		return nil
	})
	if err != nil {
		if reserved != nil {
			reserved.unreserve()
		}
		cancelReq()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return resp, nil, err
	}
	if !stop() {
		cs.unreserve()
		rs.Close() // reset by cancelReq
		return nil, nil, ctx.Err()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		cs.unreserve()
		rs.Close()
		return resp, nil, fmt.Errorf("webtransport: the server answered %s", resp.Status)
	}
	sess := newSession(rs, cs, proto, fc)
	sess.resp = resp
	if !cs.add(sess) {
		return resp, nil, context.Cause(cs.qc.Context())
	}
	sess.start()
	return resp, sess, nil
}
