package http3

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// The construction of a server's http.Request from a request header
// section (RFC 9114, Section 4.3.1), and the checks that keep a handler
// from seeing a request that another HTTP implementation would read
// differently: any violation makes the request malformed, a stream error
// of type H3_MESSAGE_ERROR (Section 4.1.2).

// DefaultReadHeaderTimeout is the Server's ReadHeaderTimeout when it is
// zero. A request's header section is a few hundred bytes to a few
// kilobytes: it arrives in the first flight of its stream, and with the
// QPACK encoder instructions it needs in the same flight, so that even on
// a path of one second's round trip with the same packets lost twice it
// is complete within a few seconds. Ten seconds leaves an honest client
// that margin and bounds what a stalled stream holds (its read buffer, a
// goroutine, its stream credit): net/http sets no limit, and a client
// that keeps its connection alive could hold such streams forever.
const DefaultReadHeaderTimeout = 10 * time.Second

// readHeaderTimeout returns the ReadHeaderTimeout in effect; 0 for none.
func (s *Server) readHeaderTimeout() time.Duration {
	switch {
	case s.ReadHeaderTimeout < 0:
		return 0
	case s.ReadHeaderTimeout == 0:
		return DefaultReadHeaderTimeout
	}
	return s.ReadHeaderTimeout
}

// acquireHandler counts a request about to be served, or reports false if
// MaxConcurrentHandlers are being served already.
func (s *Server) acquireHandler() bool {
	n := s.handlers.Add(1)
	if max := s.MaxConcurrentHandlers; max > 0 && n > int64(max) {
		s.handlers.Add(-1)
		return false
	}
	return true
}

// readRequestHeader reads and decodes the header section of a request
// stream within the server's ReadHeaderTimeout. When that fails it deals
// with the stream itself and returns false: a section larger than
// MaxHeaderBytes gets a 431 (Request Header Fields Too Large) response
// ("An HTTP/3 implementation ... can use the 431 status code", RFC 9114,
// Section 4.2.2); a section not complete in time resets the stream with
// H3_REQUEST_REJECTED; other errors reset it or close the connection as
// they require.
func (sc *serverConn) readRequestHeader(ctx context.Context, str *quic.Stream, br *bufio.Reader) ([]qpack.HeaderField, bool) {
	o := sectionDecode{str: str, br: br}
	if d := sc.srv.readHeaderTimeout(); d > 0 {
		// The deadline bounds the reading, and a wait for encoder
		// stream instructions, if the section blocks.
		o.deadline = time.Now().Add(d)
		str.SetReadDeadline(o.deadline)
		defer str.SetReadDeadline(time.Time{})
	}
	f, err := readHeadersFrame(sc.connection, br)
	var fields []qpack.HeaderField
	if err == nil {
		fields, err = sc.decodeSection(ctx, str.StreamID(), f.Payload, o)
	}
	switch {
	case err == nil:
		return fields, true
	case err == errHeadersTooLarge:
		sc.respondError(str, http.StatusRequestHeaderFieldsTooLarge)
	case errors.Is(err, os.ErrDeadlineExceeded) || err == context.DeadlineExceeded && ctx.Err() == nil:
		sc.logf(slog.LevelDebug, "http3: request header not complete within ReadHeaderTimeout; stream reset with H3_REQUEST_REJECTED",
			slog.Int64("stream", int64(str.StreamID())))
		sc.resetStream(str, ErrCodeRequestRejected)
	default:
		sc.streamFailed(str, err, ErrCodeRequestIncomplete)
	}
	return nil, false
}

// newRequest builds the http.Request of a request stream from its decoded
// header section.
func (sc *serverConn) newRequest(ctx context.Context, str *quic.Stream, br *bufio.Reader, fields []qpack.HeaderField) (*http.Request, error) {
	req, err := newServerRequest(fields, sc.ours.EnableConnectProtocol)
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = sc.remoteAddr()
	req.TLS = sc.tlsState()
	req.Body = &body{c: sc.connection, ctx: ctx, str: str, br: br, contentLength: req.ContentLength, trailer: &req.Trailer}
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, sc.qc.LocalAddr())
	return req.WithContext(ctx), nil
}

// remoteAddr returns the peer's address as Request.RemoteAddr has it,
// formatted once for as long as the address does not change.
func (sc *serverConn) remoteAddr() string {
	a := sc.qc.RemoteAddr()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if a != sc.remote || sc.remoteStr == "" {
		sc.remote, sc.remoteStr = a, a.String()
	}
	return sc.remoteStr
}

// newServerRequest builds an http.Request, without Body, connection
// details or context, from a decoded request header section.
// extendedConnect tells whether the server sent
// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 9220).
func newServerRequest(fields []qpack.HeaderField, extendedConnect bool) (*http.Request, error) {
	p, h, err := splitFields(fields, ":method", ":scheme", ":authority", ":path", ":protocol")
	if err != nil {
		return nil, err
	}
	// "All HTTP/3 requests MUST include exactly one value for the :method
	// ... pseudo-header fields" (Section 4.3.1); "method = token" (RFC
	// 9110, Section 9.1).
	if !p.has(":method") || !validMethod(p.method) {
		return nil, streamError(ErrCodeMessageError, "invalid or missing :method %q", p.method)
	}
	connect := p.method == http.MethodConnect
	if p.has(":protocol") {
		// Extended CONNECT (RFC 9220, Section 3; RFC 8441, Section 4): only
		// with CONNECT, only if we sent SETTINGS_ENABLE_CONNECT_PROTOCOL,
		// and with :scheme, :path and :authority.
		if !connect || !extendedConnect || p.protocol == "" {
			return nil, streamError(ErrCodeMessageError, "unexpected :protocol")
		}
		if !p.has(":scheme") || !p.has(":path") || !p.has(":authority") {
			return nil, streamError(ErrCodeMessageError, "extended CONNECT without :scheme, :path or :authority")
		}
	}
	host, err := requestHost(p, h)
	if err != nil {
		return nil, err
	}
	var u *url.URL
	var requestURI string
	if connect && !p.has(":protocol") {
		// "The :scheme and :path pseudo-header fields are omitted" and
		// "The :authority pseudo-header field contains the host and port
		// to connect to" (Section 4.4); "A server MUST reject a CONNECT
		// request that targets an empty or invalid port number" (RFC
		// 9110, Section 9.3.6).
		if p.has(":scheme") || p.has(":path") || !p.has(":authority") || !validConnectPort(p.authority) {
			return nil, streamError(ErrCodeMessageError, "malformed CONNECT request")
		}
		u = &url.URL{Host: p.authority}
		requestURI = p.authority
	} else {
		// "All HTTP/3 requests MUST include exactly one value for the
		// :method, :scheme, and :path pseudo-header fields, unless the
		// request is a CONNECT request" (Section 4.3.1).
		if !p.has(":scheme") || !p.has(":path") {
			return nil, streamError(ErrCodeMessageError, "missing :scheme or :path")
		}
		if !validScheme(p.scheme) {
			return nil, streamError(ErrCodeMessageError, "invalid :scheme %q", p.scheme)
		}
		// "If the :scheme pseudo-header field identifies a scheme that
		// has a mandatory authority component (including "http" and
		// "https"), the request MUST contain either an :authority
		// pseudo-header field or a Host header field. If these fields
		// are present, they MUST NOT be empty." (Section 4.3.1) "schemes
		// are case-insensitive" (RFC 3986, Section 3.1): "HTTPS" is
		// https.
		if (strings.EqualFold(p.scheme, "http") || strings.EqualFold(p.scheme, "https")) && host == "" {
			return nil, streamError(ErrCodeMessageError, "missing :authority and host")
		}
		if u, err = parseRequestPath(p.method, p.path); err != nil {
			return nil, err
		}
		requestURI = p.path
	}
	h.Del("Host")
	if p.has(":protocol") {
		h[":protocol"] = []string{p.protocol} // as net/http's HTTP/2 server does
	}
	cl, err := parseContentLength(h)
	if err != nil {
		return nil, err
	}
	req := &http.Request{
		Method:        p.method,
		URL:           u,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        h,
		ContentLength: cl,
		Host:          host,
		RequestURI:    requestURI,
	}
	if tr := h.Values("Trailer"); len(tr) > 0 {
		req.Trailer = make(http.Header)
		for _, v := range tr {
			for _, k := range strings.Split(v, ",") {
				if k = textprotoKey(k); k != "" {
					req.Trailer[k] = nil
				}
			}
		}
	}
	return req, nil
}

// requestHost returns the request's host, from :authority or the Host
// field: "If both fields are present, they MUST contain the same value"
// (RFC 9114, Section 4.3.1), "any request message that contains more than
// one Host header field line or a Host header field with an invalid field
// value" is refused (RFC 9110, Section 7.2), and ":authority ... MUST NOT
// include the deprecated userinfo subcomponent" (RFC 9114, Section 4.3.1).
func requestHost(p pseudo, h http.Header) (string, error) {
	hosts := h["Host"]
	if len(hosts) > 1 {
		return "", streamError(ErrCodeMessageError, "%d host fields", len(hosts))
	}
	if len(hosts) == 1 && !validAuthority(hosts[0]) {
		return "", streamError(ErrCodeMessageError, "invalid host %q", hosts[0])
	}
	if p.has(":authority") {
		if !validAuthority(p.authority) {
			return "", streamError(ErrCodeMessageError, "invalid :authority %q", p.authority)
		}
		if len(hosts) == 1 && hosts[0] != p.authority {
			return "", streamError(ErrCodeMessageError, ":authority and host differ")
		}
		return p.authority, nil
	}
	if len(hosts) == 1 {
		return hosts[0], nil
	}
	return "", nil
}

// validAuthority reports whether s is "uri-host [ ":" port ]" (RFC 9110,
// Section 7.2; RFC 3986, Section 3.2) with a non-empty host: "A sender
// MUST NOT generate an "http" URI with an empty host identifier. A
// recipient that processes such a URI reference MUST reject it as
// invalid." (RFC 9110, Section 4.2.1). Userinfo, a path, a query or a
// fragment make it invalid.
func validAuthority(s string) bool {
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		// IP-literal = "[" ( IPv6address / IPvFuture ) "]"; IPvFuture and
		// zone identifiers are not accepted.
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return false
		}
		a, err := netip.ParseAddr(s[1:end])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return false
		}
		host, port = "", s[end+1:]
		if port != "" {
			if port[0] != ':' {
				return false
			}
			port = port[1:]
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
		if !validRegName(host) {
			return false
		}
	} else if !validRegName(host) {
		return false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// validRegName reports whether s is a non-empty "reg-name = *( unreserved /
// pct-encoded / sub-delims )" (RFC 3986, Section 3.2.2), which includes
// IPv4 addresses.
func validRegName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validConnectPort reports whether a valid authority has a port from 1 to
// 65535, as the target of a CONNECT request needs.
func validConnectPort(authority string) bool {
	i := strings.LastIndexByte(authority, ':')
	if i < 0 || strings.HasSuffix(authority, "]") {
		return false
	}
	n, err := strconv.ParseUint(authority[i+1:], 10, 16)
	return err == nil && n > 0
}

// validScheme reports whether s is "scheme = ALPHA *( ALPHA / DIGIT / "+" /
// "-" / "." )" (RFC 3986, Section 3.1).
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// parseRequestPath parses the :path of a request other than CONNECT: the
// origin-form "absolute-path [ "?" query ]" (RFC 9110, Section 7.1; RFC
// 9112, Section 3.2.1), or "*" for OPTIONS (Section 3.2.4): "This
// pseudo-header field MUST NOT be empty for "http" or "https" URIs ... An
// OPTIONS request that does not include a path component includes the
// value "*"" (RFC 9114, Section 4.3.1). The absolute form is not allowed:
// it would give the handler an r.URL whose host is not r.Host. Control
// characters, spaces and a fragment ("#") are refused too; other bytes
// outside RFC 3986's pchar are kept, as net/http does.
func parseRequestPath(method, path string) (*url.URL, error) {
	if path == "*" && method == http.MethodOptions {
		return &url.URL{Path: "*"}, nil
	}
	if !strings.HasPrefix(path, "/") {
		return nil, streamError(ErrCodeMessageError, "invalid :path %q: not in origin-form", path)
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; c <= ' ' || c == 0x7f || c == '#' {
			return nil, streamError(ErrCodeMessageError, "invalid :path %q", path)
		}
	}
	u, err := url.ParseRequestURI(path)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return nil, streamError(ErrCodeMessageError, "invalid :path %q", path)
	}
	return u, nil
}

// textprotoKey canonicalizes a header key from a list like the Trailer
// header's.
func textprotoKey(k string) string {
	k = strings.TrimSpace(k)
	if k == "" {
		return ""
	}
	return http.CanonicalHeaderKey(k)
}
