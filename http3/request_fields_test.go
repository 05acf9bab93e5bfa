package http3

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quicstack/quic/http3/qpack"
)

// seenRequest is what a handler saw of a request.
type seenRequest struct {
	method, host, uri, urlHost string
	contentLength              int64
}

// fieldsEnv starts a server whose handler reports each request it sees
// and answers 204, and a raw connection to it.
func fieldsEnv(t *testing.T) (*clientConn, chan seenRequest) {
	seen := make(chan seenRequest, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case seen <- seenRequest{r.Method, r.Host, r.RequestURI, r.URL.Host, r.ContentLength}:
		default:
		}
		w.WriteHeader(204)
	}))
	return rawConn(t, e), seen
}

// expectMalformed sends each field section and checks that the server
// resets the stream with H3_MESSAGE_ERROR without calling the handler.
func expectMalformed(t *testing.T, cc *clientConn, seen chan seenRequest, cases map[string][]qpack.HeaderField) {
	t.Helper()
	for name, fields := range cases {
		status, code := sendRaw(t, cc, fields, nil)
		if code != ErrCodeMessageError {
			t.Errorf("%s: status %d, code %v; want H3_MESSAGE_ERROR", name, status, code)
		}
		select {
		case r := <-seen:
			t.Errorf("%s: the handler saw %+v", name, r)
		default:
		}
	}
}

// expectAccepted sends fields and returns what the handler saw.
func expectAccepted(t *testing.T, cc *clientConn, seen chan seenRequest, name string, fields []qpack.HeaderField) seenRequest {
	t.Helper()
	if status, code := sendRaw(t, cc, fields, nil); status != 204 {
		t.Errorf("%s: status %d, code %v; want 204", name, status, code)
		return seenRequest{}
	}
	return <-seen
}

// Defect 4: "This pseudo-header field MUST NOT be empty for "http" or
// "https" URIs; "http" or "https" URIs that do not contain a path
// component MUST include a value of / (ASCII 0x2f). An OPTIONS request
// that does not include a path component includes the value * (ASCII
// 0x2a) for the :path pseudo-header field" (RFC 9114, Section 4.3.1): the
// target is in origin-form, or "*" for OPTIONS. An absolute-form :path
// would give the handler an r.URL whose host is not r.Host.
func TestRequestPathOriginFormOnly(t *testing.T) {
	cc, seen := fieldsEnv(t)
	req := func(method, path string) []qpack.HeaderField {
		return hf(":method", method, ":scheme", "https", ":authority", "localhost", ":path", path)
	}
	expectMalformed(t, cc, seen, map[string][]qpack.HeaderField{
		"absolute-form":         req("GET", "https://evil.example/x"),
		"absolute-form, http":   req("GET", "http://localhost/x"),
		"authority-form":        req("GET", "evil.example:443"),
		"no leading slash":      req("GET", "x/y"),
		"asterisk not OPTIONS":  req("GET", "*"),
		"asterisk with more":    req("OPTIONS", "*x"),
		"fragment":              req("GET", "/x#frag"),
		"space":                 req("GET", "/a b"),
		"extended CONNECT path": hf(":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":authority", "localhost", ":path", "https://evil.example/"),
	})
	if r := expectAccepted(t, cc, seen, "origin-form", req("GET", "/a/b?c=d")); r.uri != "/a/b?c=d" || r.urlHost != "" {
		t.Errorf("origin-form: %+v", r)
	}
	// An empty first segment is still a path ("absolute-path = 1*( "/"
	// segment )", RFC 3986, Section 3.3), not an authority.
	if r := expectAccepted(t, cc, seen, "empty first segment", req("GET", "//evil.example/x")); r.uri != "//evil.example/x" || r.urlHost != "" {
		t.Errorf("empty first segment: %+v", r)
	}
	if r := expectAccepted(t, cc, seen, "OPTIONS *", req("OPTIONS", "*")); r.uri != "*" {
		t.Errorf("OPTIONS *: %+v", r)
	}
}

// Defect 5: "method = token" (RFC 9110, Section 9.1).
func TestRequestMethodMustBeToken(t *testing.T) {
	cc, seen := fieldsEnv(t)
	m := func(method string) []qpack.HeaderField {
		return hf(":method", method, ":scheme", "https", ":authority", "localhost", ":path", "/")
	}
	expectMalformed(t, cc, seen, map[string][]qpack.HeaderField{
		"request line":  m("GET /admin HTTP/1.1"),
		"space":         m("GE T"),
		"separator":     m("GET;"),
		"slash":         m("GET/"),
		"non-ASCII":     m("G\xc3\x89T"),
		"tab":           m("GET\tX"),
		"quote":         m("\"GET\""),
		"parenthesis":   m("GET()"),
		"empty is gone": m(""),
	})
	if r := expectAccepted(t, cc, seen, "extension method", m("PROPFIND")); r.method != "PROPFIND" {
		t.Errorf("extension method: %+v", r)
	}
}

// Defect 6: ":authority ... MUST NOT include the deprecated userinfo
// subcomponent for "http" or "https" schemed URIs." (RFC 9114, Section
// 4.3.1) and the authority is "uri-host [ ":" port ]" (RFC 9110, Section
// 7.2; RFC 3986, Section 3.2): anything else makes the request malformed.
func TestRequestAuthorityValidated(t *testing.T) {
	cc, seen := fieldsEnv(t)
	a := func(authority string) []qpack.HeaderField {
		return hf(":method", "GET", ":scheme", "https", ":authority", authority, ":path", "/")
	}
	host := func(h string) []qpack.HeaderField {
		return hf(":method", "GET", ":scheme", "https", ":path", "/", "host", h)
	}
	expectMalformed(t, cc, seen, map[string][]qpack.HeaderField{
		"path in authority":  a("evil.example/path?x"),
		"query":              a("localhost?x"),
		"fragment":           a("localhost#x"),
		"userinfo":           a("user:pw@localhost"),
		"empty userinfo":     a("@localhost"),
		"space":              a("a b"),
		"port not digits":    a("localhost:44x"),
		"two colons":         a("localhost:443:1"),
		"unclosed IPv6":      a("[::1"),
		"bad IPv6":           a("[zz::1]"),
		"percent not hex":    a("local%zzhost"),
		"backslash":          a("localhost\\evil"),
		"Host with userinfo": host("user@localhost"),
		"Host with path":     host("localhost/x"),
	})
	for _, ok := range []string{"localhost", "localhost:8443", "127.0.0.1:443", "[::1]:443", "[::1]", "xn--bcher-kva.example", "a-b_c~d.example", "localhost:"} {
		if r := expectAccepted(t, cc, seen, ok, a(ok)); r.host != ok {
			t.Errorf("%s: r.Host %q", ok, r.host)
		}
	}
	if r := expectAccepted(t, cc, seen, "Host only", host("localhost:8443")); r.host != "localhost:8443" {
		t.Errorf("Host only: r.Host %q", r.host)
	}
}

// Defect 7: "A server MUST respond with a 400 (Bad Request) status code to
// any HTTP/1.1 request message that lacks a Host header field and to any
// request message that contains more than one Host header field line or a
// Host header field with an invalid field value." (RFC 9110, Section
// 7.2), and "If both fields are present, they MUST contain the same value"
// (RFC 9114, Section 4.3.1), whichever of the Host fields.
func TestRequestHostFields(t *testing.T) {
	cc, seen := fieldsEnv(t)
	expectMalformed(t, cc, seen, map[string][]qpack.HeaderField{
		"two Hosts, no :authority":    hf(":method", "GET", ":scheme", "https", ":path", "/", "host", "a.example", "host", "b.example"),
		"two equal Hosts":             hf(":method", "GET", ":scheme", "https", ":path", "/", "host", "a.example", "host", "a.example"),
		"second Host differs":         requestWith("host", "localhost", "host", "evil.example"),
		"Host list":                   hf(":method", "GET", ":scheme", "https", ":path", "/", "host", "a.example, b.example"),
		"empty Host, no :authority":   hf(":method", "GET", ":scheme", "https", ":path", "/", "host", ""),
		"empty :authority, Host":      hf(":method", "GET", ":scheme", "https", ":authority", "", ":path", "/", "host", "localhost"),
		"Host differs from authority": requestWith("host", "evil.example"),
	})
	if r := expectAccepted(t, cc, seen, "Host equal to :authority", requestWith("host", "localhost")); r.host != "localhost" {
		t.Errorf("Host equal to :authority: r.Host %q", r.host)
	}
}

// Defect 8: "Content-Length = 1*DIGIT" (RFC 9110, Section 8.6); a sign is
// not a digit, and several values must be the same.
func TestRequestContentLengthGrammar(t *testing.T) {
	cc, seen := fieldsEnv(t)
	cases := map[string][]qpack.HeaderField{}
	for _, v := range []string{"+3", "-0", "-3", "0x3", "3 3", "3.0", "", "3;", "１", "99999999999999999999", "3, 4", "3,"} {
		cases["content-length "+v] = requestWith("content-length", v)
	}
	cases["two field lines that differ"] = requestWith("content-length", "0", "content-length", "1")
	cases["two field lines, leading zero"] = requestWith("content-length", "0", "content-length", "00")
	expectMalformed(t, cc, seen, cases)
	for _, v := range [][]string{{"content-length", "0"}, {"content-length", "0", "content-length", "0"}, {"content-length", "0, 0"}} {
		if r := expectAccepted(t, cc, seen, v[1], requestWith(v...)); r.contentLength != 0 {
			t.Errorf("%q: ContentLength %d", v, r.contentLength)
		}
	}
}

// The client applies the Content-Length grammar to responses, and the
// server never sends a Content-Length a handler set that does not follow
// it.
func TestResponseContentLengthGrammar(t *testing.T) {
	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			return
		}
		cl := fieldValue(s.fields, ":path")[1:]
		s.str.Write(append(s.headers(t, hf(":status", "200", "content-length", cl)), dataFrames("abc")...))
		s.str.CloseWrite()
	})
	for _, v := range []string{"+3", "-3", "3,4", "0x3"} {
		resp, err := rs.client.Get(rs.url + "/" + v)
		if err == nil {
			resp.Body.Close()
		}
		if h3Code(err) != ErrCodeMessageError {
			t.Errorf("response content-length %q: %v; want H3_MESSAGE_ERROR", v, err)
		}
	}
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", r.URL.Query().Get("cl"))
		io.WriteString(w, "abc")
	}))
	for _, v := range []string{"+3", "03", "3"} {
		resp, b := e.get(t, "/?cl="+v)
		if resp.StatusCode != 200 || string(b) != "abc" || resp.ContentLength != 3 && resp.ContentLength != -1 {
			t.Errorf("handler's Content-Length %q: %d %q, ContentLength %d", v, resp.StatusCode, b, resp.ContentLength)
		}
	}
}

// "The only exception to this is the TE header field, which MAY be present
// in an HTTP/3 request header; when it is, it MUST NOT contain any value
// other than "trailers"." (RFC 9114, Section 4.2). "trailers" is a
// keyword of TE's grammar (RFC 9110, Section 10.1.4), and ABNF strings are
// case-insensitive (RFC 5234, Section 2.3): "Trailers" is the same value
// and is accepted. Anything else, a list included, is not.
func TestTETrailersCaseInsensitive(t *testing.T) {
	cc, seen := fieldsEnv(t)
	for _, v := range []string{"trailers", "Trailers", "TRAILERS"} {
		expectAccepted(t, cc, seen, "te: "+v, requestWith("te", v))
	}
	expectMalformed(t, cc, seen, map[string][]qpack.HeaderField{
		"te: gzip":              requestWith("te", "gzip"),
		"te: trailers, gzip":    requestWith("te", "trailers, gzip"),
		"te: trailers;q=1":      requestWith("te", "trailers;q=1"),
		"te: trailer":           requestWith("te", "trailer"),
		"te: trailers, twice":   requestWith("te", "trailers", "te", "gzip"),
		"te: trailers,trailers": requestWith("te", "trailers,trailers"),
	})
}

// The client never generates a :path that is not origin-form (or "*" for
// OPTIONS): a URL whose Opaque part is not a path fails the request
// before anything is sent (RFC 9114, Section 4.1.2: "An endpoint MUST
// NOT generate an HTTP/3 message that is malformed").
func TestClientRefusesNonOriginPath(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the server saw %s %s", r.Method, r.RequestURI)
	}))
	for _, opaque := range []string{"foo", "evil.example:443", "/a b", "/a#b"} {
		req, _ := http.NewRequest("GET", e.url+"/", nil)
		req.URL.Opaque = opaque
		if resp, err := e.client.Do(req); err == nil || !strings.Contains(err.Error(), "invalid request path") {
			if err == nil {
				resp.Body.Close()
			}
			t.Errorf("Opaque %q: %v", opaque, err)
		}
	}
}
