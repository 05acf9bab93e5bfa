package http3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
	"golang.org/x/net/http2"
)

// The conformance table (issue 22): for each rule of RFC 9114, Sections
// 4.1.2, 4.2 and 4.3, and of RFC 9110's field grammar, a malformed request
// and a malformed response, sent as raw frames, and the outcome the rule
// requires. The requests go to our server, the responses to our client;
// the requests also go, as raw HTTP/2 frames, to net/http's HTTP/2 server,
// and where it has the same rule the test asserts it treats them alike.
// Where net/http's HTTP/2 server is more lenient, the row says so and the
// test asserts that too, so that the table stays true.

// fieldLine is a field line of a test message, in order, unvalidated.
type fieldLine struct{ name, value string }

// message is a malformed request or response.
type message struct {
	fields  []fieldLine
	data    []string    // DATA frame payloads after the header
	trailer []fieldLine // a trailer section, if not nil
	late    []string    // DATA frame payloads after the trailer section
	// h3 and h2, if set, write the message instead, for rules about the
	// sequence of frames.
	h3 func(t *testing.T, c *connection, id quic.StreamID) []byte
	h2 func(fr *http2.Framer, block func([]fieldLine) []byte)
}

// outcomeClass is what became of a malformed message, as the table
// compares HTTP/3 and HTTP/2.
type outcomeClass int

const (
	classAccepted  outcomeClass = iota // delivered as if valid
	classRefused                       // refused before the handler: a stream error, or 4xx
	classBodyError                     // the handler ran and its body read failed
	classConnError                     // the connection was closed
)

func (c outcomeClass) String() string {
	return [...]string{"accepted", "refused", "body error", "connection error"}[c]
}

// h2Rule says how net/http's HTTP/2 server relates to a row.
type h2Rule int

const (
	h2Same       h2Rule = iota // it has the same rule: same outcome class
	h2Lenient                  // it accepts what HTTP/3 requires us to refuse
	h2ClosesConn               // it closes the whole connection
	h2None                     // the rule has no HTTP/2 form
)

// confCase is one row of the table.
type confCase struct {
	rule string // where the rule is
	name string
	req  *message // nil: the rule concerns responses only
	resp *message // nil: the rule concerns requests only
	// server and client are the required outcomes: an HTTP/3 stream
	// error code, a connection error code (conn set), or for the server
	// a status (431).
	server, client want
	h2             h2Rule
}

// want is a required outcome.
type want struct {
	code   ErrCode // stream or connection error code
	conn   bool    // a connection error
	status int     // a response status instead of an error
	body   bool    // the request is refused while its body is read (the handler runs)
}

var (
	wantMessageError = want{code: ErrCodeMessageError}
	wantBodyError    = want{code: ErrCodeMessageError, body: true}
	wantFrameUnexp   = want{code: ErrCodeFrameUnexpected, conn: true}
)

func (w want) class() outcomeClass {
	switch {
	case w.conn:
		return classConnError
	case w.body:
		return classBodyError
	}
	return classRefused
}

func (w want) String() string {
	switch {
	case w.status != 0:
		return fmt.Sprint(w.status)
	case w.conn:
		return "connection error " + w.code.String()
	case w.body:
		return "stream error " + w.code.String() + " (while reading the body)"
	}
	return "stream error " + w.code.String()
}

// fl builds field lines from name, value pairs.
func fl(kv ...string) []fieldLine {
	var fs []fieldLine
	for i := 0; i+1 < len(kv); i += 2 {
		fs = append(fs, fieldLine{kv[i], kv[i+1]})
	}
	return fs
}

// req and resp build messages from a valid request or response header
// with the given changes: fields appended.
func req(extra ...string) *message {
	return &message{fields: fl(append([]string{":method", "POST", ":scheme", "https", ":authority", "localhost", ":path", "/"}, extra...)...)}
}

func resp(extra ...string) *message {
	return &message{fields: fl(append([]string{":status", "200"}, extra...)...)}
}

// pseudoReq builds a request from exactly the given fields.
func pseudoReq(kv ...string) *message { return &message{fields: fl(kv...)} }

func (m *message) withData(d ...string) *message     { m.data = d; return m }
func (m *message) withTrailer(kv ...string) *message { m.trailer = fl(kv...); return m }
func (m *message) withLate(d ...string) *message     { m.late = d; return m }

// conformanceCases is the table.
func conformanceCases() []confCase {
	// 300 fields of 4 KB: above the 1 MiB default of both servers.
	var big []string
	for i := range 300 {
		big = append(big, fmt.Sprintf("x-big-%d", i), strings.Repeat("b", 4096))
	}
	cases := []confCase{
		// RFC 9114, Section 4.1.2: "A request or response that is defined
		// as having content when it contains a Content-Length header
		// field is malformed if the value of the Content-Length header
		// field does not equal the sum of the DATA frame lengths
		// received."
		{rule: "9114 4.1.2 content-length", name: "less content than Content-Length",
			req: req("content-length", "5").withData("abc"), resp: resp("content-length", "5").withData("abc"),
			server: wantBodyError, client: wantMessageError},
		{rule: "9114 4.1.2 content-length", name: "more content than Content-Length",
			req: req("content-length", "3").withData("abc", "SMUGGLED"), resp: resp("content-length", "3").withData("abc", "SMUGGLED"),
			server: wantBodyError, client: wantMessageError},
		// "A response that is defined as never having content" (RFC 9110,
		// Section 6.4.1: 204, 304, and responses to HEAD) has no DATA.
		{rule: "9114 4.1.2, 9110 6.4.1", name: "content in a 204 response",
			resp: (&message{fields: fl(":status", "204")}).withData("x"), client: wantMessageError, h2: h2None},
		// Section 4.1: "Receipt of an invalid sequence of frames MUST be
		// treated as a connection error of type H3_FRAME_UNEXPECTED."
		{rule: "9114 4.1 frame sequence", name: "DATA before HEADERS",
			req: &message{h3: func(t *testing.T, c *connection, id quic.StreamID) []byte { return dataFrames("abc") },
				h2: func(fr *http2.Framer, block func([]fieldLine) []byte) { fr.WriteData(1, true, []byte("abc")) }},
			resp:   &message{h3: func(t *testing.T, c *connection, id quic.StreamID) []byte { return dataFrames("abc") }},
			server: wantFrameUnexp, client: wantFrameUnexp},
		{rule: "9114 4.1 frame sequence", name: "DATA after trailers",
			req:    req().withData("abc").withTrailer("x-t", "1").withLate("late"),
			resp:   resp().withData("abc").withTrailer("x-t", "1").withLate("late"),
			server: wantFrameUnexp, client: wantFrameUnexp, h2: h2None},
		// Section 4.2: "Characters in field names MUST be converted to
		// lowercase prior to their encoding. A request or response
		// containing uppercase characters in field names MUST be treated
		// as malformed."
		{rule: "9114 4.2 lowercase names", name: "uppercase field name",
			req: req("X-Upper", "1"), resp: resp("X-Upper", "1"), server: wantMessageError, client: wantMessageError},
		// "An endpoint MUST NOT generate an HTTP/3 field section
		// containing connection-specific fields; any message containing
		// connection-specific fields MUST be treated as malformed."
		{rule: "9114 4.2 TE", name: "te other than trailers",
			req: req("te", "gzip"), resp: resp("te", "gzip"), server: wantMessageError, client: wantMessageError},
		// RFC 9110, Section 5.1: "field-name = token"; RFC 9114, Section
		// 4.2 adds "A field name MUST NOT contain characters in the
		// ranges 0x00-0x20, 0x41-0x5a, or 0x7f-0xff".
		{rule: "9110 5.1 field-name", name: "space in a field name",
			req: req("x y", "1"), resp: resp("x y", "1"), server: wantMessageError, client: wantMessageError},
		{rule: "9110 5.1 field-name", name: "NUL in a field name",
			req: req("x\x00", "1"), resp: resp("x\x00", "1"), server: wantMessageError, client: wantMessageError},
		{rule: "9110 5.1 field-name", name: "non-ASCII field name",
			req: req("x-\xc3\xa9", "1"), resp: resp("x-\xc3\xa9", "1"), server: wantMessageError, client: wantMessageError},
		{rule: "9110 5.1 field-name", name: "empty field name",
			req: req("", "1"), resp: resp("", "1"), server: wantMessageError, client: wantMessageError},
		{rule: "9110 5.1 field-name", name: "separator in a field name",
			req: req("x:y", "1"), resp: resp("x:y", "1"), server: wantMessageError, client: wantMessageError},
		// RFC 9110, Section 5.5: "Field values containing CR, LF, or NUL
		// characters are invalid and dangerous"; RFC 9114, Section 4.2:
		// "A field value MUST NOT contain the zero value (ASCII NUL,
		// 0x00), line feed (ASCII LF, 0x0a), or carriage return (ASCII
		// CR, 0x0d) at any position."
		{rule: "9110 5.5 field-value", name: "CR LF in a value",
			req: req("x", "a\r\nInjected: 1"), resp: resp("x", "a\r\nInjected: 1"), server: wantMessageError, client: wantMessageError},
		{rule: "9110 5.5 field-value", name: "NUL in a value",
			req: req("x", "a\x00b"), resp: resp("x", "a\x00b"), server: wantMessageError, client: wantMessageError},
		{rule: "9110 5.5 field-value", name: "LF in a pseudo-header value",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "/\nx"), resp: &message{fields: fl(":status", "200\n")},
			server: wantMessageError, client: wantMessageError},
		// RFC 9114, Section 4.2: "A field value MUST NOT start or end with
		// an ASCII whitespace character (ASCII SP or HTAB, 0x20 or
		// 0x09)."
		{rule: "9114 4.2 whitespace", name: "leading space in a value",
			req: req("x", " a"), resp: resp("x", " a"), server: wantMessageError, client: wantMessageError, h2: h2Lenient},
		{rule: "9114 4.2 whitespace", name: "trailing tab in a value",
			req: req("x", "a\t"), resp: resp("x", "a\t"), server: wantMessageError, client: wantMessageError, h2: h2Lenient},
		// Section 4.2.2: a header section above our
		// SETTINGS_MAX_FIELD_SECTION_SIZE (1 MiB by default) fails that
		// request only, with 431; a response's fails the request.
		// net/http's HTTP/2 server closes the connection (PROTOCOL_ERROR)
		// when the header block goes that far past its limit.
		{rule: "9114 4.2.2 size", name: "header section above the limit",
			req: req(big...), resp: resp(big...),
			server: want{status: 431}, client: want{code: ErrCodeExcessiveLoad}, h2: h2ClosesConn},
		// Section 4.3: "Pseudo-header fields are not HTTP fields.
		// Endpoints MUST NOT generate pseudo-header fields other than
		// those defined in this document."; "Pseudo-header fields defined
		// for requests MUST NOT appear in responses; pseudo-header fields
		// defined for responses MUST NOT appear in requests. Pseudo-header
		// fields MUST NOT appear in trailer sections."; "All pseudo-header
		// fields MUST appear in the header section before regular header
		// fields."
		{rule: "9114 4.3 pseudo-headers", name: "undefined pseudo-header",
			req: req(":foo", "1"), resp: resp(":foo", "1"), server: wantMessageError, client: wantMessageError},
		{rule: "9114 4.3 pseudo-headers", name: "pseudo-header of the other direction",
			req: req(":status", "200"), resp: resp(":path", "/"), server: wantMessageError, client: wantMessageError},
		{rule: "9114 4.3 pseudo-headers", name: "pseudo-header in trailers",
			req: req().withData("abc").withTrailer(":path", "/x"), resp: resp().withData("abc").withTrailer(":status", "200"),
			server: wantBodyError, client: wantMessageError},
		{rule: "9114 4.3 pseudo-headers", name: "pseudo-header after a regular field",
			req:  pseudoReq(":method", "GET", ":scheme", "https", "x", "1", ":authority", "localhost", ":path", "/"),
			resp: &message{fields: fl("x", "1", ":status", "200")}, server: wantMessageError, client: wantMessageError},
		{rule: "9114 4.3 pseudo-headers", name: "duplicate pseudo-header",
			req: req(":path", "/again"), resp: resp(":status", "200"), server: wantMessageError, client: wantMessageError},
		// Section 4.3.1: "All HTTP/3 requests MUST include exactly one
		// value for the :method, :scheme, and :path pseudo-header fields,
		// unless the request is a CONNECT request"; Section 4.3.2: "For
		// responses, a single ":status" pseudo-header field is defined
		// ... This pseudo-header field MUST be included in all
		// responses".
		{rule: "9114 4.3.1/4.3.2 mandatory", name: "missing :method / :status",
			req: pseudoReq(":scheme", "https", ":authority", "localhost", ":path", "/"), resp: &message{fields: fl("x", "1")},
			server: wantMessageError, client: wantMessageError},
		{rule: "9114 4.3.1 mandatory", name: "missing :scheme",
			req: pseudoReq(":method", "GET", ":authority", "localhost", ":path", "/"), server: wantMessageError},
		{rule: "9114 4.3.1 mandatory", name: "missing :path",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":authority", "localhost"), server: wantMessageError},
		{rule: "9114 4.3.1 :path", name: "empty :path",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", ""), server: wantMessageError},
		// "This pseudo-header field MUST NOT be empty for "http" or
		// "https" URIs" and the target is in origin-form (RFC 9110,
		// Section 7.1), or "*" for OPTIONS.
		{rule: "9114 4.3.1 :path", name: "absolute-form :path",
			req:    pseudoReq(":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "https://evil.example/x"),
			server: wantMessageError, h2: h2Lenient},
		{rule: "9114 4.3.1 :path", name: "asterisk :path for GET",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "*"), server: wantMessageError, h2: h2Lenient},
		// RFC 9110, Section 9.1: "method = token"; Section 15: a status
		// code is "the three-digit integer code".
		{rule: "9110 9.1/15 :method, :status", name: "invalid :method / :status",
			req: pseudoReq(":method", "GET /admin HTTP/1.1", ":scheme", "https", ":authority", "localhost", ":path", "/"), resp: &message{fields: fl(":status", "2000")},
			server: wantMessageError, client: wantMessageError, h2: h2Lenient},
		{rule: "9110 15 :status", name: ":status with a sign",
			resp: &message{fields: fl(":status", "+20")}, client: wantMessageError, h2: h2None},
		// ":authority ... MUST NOT include the deprecated userinfo
		// subcomponent"; RFC 9110, Section 7.2: "Host = uri-host [ ":"
		// port ]".
		{rule: "9114 4.3.1 :authority", name: "userinfo in :authority",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":authority", "user:pw@localhost", ":path", "/"), server: wantMessageError},
		{rule: "9114 4.3.1 :authority", name: "path in :authority",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":authority", "evil.example/x?y", ":path", "/"), server: wantMessageError, h2: h2Lenient},
		{rule: "9114 4.3.1 :authority", name: "space in :authority",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":authority", "a b", ":path", "/"), server: wantMessageError, h2: h2Lenient},
		// "If the :scheme pseudo-header field identifies a scheme that has
		// a mandatory authority component (including "http" and
		// "https"), the request MUST contain either an :authority
		// pseudo-header field or a Host header field. If these fields are
		// present, they MUST NOT be empty. If both fields are present,
		// they MUST contain the same value."
		{rule: "9114 4.3.1 host", name: "no :authority and no Host",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":path", "/"), server: wantMessageError, h2: h2Lenient},
		// Schemes are case-insensitive (RFC 3986, Section 3.1: "schemes
		// are case-insensitive"): "HTTPS" is https, whose authority is
		// mandatory.
		{rule: "9114 4.3.1 host", name: "no :authority and no Host, :scheme in uppercase",
			req: pseudoReq(":method", "GET", ":scheme", "HTTPS", ":path", "/"), server: wantMessageError},
		{rule: "9114 4.3.1 host", name: ":authority and Host differ",
			req: req("host", "evil.example"), server: wantMessageError, h2: h2Lenient},
		// RFC 9110, Section 7.2: "A server MUST respond with a 400 (Bad
		// Request) status code to any ... request message that contains
		// more than one Host header field line".
		{rule: "9110 7.2 host", name: "two Host fields",
			req: pseudoReq(":method", "GET", ":scheme", "https", ":path", "/", "host", "a.example", "host", "b.example"), server: wantMessageError, h2: h2Lenient},
		// RFC 9110, Section 8.6: "Content-Length = 1*DIGIT".
		{rule: "9110 8.6 content-length", name: "content-length with a sign",
			req: req("content-length", "+0"), resp: resp("content-length", "+0"), server: wantMessageError, client: wantMessageError, h2: h2Lenient},
		{rule: "9110 8.6 content-length", name: "content-length not decimal",
			req: req("content-length", "0x0"), resp: resp("content-length", "0x0"), server: wantMessageError, client: wantMessageError, h2: h2Lenient},
		{rule: "9110 8.6 content-length", name: "content-length values that differ",
			req: req("content-length", "0", "content-length", "1"), resp: resp("content-length", "0", "content-length", "1"),
			server: wantMessageError, client: wantMessageError, h2: h2Lenient},
		// RFC 9114, Section 4.5: "HTTP/3 does not support the HTTP
		// Upgrade mechanism ... or the 101 (Switching Protocols)
		// informational status code".
		{rule: "9114 4.5 101", name: "101 response",
			resp: &message{fields: fl(":status", "101")}, client: wantMessageError, h2: h2None},
	}
	for _, name := range []string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"} {
		cases = append(cases, confCase{rule: "9114 4.2 connection-specific", name: name,
			req: req(name, "x"), resp: resp(name, "x"), server: wantMessageError, client: wantMessageError})
	}
	return cases
}

// qfields converts field lines for our encoder.
func qfields(fs []fieldLine) []qpack.HeaderField {
	var q []qpack.HeaderField
	for _, f := range fs {
		q = append(q, qpack.HeaderField{Name: f.name, Value: f.value})
	}
	return q
}

// h3Bytes returns the frames of m after its first HEADERS frame (head),
// and the rest.
func h3Bytes(t *testing.T, c *connection, id quic.StreamID, m *message) (head, rest []byte) {
	if m.h3 != nil {
		return m.h3(t, c, id), nil
	}
	head, err := c.encodeHeaders(id, qfields(m.fields))
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, d := range m.data {
		b = append(appendDataFrameHeader(b, uint64(len(d))), d...)
	}
	if m.trailer != nil {
		tr, err := c.encodeHeaders(id, qfields(m.trailer))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, tr...)
	}
	for _, d := range m.late {
		b = append(appendDataFrameHeader(b, uint64(len(d))), d...)
	}
	return head, b
}

// h3Result is what became of one request sent to our server.
type h3Result struct {
	status int
	code   ErrCode // stream reset code
	conn   bool    // the connection was closed
	saw    *handlerSaw
}

func (r h3Result) class() outcomeClass {
	switch {
	case r.conn:
		return classConnError
	case r.saw != nil && r.saw.bodyErr != nil:
		return classBodyError
	case r.saw != nil:
		return classAccepted
	}
	return classRefused
}

// sendH3Request sends m to our server on a new connection.
func sendH3Request(t *testing.T, e *testEnv, obs *handlerObserver, m *message, expectConn bool) h3Result {
	cc := rawConn(t, e)
	defer cc.qc.CloseWithError(0, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	str, err := cc.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head, rest := h3Bytes(t, cc.connection, str.StreamID(), m)
	str.Write(head)
	started := false
	if len(rest) > 0 {
		if started = obs.waitStarted(); started {
			str.Write(rest)
		}
	}
	str.CloseWrite()
	str.SetReadDeadline(time.Now().Add(10 * time.Second))
	var r h3Result
	f, err := readFrame(bufio.NewReader(str))
	var se *quic.StreamError
	var ae *quic.ApplicationError
	switch {
	case err == nil && f.Type == frameHeaders:
		fs, err := cc.decodeHeaders(ctx, str.StreamID(), f.Payload, nil)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Sscan(fs[0].Value, &r.status)
	case errors.As(err, &se):
		r.code = ErrCode(se.Code)
	case errors.As(err, &ae):
	default:
		t.Fatalf("reading the response: %v", err)
	}
	r.saw = obs.result(started)
	// A connection error may reach us after the reset of a stream the
	// failure also ended (a handler's body read fails, and the handler
	// gives up): a row that expects it waits for the close.
	if expectConn {
		select {
		case <-cc.qc.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	if cc.qc.Context().Err() != nil {
		if errors.As(context.Cause(cc.qc.Context()), &ae) && ae.Remote {
			r.conn, r.code = true, ErrCode(ae.Code)
		}
	}
	return r
}

// clientResult is what our client made of a malformed response.
type clientResult struct {
	err  error
	code ErrCode
	conn bool
}

// TestConformanceTable runs the table against our server, our client and
// net/http's HTTP/2 server, and logs it.
func TestConformanceTable(t *testing.T) {
	obs := newHandlerObserver()
	e := newTestEnv(t, obs)
	h2 := newH2Server(t)
	cases := conformanceCases()
	responses := map[string]*message{}
	for i, c := range cases {
		if c.resp != nil {
			responses[fmt.Sprintf("/case/%d", i)] = c.resp
		}
	}
	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			return
		}
		m := responses[fieldValue(s.fields, ":path")]
		if m == nil {
			return
		}
		head, rest := h3Bytes(t, s.c, s.str.StreamID(), m)
		s.str.Write(append(head, rest...))
		s.str.CloseWrite()
	})
	var table strings.Builder
	fmt.Fprintf(&table, "| Rule | Malformed | Our server | Our client | net/http HTTP/2 server |\n|---|---|---|---|---|\n")
	for i, c := range cases {
		srvCell, cliCell, h2Cell := "n/a", "n/a", "n/a"
		if c.req != nil {
			r := sendH3Request(t, e, obs, c.req, c.server.conn)
			srvCell = c.server.String()
			switch {
			case c.server.status != 0:
				if r.status != c.server.status || r.saw != nil {
					t.Errorf("server, %s: status %d, code %v, handler %v; want %v", c.name, r.status, r.code, r.saw, c.server)
				}
			case r.code != c.server.code || r.conn != c.server.conn || r.class() != c.server.class():
				t.Errorf("server, %s: status %d, code %v, connection %v, %v; want %v", c.name, r.status, r.code, r.conn, r.class(), c.server)
			}
			if c.h2 != h2None {
				hr := h2.send(t, c.req)
				h2Cell = hr.class().String()
				if hr.reset {
					h2Cell += " (RST_STREAM " + hr.rst.String() + ")"
				} else if hr.status != 0 {
					h2Cell += fmt.Sprintf(" (%d)", hr.status)
				}
				switch c.h2 {
				case h2Same:
					if hr.class() != r.class() {
						t.Errorf("HTTP/2, %s: %s (%+v %s), our server %s", c.name, hr.class(), hr, hr.frameErr, r.class())
					}
				case h2Lenient:
					h2Cell += ", more lenient"
					if hr.class() != classAccepted {
						t.Errorf("HTTP/2, %s: %s (%+v); the table says net/http's HTTP/2 server accepts it", c.name, hr.class(), hr)
					}
				case h2ClosesConn:
					h2Cell += ", the whole connection"
					if hr.class() != classConnError {
						t.Errorf("HTTP/2, %s: %s (%+v); the table says net/http's HTTP/2 server closes the connection", c.name, hr.class(), hr)
					}
				}
			}
		}
		if c.resp != nil {
			cliCell = c.client.String()
			r := clientGet(t, rs, fmt.Sprintf("/case/%d", i))
			if r.code != c.client.code || r.conn != c.client.conn {
				t.Errorf("client, %s: %v (code %v, connection %v); want %v", c.name, r.err, r.code, r.conn, c.client)
			}
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s | %s |\n", c.rule, c.name, srvCell, cliCell, h2Cell)
	}
	t.Logf("\n%s", table.String())
}

// clientGet makes a request with a new client and returns how it failed.
// (A Transport whose connection just failed with a connection error may
// hand that connection to the next request before it is closed.)
func clientGet(t *testing.T, rs *testEnv, path string) clientResult {
	tr := &Transport{TLSClientConfig: rs.tr.TLSClientConfig}
	defer tr.Close()
	req, _ := http.NewRequest("GET", rs.url+path, nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	var r clientResult
	r.err = err
	var he *Error
	if errors.As(err, &he) {
		r.code, r.conn = he.Code, !he.Stream
	}
	return r
}
