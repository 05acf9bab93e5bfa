package masque

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultTemplate is the path and query of the default URI Template of a
// UDP proxy: "https://$PROXY_HOST:$PROXY_PORT/.well-known/masque/
// udp/{target_host}/{target_port}/" (RFC 9298, Section 2).
const DefaultTemplate = "/.well-known/masque/udp/{target_host}/{target_port}/"

// A template is a parsed URI Template of the restricted form RFC 9298,
// Section 2 allows, as far as this package supports it: simple string
// expansions ({var}) in the path, and form-style query expansions
// ({?var,...} and {&var,...}) at its end. Other operators are refused:
// "The URI Template MUST NOT use Reserved Expansion ("+" operator),
// Fragment Expansion ("#" operator), Label Expansion with Dot-Prefix,
// Path Segment Expansion with Slash-Prefix, nor Path-Style Parameter
// Expansion with Semicolon-Prefix."
type template struct {
	prefix string  // scheme and authority, "" for a path-only template
	path   []piece // literal text and {var} expansions
	query  []string
	qop    byte // '?' or '&' before the query variables; 0: none
	qlit   string
}

// piece is literal text, or a variable when v is set.
type piece struct {
	lit string
	v   string
}

var errTemplate = errors.New("masque: invalid URI template")

// parseTemplate parses a URI Template; path-only templates (starting with
// "/") are accepted for a proxy, which sees no scheme and authority in
// its template.
func parseTemplate(s string) (*template, error) {
	// "MUST only contain ASCII characters in the range 0x21-0x7E"
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return nil, errTemplate
		}
	}
	t := &template{}
	rest := s
	if !strings.HasPrefix(s, "/") {
		u := strings.Index(s, "://")
		if u <= 0 {
			return nil, errTemplate
		}
		slash := strings.IndexByte(s[u+3:], '/')
		if slash <= 0 {
			return nil, errTemplate // "MUST include non-empty scheme, authority, and path components"
		}
		t.prefix, rest = s[:u+3+slash], s[u+3+slash:]
		if strings.ContainsAny(t.prefix, "{}") {
			return nil, errTemplate // "All template variables MUST be within the path or query components"
		}
	}
	hasHost, hasPort := false, false
	note := func(v string) error {
		if v == "" || !validVarName(v) {
			return errTemplate
		}
		hasHost = hasHost || v == "target_host"
		hasPort = hasPort || v == "target_port"
		return nil
	}
	for len(rest) > 0 {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.ContainsAny(rest, "}") {
				return nil, errTemplate
			}
			if t.qop != 0 {
				return nil, errTemplate // literal text after the query expansion
			}
			t.path = append(t.path, piece{lit: rest})
			break
		}
		if open > 0 {
			if t.qop != 0 || strings.ContainsAny(rest[:open], "}") {
				return nil, errTemplate
			}
			t.path = append(t.path, piece{lit: rest[:open]})
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, errTemplate
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		switch {
		case expr == "":
			return nil, errTemplate
		case expr[0] == '?' || expr[0] == '&':
			if t.qop != 0 {
				return nil, errTemplate
			}
			t.qop = expr[0]
			for _, v := range strings.Split(expr[1:], ",") {
				if err := note(v); err != nil {
					return nil, err
				}
				t.query = append(t.query, v)
			}
		case strings.ContainsRune("+#./;=,!@|", rune(expr[0])):
			return nil, errTemplate
		default:
			if t.qop != 0 || strings.Contains(expr, ",") {
				return nil, errTemplate // one variable per simple expansion, as RFC 9298's examples
			}
			if err := note(expr); err != nil {
				return nil, err
			}
			t.path = append(t.path, piece{v: expr})
		}
	}
	if len(t.path) == 0 || t.path[0].v != "" || !strings.HasPrefix(t.path[0].lit, "/") {
		return nil, errTemplate // "The path component of the URI Template MUST start with a slash"
	}
	if t.qop == '&' && !strings.Contains(t.lastLit(), "?") {
		return nil, errTemplate
	}
	if !hasHost || !hasPort {
		return nil, errTemplate // "MUST contain the two variables "target_host" and "target_port""
	}
	return t, nil
}

func (t *template) lastLit() string {
	if n := len(t.path); n > 0 {
		return t.path[n-1].lit
	}
	return ""
}

func validVarName(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// expand returns the URL for target host and port: "if "target_host"
// contains an IPv6 literal, the colons (":") MUST be percent-encoded"
// (Section 3); simple expansion percent-encodes every character outside
// the unreserved set (RFC 6570, Section 3.2.2).
func (t *template) expand(host string, port uint16) string {
	vals := map[string]string{"target_host": host, "target_port": strconv.Itoa(int(port))}
	var b strings.Builder
	b.WriteString(t.prefix)
	for _, p := range t.path {
		if p.v == "" {
			b.WriteString(p.lit)
		} else {
			b.WriteString(escapeUnreserved(vals[p.v]))
		}
	}
	if t.qop != 0 {
		sep := string(t.qop)
		for _, v := range t.query {
			val, ok := vals[v]
			if !ok {
				continue // undefined variables are left out (RFC 6570, Section 3.2.1)
			}
			b.WriteString(sep + v + "=" + escapeUnreserved(val))
			sep = "&"
		}
	}
	return b.String()
}

// escapeUnreserved percent-encodes all but ALPHA / DIGIT / "-" / "." /
// "_" / "~".
func escapeUnreserved(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// match extracts the target from a request's URL: its escaped path
// against the template's path, and its query's variables. It reports
// false if the URL does not match.
func (t *template) match(u *url.URL) (host string, port uint16, ok bool) {
	vals := map[string]string{}
	path := u.EscapedPath()
	if t.qop == 0 && u.RawQuery != "" {
		path += "?" + u.RawQuery // "/masque?h={target_host}&p={target_port}"
	}
	for i, p := range t.path {
		if p.v == "" {
			lit := p.lit
			if t.qop == '&' && i == len(t.path)-1 {
				// "/x?fixed=1{&target_host}": the literal query part is
				// matched with the query below.
				lit, _, _ = strings.Cut(lit, "?")
			}
			if !strings.HasPrefix(path, lit) {
				return "", 0, false
			}
			path = path[len(lit):]
			continue
		}
		// A variable runs to the next literal's first character (or the
		// end): simple expansion escapes every reserved character, so
		// none of the literal's can be inside.
		stop := len(path)
		if i+1 < len(t.path) && t.path[i+1].lit != "" {
			if j := strings.IndexByte(path, t.path[i+1].lit[0]); j >= 0 {
				stop = j
			}
		}
		v, err := url.PathUnescape(path[:stop])
		if err != nil || v == "" {
			return "", 0, false
		}
		vals[p.v] = v
		path = path[stop:]
	}
	if path != "" {
		return "", 0, false
	}
	if t.qop != 0 {
		q := u.Query()
		for _, v := range t.query {
			if vs, ok := q[v]; ok && len(vs) == 1 {
				vals[v] = vs[0]
			}
		}
	}
	host, ps := vals["target_host"], vals["target_port"]
	// "both the "target_host" and "target_port" variables MUST NOT be
	// empty", "target_port" MUST represent an integer between 1 and
	// 65535 inclusive" (Section 3).
	n, err := strconv.ParseUint(ps, 10, 16)
	if host == "" || err != nil || n == 0 || ps[0] == '+' {
		return "", 0, false
	}
	// "Note that IPv6 scoped addressing zone identifiers are not
	// supported."
	if strings.ContainsAny(host, "%/[] ") {
		return "", 0, false
	}
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return "", 0, false
	}
	return host, uint16(n), true
}
