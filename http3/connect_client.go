package http3

import (
	"context"
	"errors"
	"net/http"

	"github.com/quicstack/quic"
)

// ErrExtendedConnectNotSupported is returned by OpenRequestStream when the
// server did not send SETTINGS_ENABLE_CONNECT_PROTOCOL: "A client MUST
// NOT send extended CONNECT requests" before it has (RFC 8441, Section 4,
// for HTTP/3 by RFC 9220, Section 3).
var ErrExtendedConnectNotSupported = errors.New("http3: server does not support extended CONNECT")

// OpenRequestStream sends req, an extended CONNECT request (RFC 9220), and
// returns the response header and the request stream. req.Method must be
// http.MethodConnect and req.Header[":protocol"] the protocol to run, as
// with net/http's HTTP/2 transport (or req.Proto, as with quic-go's
// http3); req.URL gives :authority and :path.
// req.Body is ignored: the content goes through the RequestStream.
//
// The call waits for the server's SETTINGS and returns
// ErrExtendedConnectNotSupported if the server does not allow extended
// CONNECT. The response's Body is empty: read its content from the
// stream. A 2xx status means the server accepted the protocol; otherwise
// close the stream. Cancelling req's context resets the stream with
// H3_REQUEST_CANCELLED at any time. Close the stream when done with it.
func (t *Transport) OpenRequestStream(req *http.Request) (*http.Response, *RequestStream, error) {
	return t.openRequestStream(req, nil)
}

// openRequestStream is OpenRequestStream, with accept, if not nil,
// checking the server's SETTINGS first (OpenRequestStreamIf).
func (t *Transport) openRequestStream(req *http.Request, accept func(qc *quic.Conn, peer []Setting) error) (*http.Response, *RequestStream, error) {
	closeBody(req)
	if req.URL == nil || req.URL.Scheme != "https" || req.URL.Host == "" {
		return nil, nil, errors.New("http3: request URL must be https with a host")
	}
	if protocolOf(req) == "" {
		return nil, nil, errors.New("http3: OpenRequestStream needs a CONNECT request with a :protocol header")
	}
	if err := checkHeader(req.Header); err != nil {
		return nil, nil, err
	}
	ctx := req.Context()
	cc, err := t.getConn(req, authorityOf(req), req.URL.Hostname())
	if err != nil {
		return nil, nil, err
	}
	defer cc.unreserve(req) // if the request did not start
	select {
	case <-cc.peerSettingsDone:
	case <-cc.qc.Context().Done():
		return nil, nil, context.Cause(cc.qc.Context())
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if !cc.peerSettings.EnableConnectProtocol {
		return nil, nil, ErrExtendedConnectNotSupported
	}
	if accept != nil {
		if err := accept(cc.qc, cc.peerSettings.list()); err != nil {
			return nil, nil, err
		}
		if err := checkHeader(req.Header); err != nil {
			return nil, nil, err
		}
	}
	fields, err := requestFields(req, false)
	if err != nil {
		return nil, nil, err
	}
	str, r, err := cc.openRequest(req, fields, false)
	if err != nil {
		var re *retryableError
		if errors.As(err, &re) {
			err = re.err
		}
		return nil, nil, err
	}
	var dgq *datagramQueue
	if cc.ours.H3Datagram {
		dgq = cc.registerDatagrams(str)
	}
	cancel := context.AfterFunc(ctx, func() { cc.resetStream(str, ErrCodeRequestCancelled) })
	context.AfterFunc(str.Context(), func() { r.done(); cancel() })
	resp, err := cc.readResponse(ctx, req, str, nil)
	if err != nil {
		cc.resetStream(str, ErrCodeRequestCancelled)
		return nil, nil, err
	}
	b := resp.Body.(*body)
	resp.Body = http.NoBody
	return resp, newRequestStream(cc.connection, str, b, dgq), nil
}
