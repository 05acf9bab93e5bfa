package http3

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Limits of the Alt-Svc parser. A field value beyond them is ignored
// whole, as a malformed one is: what a server makes us parse and store is
// bounded.
const (
	// maxAltSvcFieldLen bounds the length of an Alt-Svc field value (all
	// its field lines joined).
	maxAltSvcFieldLen = 8 << 10
	// maxAltSvcValues bounds the list elements of a field value.
	maxAltSvcValues = 32
	// maxAltSvcParams bounds the parameters of one alternative.
	maxAltSvcParams = 16
	// maxAltSvcAge caps the "ma" parameter: 2^31 seconds, the value
	// caches use when a delta-seconds overflows (RFC 9111, Section 1.2.2).
	maxAltSvcAge = 1 << 31 * time.Second
	// defaultAltSvcAge is the freshness of an alternative without "ma":
	// "it is considered fresh for 24 hours from generation of the
	// message" (RFC 7838, Section 3.1).
	defaultAltSvcAge = 24 * time.Hour
	// maxHostLen bounds a host name (RFC 1035, Section 2.3.4: 255
	// octets in wire form, 253 characters in text).
	maxHostLen = 253
)

// errAltSvc is the error of a malformed or oversized Alt-Svc field value.
var errAltSvc = errors.New("http3: malformed Alt-Svc field value")

// An altSvc is one alternative service of an Alt-Svc field value
// (RFC 7838, Section 3).
type altSvc struct {
	// Protocol is the ALPN protocol name, percent-decoded ("h3").
	Protocol string
	// Host is the alternative's host (without brackets for an IPv6
	// literal), or empty for the origin's host.
	Host string
	// Port is the alternative's port, 1 to 65535.
	Port int
	// MaxAge is how long after the response the alternative is fresh
	// ("ma", 24 hours by default).
	MaxAge time.Duration
	// Persist is set by "persist=1": the alternative survives a change of
	// network (RFC 7838, Section 2.2).
	Persist bool
}

// parseAltSvc parses an Alt-Svc field value (all its field lines joined
// with ","):
//
//	Alt-Svc       = clear / 1#alt-value
//	clear         = %s"clear"; "clear", case-sensitive
//	alt-value     = alternative *( OWS ";" OWS parameter )
//	alternative   = protocol-id "=" alt-authority
//	protocol-id   = token ; percent-encoded ALPN protocol name
//	alt-authority = quoted-string ; containing [ uri-host ] ":" port
//	parameter     = token "=" ( token / quoted-string )
//
// (RFC 7838, Section 3). It returns the alternatives in the server's order
// of preference, or clear set for "clear": "A field value containing the
// special value "clear" indicates that the origin requests all
// alternatives for that origin to be invalidated (including those
// specified in the same response, in case of an invalid reply containing
// both "clear" and alternative services)". Anything else that does not
// follow the grammar, or exceeds the limits above, is an error: the caller
// ignores the field whole.
func parseAltSvc(v string) (alts []altSvc, clear bool, err error) {
	if len(v) > maxAltSvcFieldLen {
		return nil, false, errAltSvc
	}
	p := altSvcParser{s: v}
	elements := 0
	for {
		p.skipOWS()
		if p.done() {
			break
		}
		if p.peek() == ',' {
			// "a recipient MUST parse and ignore a reasonable number
			// of empty list elements" (RFC 9110, Section 5.6.1.2).
			p.i++
			if elements++; elements > maxAltSvcValues {
				return nil, false, errAltSvc
			}
			continue
		}
		if elements++; elements > maxAltSvcValues {
			return nil, false, errAltSvc
		}
		if p.hasClear() {
			clear = true
		} else {
			a, err := p.altValue()
			if err != nil {
				return nil, false, err
			}
			alts = append(alts, a)
		}
		p.skipOWS()
		if p.done() {
			break
		}
		if p.peek() != ',' {
			return nil, false, errAltSvc
		}
		p.i++
	}
	if clear {
		return nil, true, nil
	}
	if len(alts) == 0 {
		return nil, false, errAltSvc // 1#alt-value: at least one
	}
	return alts, false, nil
}

// altSvcParser is a cursor over an Alt-Svc field value.
type altSvcParser struct {
	s string
	i int
}

func (p *altSvcParser) done() bool { return p.i >= len(p.s) }
func (p *altSvcParser) peek() byte { return p.s[p.i] }

// skipOWS skips optional whitespace: OWS = *( SP / HTAB ).
func (p *altSvcParser) skipOWS() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// hasClear consumes the keyword "clear" if it is a whole list element.
func (p *altSvcParser) hasClear() bool {
	const kw = "clear"
	if !strings.HasPrefix(p.s[p.i:], kw) {
		return false
	}
	j := p.i + len(kw)
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j < len(p.s) && p.s[j] != ',' {
		return false
	}
	p.i += len(kw)
	return true
}

// token consumes a token (RFC 9110, Section 5.6.2).
func (p *altSvcParser) token() (string, bool) {
	start := p.i
	for !p.done() && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i], p.i > start
}

// quotedString consumes a quoted-string and returns its content with the
// quoted-pairs resolved (RFC 9110, Section 5.6.4).
func (p *altSvcParser) quotedString() (string, bool) {
	if p.done() || p.s[p.i] != '"' {
		return "", false
	}
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), true
		case c == '\\':
			// quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
			if p.i+1 >= len(p.s) || !isQuotedPairChar(p.s[p.i+1]) {
				return "", false
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case isQdText(c):
			b.WriteByte(c)
			p.i++
		default:
			return "", false
		}
	}
	return "", false // no closing quote
}

// altValue consumes alternative *( OWS ";" OWS parameter ).
func (p *altSvcParser) altValue() (altSvc, error) {
	id, ok := p.token()
	if !ok || p.done() || p.peek() != '=' {
		return altSvc{}, errAltSvc
	}
	p.i++
	proto, ok := decodeProtocolID(id)
	if !ok {
		return altSvc{}, errAltSvc
	}
	auth, ok := p.quotedString()
	if !ok {
		return altSvc{}, errAltSvc
	}
	host, port, ok := parseAltAuthority(auth)
	if !ok {
		return altSvc{}, errAltSvc
	}
	a := altSvc{Protocol: proto, Host: host, Port: port, MaxAge: defaultAltSvcAge}
	var sawMA, sawPersist bool
	for n := 0; ; n++ {
		save := p.i
		p.skipOWS()
		if p.done() || p.peek() != ';' {
			p.i = save
			return a, nil
		}
		if n == maxAltSvcParams {
			return altSvc{}, errAltSvc
		}
		p.i++
		p.skipOWS()
		name, ok := p.token()
		if !ok || p.done() || p.peek() != '=' {
			return altSvc{}, errAltSvc
		}
		p.i++
		var value string
		if !p.done() && p.peek() == '"' {
			value, ok = p.quotedString()
		} else {
			value, ok = p.token()
		}
		if !ok {
			return altSvc{}, errAltSvc
		}
		// Parameter names are tokens, compared case-insensitively
		// (RFC 9110, Section 5.6.6).
		switch strings.ToLower(name) {
		case "ma":
			// A parameter given twice has no defined meaning: the
			// field is ambiguous, so malformed.
			if sawMA {
				return altSvc{}, errAltSvc
			}
			sawMA = true
			age, ok := parseDeltaSeconds(value)
			if !ok {
				return altSvc{}, errAltSvc
			}
			a.MaxAge = age
		case "persist":
			if sawPersist {
				return altSvc{}, errAltSvc
			}
			sawPersist = true
			// "Clients MUST ignore "persist" parameters with values
			// other than "1"." (RFC 7838, Section 3.1)
			a.Persist = value == "1"
		default:
			// "Unknown parameters MUST be ignored." (RFC 7838,
			// Section 3)
		}
	}
}

// parseDeltaSeconds parses delta-seconds = 1*DIGIT (RFC 9111, Section
// 1.2.2), capping an overflowing value at 2^31 seconds.
func parseDeltaSeconds(v string) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < 1<<31 {
			n = min(n*10+int64(c-'0'), 1<<31)
		}
	}
	return time.Duration(n) * time.Second, true
}

// decodeProtocolID percent-decodes a protocol-id into an ALPN protocol
// name. "Octets in the ALPN protocol name MUST NOT be percent-encoded if
// they are valid token characters except "%", and [w]hen using
// percent-encoding, uppercase hex digits MUST be used." (RFC 7838,
// Section 3): with these rules each name has one spelling, and one that
// breaks them is malformed.
func decodeProtocolID(id string) (string, bool) {
	if !strings.Contains(id, "%") {
		return id, len(id) <= 255
	}
	b := make([]byte, 0, len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(id) {
			return "", false
		}
		hi, ok1 := upperHex(id[i+1])
		lo, ok2 := upperHex(id[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		d := hi<<4 | lo
		if d != '%' && isTokenChar(d) {
			return "", false
		}
		b = append(b, d)
		i += 2
	}
	return string(b), len(b) > 0 && len(b) <= 255
}

func upperHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseAltAuthority parses the content of an alt-authority:
// [ uri-host ] ":" port (RFC 7838, Section 3). The host must be a DNS
// name in A-labels ("An internationalized domain name ... MUST be
// expressed using A-labels", Section 8), an IPv4 address, or an IPv6
// address in brackets; the port 1 to 65535.
func parseAltAuthority(s string) (host string, port int, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, false
	}
	host, ps := s[:i], s[i+1:]
	if len(ps) == 0 || len(ps) > 5 {
		return "", 0, false
	}
	for j := 0; j < len(ps); j++ {
		if ps[j] < '0' || ps[j] > '9' {
			return "", 0, false
		}
	}
	port, _ = strconv.Atoi(ps)
	if port < 1 || port > 65535 {
		return "", 0, false
	}
	if host == "" {
		return "", port, true
	}
	if host[0] == '[' {
		if host[len(host)-1] != ']' {
			return "", 0, false
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", 0, false
		}
		return a.String(), port, true
	}
	if !validHostName(host) {
		return "", 0, false
	}
	return strings.ToLower(host), port, true
}

// validHostName reports whether h is a DNS name of letters, digits, '-'
// and '_' in non-empty labels of at most 63 characters, or an IPv4
// address.
func validHostName(h string) bool {
	if len(h) == 0 || len(h) > maxHostLen {
		return false
	}
	label := 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c == '.':
			if label == 0 {
				return false
			}
			label = 0
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			if label++; label > 63 {
				return false
			}
		default:
			return false
		}
	}
	return label > 0 || len(h) > 1 // a trailing dot is allowed, "." is not
}

// isTokenChar reports whether c is a tchar (RFC 9110, Section 5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// isQdText reports whether c may appear unescaped in a quoted-string:
// qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text.
func isQdText(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E) || c >= 0x80
}

// isQuotedPairChar reports whether c may follow a backslash:
// HTAB / SP / VCHAR / obs-text.
func isQuotedPairChar(c byte) bool {
	return c == '\t' || c == ' ' || (c >= 0x21 && c <= 0x7E) || c >= 0x80
}
