package http3

import (
	"fmt"
	"math"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/quicstack/quic/http3/qpack"
	"golang.org/x/net/http/httpguts"
)

// connectionSpecific lists the fields HTTP/3 forbids (RFC 9114, Section
// 4.2: "An endpoint MUST NOT generate an HTTP/3 field section containing
// connection-specific fields; any message containing connection-specific
// fields MUST be treated as malformed."). TE is allowed with the value
// "trailers" only (isTrailers).
var connectionSpecific = map[string]bool{
	"connection":        true,
	"keep-alive":        true,
	"proxy-connection":  true,
	"transfer-encoding": true,
	"upgrade":           true,
}

// isTrailers reports whether a TE field value is "trailers", the only
// one HTTP/3 allows (RFC 9114, Section 4.2). It is a keyword of TE's
// grammar (RFC 9110, Section 10.1.4), and ABNF strings are
// case-insensitive (RFC 5234, Section 2.3), so "Trailers" is the same.
func isTrailers(v string) bool { return strings.EqualFold(v, "trailers") }

// validName reports whether name is a valid field name in lowercase
// (RFC 9110, Section 5.1, checked by httpguts; RFC 9114, Section 4.2:
// "Characters in field names MUST be converted to lowercase ... A request
// or response containing uppercase characters in field names MUST be
// treated as malformed").
func validName(name string) bool {
	if !httpguts.ValidHeaderFieldName(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// validDecodedName reports whether name may appear in a decoded field
// section: a valid field name in lowercase, or a pseudo-header field name
// (":" and a valid lowercase name), which splitFields checks further.
func validDecodedName(name string) bool {
	if len(name) > 1 && name[0] == ':' {
		return validName(name[1:])
	}
	return validName(name)
}

// validValue reports whether v is a valid field value (RFC 9110, Section
// 5.5, checked by httpguts: no NUL, CR, LF or other control characters
// besides tab) with no leading or trailing whitespace (RFC 9114, Section
// 4.2: "a field value MUST NOT start or end with an ASCII whitespace
// character").
func validValue(v string) bool {
	if !httpguts.ValidHeaderFieldValue(v) {
		return false
	}
	return v == "" || (v[0] != ' ' && v[0] != '\t' && v[len(v)-1] != ' ' && v[len(v)-1] != '\t')
}

// pseudo holds the pseudo-header fields of a message.
type pseudo struct {
	method, scheme, authority, path, protocol, status string
	seen                                              uint8 // pseudoBit of each field present
}

// pseudoBit numbers the pseudo-header fields for pseudo.seen; 0 for
// unknown names.
func pseudoBit(name string) uint8 {
	switch name {
	case ":method":
		return 1
	case ":scheme":
		return 2
	case ":authority":
		return 4
	case ":path":
		return 8
	case ":protocol":
		return 16
	case ":status":
		return 32
	}
	return 0
}

// has reports whether the pseudo-header field name was present.
func (p *pseudo) has(name string) bool { return p.seen&pseudoBit(name) != 0 }

// splitFields validates a decoded field section and separates the
// pseudo-header fields from the header. allowed lists the pseudo-header
// names allowed; none for trailers. Any violation makes the message
// malformed: a stream error of type H3_MESSAGE_ERROR (RFC 9114, Section
// 4.1.2). The names and values have been checked by the QPACK decoder
// (validDecodedName, validValue; see connection.decodeHeaders), once for
// each dynamic table entry however many times the section refers to it;
// splitFields does nothing per field that costs more than the field's
// own bytes on the wire.
func splitFields(fields []qpack.HeaderField, allowed ...string) (pseudo, http.Header, error) {
	var p pseudo
	// The map grows as needed: a hint of len(fields) would let thousands
	// of repeats of one field (cookie crumbs) preallocate thousands of
	// entries.
	h := make(http.Header, min(len(fields), 16))
	// One backing array for the values of single-valued fields, as
	// net/textproto does.
	vals := make([]string, len(fields))
	regular := false
	var crumbs []string
	var keys keyCache
	for _, f := range fields {
		if strings.HasPrefix(f.Name, ":") {
			// "Pseudo-header fields MUST NOT appear in trailer sections",
			// only the defined ones are allowed, each once, and "All
			// pseudo-header fields MUST appear in the header section before
			// regular header fields." (Section 4.3)
			if regular {
				return p, nil, streamError(ErrCodeMessageError, "pseudo-header %s after regular fields", f.Name)
			}
			ok := false
			for _, a := range allowed {
				ok = ok || a == f.Name
			}
			if !ok {
				return p, nil, streamError(ErrCodeMessageError, "pseudo-header %s not allowed", f.Name)
			}
			if p.has(f.Name) {
				return p, nil, streamError(ErrCodeMessageError, "duplicate pseudo-header %s", f.Name)
			}
			p.seen |= pseudoBit(f.Name)
			switch f.Name {
			case ":method":
				p.method = f.Value
			case ":scheme":
				p.scheme = f.Value
			case ":authority":
				p.authority = f.Value
			case ":path":
				p.path = f.Value
			case ":protocol":
				p.protocol = f.Value
			case ":status":
				p.status = f.Value
			}
			continue
		}
		regular = true
		if len(f.Name) <= maxConnectionSpecificName && connectionSpecific[f.Name] || (f.Name == "te" && !isTrailers(f.Value)) {
			return p, nil, streamError(ErrCodeMessageError, "connection-specific field %s", f.Name)
		}
		if f.Name == "cookie" {
			// "If there are multiple cookie field lines after
			// decompression, these MUST be concatenated into a single byte
			// string using the two-byte delimiter of "; "" (Section
			// 4.2.1): collected here and joined once below.
			crumbs = append(crumbs, f.Value)
			continue
		}
		k := keys.canonical(f.Name)
		if vs := h[k]; len(vs) > 0 {
			h[k] = append(vs, f.Value)
		} else {
			vals[0] = f.Value
			h[k] = vals[:1:1]
			vals = vals[1:]
		}
	}
	switch len(crumbs) {
	case 0:
	case 1:
		h["Cookie"] = crumbs
	default:
		h["Cookie"] = []string{strings.Join(crumbs, "; ")}
	}
	return p, h, nil
}

// maxConnectionSpecificName is the length of the longest name in
// connectionSpecific: longer names are not looked up (hashing a long name
// that a section refers to many times would cost per reference).
const maxConnectionSpecificName = len("transfer-encoding")

// keyCache remembers the canonical header keys of the last few names of a
// field section. A name that a section repeats by reference to a dynamic
// table entry is the same string each time, which == compares at once,
// so that canonicalizing it (and allocating the result) happens once.
type keyCache struct {
	names, keys [4]string
	next        int
}

func (c *keyCache) canonical(name string) string {
	for i, n := range c.names {
		if n == name && n != "" {
			return c.keys[i]
		}
	}
	k := textproto.CanonicalMIMEHeaderKey(name)
	c.names[c.next], c.keys[c.next] = name, k
	c.next = (c.next + 1) % len(c.names)
	return k
}

// parseContentLength returns the content-length of h, -1 if absent, and
// replaces a list of identical values, or several field lines, by the one
// value, so that whoever reads h next (a handler, a proxy forwarding it)
// sees one decimal number.
// "Content-Length = 1*DIGIT" (RFC 9110, Section 8.6): no sign, no space, no
// other base. A list, or several field lines, must repeat one value
// exactly: "a recipient MAY either reject the message as invalid or replace
// that invalid field value with a single instance of the decimal value"
// when the values are identical; values that differ, even only in leading
// zeros, are refused.
func parseContentLength(h http.Header) (int64, error) {
	vs := h["Content-Length"]
	if len(vs) == 0 {
		return -1, nil
	}
	first := ""
	var n int64 = -1
	for _, v := range vs {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.Trim(part, " \t")
			if n >= 0 {
				if part != first {
					return 0, streamError(ErrCodeMessageError, "content-length values %q and %q differ", first, part)
				}
				continue
			}
			x, ok := parseDigits(part)
			if !ok {
				return 0, streamError(ErrCodeMessageError, "invalid content-length %q", v)
			}
			first, n = part, x
		}
	}
	if len(vs) > 1 || vs[0] != first {
		h["Content-Length"] = []string{first}
	}
	return n, nil
}

// parseDigits parses "1*DIGIT" as a non-negative int64.
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// appendHeaderFields appends h as HTTP/3 field lines: lowercase names,
// without connection-specific fields and the keys skip names.
func appendHeaderFields(dst []qpack.HeaderField, h http.Header, skip func(string) bool) []qpack.HeaderField {
	for k, vs := range h {
		name := lowerFieldName(k)
		if connectionSpecific[name] || (skip != nil && skip(k)) || !validName(name) {
			continue
		}
		for _, v := range vs {
			if name == "te" {
				if !isTrailers(v) {
					continue
				}
				v = "trailers"
			}
			v = strings.TrimSpace(v)
			if !validValue(v) {
				continue
			}
			dst = append(dst, qpack.HeaderField{Name: name, Value: v, NeverIndex: name == "authorization" || name == "cookie" && len(v) < 20})
		}
	}
	return dst
}

// checkHeader reports the first field of h that cannot be sent, as
// net/http's Transport does for HTTP/1 and HTTP/2.
func checkHeader(h http.Header) error {
	for k, vs := range h {
		if k == ":protocol" {
			continue // extended CONNECT (see Transport.OpenRequestStream)
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("http3: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("http3: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

// fieldSectionSize is the size of a field section as RFC 9114, Section
// 4.2.2 counts it for SETTINGS_MAX_FIELD_SECTION_SIZE: "the length of the
// name and value in bytes plus an overhead of 32 bytes for each field".
func fieldSectionSize(fields []qpack.HeaderField) uint64 {
	var n uint64
	for _, f := range fields {
		n += uint64(len(f.Name)+len(f.Value)) + 32
	}
	return n
}

// lowerNames maps the canonical keys (net/textproto's form) of the field
// names of QPACK's static table (RFC 9204, Appendix A) and a few other
// common ones to their lowercase form, so that sending them allocates no
// lowercase copy.
var lowerNames = func() map[string]string {
	names := []string{
		"accept", "accept-encoding", "accept-language", "accept-ranges",
		"access-control-allow-credentials", "access-control-allow-headers",
		"access-control-allow-methods", "access-control-allow-origin",
		"access-control-expose-headers", "access-control-request-headers",
		"access-control-request-method", "age", "alt-svc", "authorization",
		"cache-control", "content-disposition", "content-encoding",
		"content-language", "content-length", "content-security-policy",
		"content-type", "cookie", "date", "early-data", "etag", "expect",
		"expect-ct", "expires", "forwarded", "if-match", "if-modified-since",
		"if-none-match", "if-range", "last-modified", "link", "location",
		"origin", "priority", "purpose", "range", "referer", "retry-after",
		"server", "set-cookie", "strict-transport-security",
		"timing-allow-origin", "upgrade-insecure-requests", "user-agent",
		"vary", "x-content-type-options", "x-forwarded-for",
		"x-frame-options", "x-request-id", "x-xss-protection",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[http.CanonicalHeaderKey(n)] = n
	}
	return m
}()

// lowerFieldName returns k in lowercase.
func lowerFieldName(k string) string {
	if n, ok := lowerNames[k]; ok {
		return n
	}
	return strings.ToLower(k)
}
