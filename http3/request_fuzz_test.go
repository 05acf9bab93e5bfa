package http3

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
	"golang.org/x/net/http/httpguts"
)

// FuzzServerRequest sends random header sections, as valid QPACK with
// hostile field names and values, through the server's request
// construction: the QPACK decoder configured as a server connection's
// (with its field checks), then newServerRequest. Whatever it accepts
// must be a request net/http's own validation (httpguts, and net/http's
// HTTP/1.1 request parser given the same request) accepts, and r.Host,
// r.URL and r.ContentLength must say what the wire said. The seed corpus
// runs with every go test.
//
// Input: a flags byte (bit 0: start with a valid GET's pseudo-header
// fields; bit 1: send the section twice, the second time with references
// to the dynamic table; bit 2: the server allows extended CONNECT), then
// field lines, each a length byte and a name and a length byte and a
// value.
func FuzzServerRequest(f *testing.F) {
	for _, seed := range requestFuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		flags, wire := in[0], parseFuzzFields(in[1:])
		if flags&1 != 0 {
			wire = append(hf(goodRequest...), wire...)
		}
		c := newConnection(nil, true, 0)
		enc := qpack.NewEncoder(qpack.EncoderConfig{})
		if err := enc.SetPeerSettings(c.ours.QPACKMaxTableCapacity, 0); err != nil {
			t.Fatal(err)
		}
		rounds := 1
		if flags&2 != 0 {
			rounds = 2
		}
		var fields []qpack.HeaderField
		var err error
		for i := range rounds {
			id := uint64(4 * i)
			sec := enc.EncodeFieldSection(nil, id, wire)
			if err := c.dec.HandleEncoderStream(enc.AppendEncoderStream(nil)); err != nil {
				t.Fatalf("our encoder's instructions: %v", err)
			}
			fields, err = c.decodeHeaders(context.Background(), quic.StreamID(id), sec, nil)
			if err := enc.HandleDecoderStream(c.dec.AppendDecoderStream(nil)); err != nil {
				t.Fatalf("our decoder's instructions: %v", err)
			}
		}
		if err != nil {
			return // refused by the field checks: a malformed message
		}
		req, err := newServerRequest(fields, flags&4 != 0)
		if err != nil {
			return
		}
		checkServerRequest(t, wire, req)
	})
}

// checkServerRequest checks a request the server accepted against the
// field section on the wire.
func checkServerRequest(t *testing.T, wire []qpack.HeaderField, req *http.Request) {
	pseudo := map[string]string{}
	var hosts, lengths []string
	for _, f := range wire {
		switch {
		case strings.HasPrefix(f.Name, ":"):
			pseudo[f.Name] = f.Value
		case f.Name == "host":
			hosts = append(hosts, f.Value)
		case f.Name == "content-length":
			lengths = append(lengths, f.Value)
		}
	}
	// The method is a token.
	if req.Method == "" || strings.IndexFunc(req.Method, func(r rune) bool { return !httpguts.IsTokenRune(r) }) >= 0 {
		t.Fatalf("method %q is not a token", req.Method)
	}
	// Every header field is one httpguts accepts, none is
	// connection-specific, and TE is only "trailers".
	for k, vs := range req.Header {
		if k == ":protocol" {
			continue // extended CONNECT's, as net/http's HTTP/2 server
		}
		if !httpguts.ValidHeaderFieldName(k) {
			t.Fatalf("header name %q", k)
		}
		switch k {
		case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Host":
			t.Fatalf("header %s reached the handler", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) || strings.TrimSpace(v) != v {
				t.Fatalf("header %s value %q", k, v)
			}
			if k == "Te" && !strings.EqualFold(v, "trailers") {
				t.Fatalf("TE %q", v)
			}
		}
	}
	// r.Host is the :authority, or else the one Host field, and is a
	// valid host without userinfo.
	if a, ok := pseudo[":authority"]; ok {
		if req.Host != a {
			t.Fatalf("r.Host %q, :authority %q", req.Host, a)
		}
		if len(hosts) > 1 || len(hosts) == 1 && hosts[0] != a {
			t.Fatalf("hosts %q with :authority %q", hosts, a)
		}
	} else if len(hosts) == 1 {
		if req.Host != hosts[0] {
			t.Fatalf("r.Host %q, host %q", req.Host, hosts[0])
		}
	} else if len(hosts) > 1 || req.Host != "" {
		t.Fatalf("r.Host %q from hosts %q", req.Host, hosts)
	}
	if req.Host != "" && (!httpguts.ValidHostHeader(req.Host) || strings.ContainsAny(req.Host, "@/?# ")) {
		t.Fatalf("r.Host %q", req.Host)
	}
	// r.URL is the :path, in origin-form: no scheme, no host.
	if req.Method == http.MethodConnect && pseudo[":protocol"] == "" {
		if req.URL.Host != req.Host || req.URL.Path != "" || req.RequestURI != req.Host {
			t.Fatalf("CONNECT: URL %#v, RequestURI %q, Host %q", req.URL, req.RequestURI, req.Host)
		}
	} else {
		p := pseudo[":path"]
		if req.RequestURI != p || req.URL.Host != "" || req.URL.Scheme != "" || req.URL.User != nil {
			t.Fatalf(":path %q: RequestURI %q, URL %#v", p, req.RequestURI, req.URL)
		}
		if p == "*" {
			if req.Method != http.MethodOptions || req.URL.Path != "*" {
				t.Fatalf(":path * for %s: %#v", req.Method, req.URL)
			}
		} else if u, err := url.ParseRequestURI(p); err != nil || u.String() != req.URL.String() || !strings.HasPrefix(p, "/") {
			t.Fatalf(":path %q: URL %q, parsed %v, %v", p, req.URL, u, err)
		}
	}
	// r.ContentLength is the wire's Content-Length, or -1.
	want := int64(-1)
	if len(lengths) > 0 {
		first := strings.TrimSpace(strings.Split(lengths[0], ",")[0])
		n, err := strconv.ParseInt(first, 10, 64)
		if err != nil || n < 0 || strings.ContainsAny(first, "+-") {
			t.Fatalf("content-length %q accepted", lengths)
		}
		want = n
	}
	if req.ContentLength != want {
		t.Fatalf("ContentLength %d, wire %q", req.ContentLength, lengths)
	}
	checkHTTP1Parses(t, req)
}

// checkHTTP1Parses gives net/http's HTTP/1.1 request parser the same
// request and checks that it accepts it and reads the same method,
// target, host and fields: what our server hands a handler, a proxy could
// forward as HTTP/1.1 without another server reading it differently.
func checkHTTP1Parses(t *testing.T, req *http.Request) {
	var b strings.Builder
	b.WriteString(req.Method + " " + req.RequestURI + " HTTP/1.1\r\nHost: " + req.Host + "\r\n")
	for k, vs := range req.Header {
		if k == ":protocol" {
			continue
		}
		for _, v := range vs {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	r1, err := http.ReadRequest(bufio.NewReader(strings.NewReader(b.String())))
	if err != nil {
		t.Fatalf("net/http refuses what the handler would see: %v\n%q", err, b.String())
	}
	if r1.Method != req.Method || r1.RequestURI != req.RequestURI || r1.Host != req.Host {
		t.Fatalf("net/http reads %s %s (host %q), the handler %s %s (host %q)", r1.Method, r1.RequestURI, r1.Host, req.Method, req.RequestURI, req.Host)
	}
	if req.ContentLength >= 0 && r1.ContentLength != req.ContentLength {
		t.Fatalf("net/http reads Content-Length %d, the handler %d", r1.ContentLength, req.ContentLength)
	}
	for k, vs := range req.Header {
		if k == ":protocol" {
			continue
		}
		if got := r1.Header[k]; strings.Join(got, "\x00") != strings.Join(vs, "\x00") {
			t.Fatalf("header %s: net/http reads %q, the handler %q", k, got, vs)
		}
	}
}

// parseFuzzFields reads length-prefixed field lines.
func parseFuzzFields(b []byte) []qpack.HeaderField {
	var fs []qpack.HeaderField
	next := func() string {
		if len(b) == 0 {
			return ""
		}
		n := min(int(b[0]), len(b)-1)
		s := string(b[1 : 1+n])
		b = b[1+n:]
		return s
	}
	for len(b) > 0 {
		name := next()
		fs = append(fs, qpack.HeaderField{Name: name, Value: next()})
	}
	return fs
}

// fuzzInput encodes flags and name, value pairs as FuzzServerRequest's
// input.
func fuzzInput(flags byte, kv ...string) []byte {
	b := []byte{flags}
	for _, s := range kv {
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	return b
}

// requestFuzzSeeds are the seed corpus: valid requests and the malformed
// ones of the defects and of the conformance table.
func requestFuzzSeeds() [][]byte {
	get := []string{":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "/"}
	with := func(kv ...string) []string { return append(append([]string{}, get...), kv...) }
	var seeds [][]byte
	for _, flags := range []byte{0, 2} {
		for _, kv := range [][]string{
			get,
			with("cookie", "a=1", "cookie", "b=2", "user-agent", "x"),
			with("content-length", "3"),
			with("content-length", "+3"),
			with("content-length", "-0"),
			with("content-length", "3, 3"),
			with("content-length", "3", "content-length", "03"),
			with("te", "Trailers"),
			with("te", "gzip"),
			with("host", "localhost"),
			with("host", "evil.example"),
			with("X-Upper", "1"),
			with("x", " padded "),
			with("x", "a\r\nInjected: 1"),
			with("connection", "close"),
			with("trailer", "x-t"),
			{":method", "GET", ":scheme", "https", ":path", "/", "host", "a.example", "host", "b.example"},
			{":method", "GET", ":scheme", "https", ":path", "/", "host", "user@localhost"},
			{":method", "GET", ":scheme", "https", ":authority", "user:pw@localhost", ":path", "/"},
			{":method", "GET", ":scheme", "https", ":authority", "evil.example/path?x", ":path", "/"},
			{":method", "GET", ":scheme", "https", ":authority", "[::1]:443", ":path", "/a?b#c"},
			{":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "https://evil.example/x"},
			{":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "//evil.example/x"},
			{":method", "GET /admin HTTP/1.1", ":scheme", "https", ":authority", "localhost", ":path", "/"},
			{":method", "OPTIONS", ":scheme", "https", ":authority", "localhost", ":path", "*"},
			{":method", "CONNECT", ":authority", "localhost:443"},
			{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":authority", "localhost", ":path", "/chat"},
			{":method", "PROPFIND", ":scheme", "web+dav", ":authority", "xn--bcher-kva.example:8443", ":path", "/a%20b;c=d"},
		} {
			seeds = append(seeds, fuzzInput(flags, kv...))
			seeds = append(seeds, fuzzInput(flags|4, kv...))
		}
	}
	seeds = append(seeds, fuzzInput(1, "x-\x00", "1"), fuzzInput(3, "cookie", strings.Repeat("c", 200), "cookie", strings.Repeat("c", 200)))
	return seeds
}
