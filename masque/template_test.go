package masque

import (
	"net/url"
	"testing"
)

// RFC 9298, Section 2's examples and requirements.
func TestTemplateExpandAndMatch(t *testing.T) {
	for _, tc := range []struct {
		tmpl, host string
		port       uint16
		want       string
	}{
		{"https://example.org/.well-known/masque/udp/{target_host}/{target_port}/", "192.0.2.6", 443,
			"https://example.org/.well-known/masque/udp/192.0.2.6/443/"},
		// "if "target_host" contains an IPv6 literal, the colons (":") MUST
		// be percent-encoded ... "2001%3Adb8%3A%3A42"" (Section 3)
		{"https://example.org/.well-known/masque/udp/{target_host}/{target_port}/", "2001:db8::42", 53,
			"https://example.org/.well-known/masque/udp/2001%3Adb8%3A%3A42/53/"},
		{"https://proxy.example.org:4443/masque?h={target_host}&p={target_port}", "example.com", 8443,
			"https://proxy.example.org:4443/masque?h=example.com&p=8443"},
		{"https://proxy.example.org:4443/masque{?target_host,target_port}", "example.com", 8443,
			"https://proxy.example.org:4443/masque?target_host=example.com&target_port=8443"},
		{"https://proxy.example.org/m?x=1{&target_host,target_port}", "a.b", 1,
			"https://proxy.example.org/m?x=1&target_host=a.b&target_port=1"},
	} {
		tm, err := parseTemplate(tc.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tc.tmpl, err)
		}
		got := tm.expand(tc.host, tc.port)
		if got != tc.want {
			t.Errorf("expand %s: %s, want %s", tc.tmpl, got, tc.want)
			continue
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatal(err)
		}
		// The proxy matches the path and query only.
		pt, err := parseTemplate(tc.tmpl[len(tm.prefix):])
		if err != nil {
			t.Fatalf("path-only %s: %v", tc.tmpl, err)
		}
		host, port, ok := pt.match(u)
		if !ok || host != tc.host || port != tc.port {
			t.Errorf("match %s: %q %d %v", got, host, port, ok)
		}
	}
}

func TestTemplateRejected(t *testing.T) {
	for _, s := range []string{
		"", "/", "https://example.org/{target_host}",
		"https://example.org/{target_port}",
		"https://{target_host}/{target_port}/",                   // variable in the authority
		"example.org/{target_host}/{target_port}/",               // no scheme
		"https://example.org/{+target_host}/{target_port}/",      // reserved expansion
		"https://example.org/{#target_host}/{target_port}/",      // fragment expansion
		"https://example.org/{.target_host}/{target_port}/",      // label expansion
		"https://example.org{/target_host}/{target_port}/",       // path segment expansion
		"https://example.org/{;target_host}/{target_port}/",      // path-style expansion
		"https://example.org/é/{target_host}/{target_port}/",     // non-ASCII
		"https://example.org/a b/{target_host}/{target_port}/",   // space
		"https://example.org/{target_host/{target_port}/",        // unclosed
		"https://example.org/{target_host}/{target_port}/{?x}/y", // literal after the query
	} {
		if _, err := parseTemplate(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestTemplateMatchRefusesBadTargets(t *testing.T) {
	tm, err := parseTemplate(DefaultTemplate)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"/.well-known/masque/udp/192.0.2.1/0/", "/.well-known/masque/udp/192.0.2.1/65536/",
		"/.well-known/masque/udp/192.0.2.1/+53/", "/.well-known/masque/udp//53/",
		"/.well-known/masque/udp/192.0.2.1//", "/.well-known/masque/udp/fe80%3A%3A1%25eth0/53/",
		"/.well-known/masque/udp/not%3Aan%3Aaddress/53/", "/.well-known/masque/udp/a/53/extra",
		"/.well-known/masque/tcp/a/53/",
	} {
		u, err := url.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		if h, port, ok := tm.match(u); ok {
			t.Errorf("%s matched: %q %d", p, h, port)
		}
	}
}

// FuzzTemplate checks that parsing and matching never panic, and that
// what a template expands to matches it back.
func FuzzTemplate(f *testing.F) {
	f.Add(DefaultTemplate, "192.0.2.1", uint16(53))
	f.Add("/masque{?target_host,target_port}", "2001:db8::1", uint16(443))
	f.Add("/m?x=1{&target_host,target_port}", "example.com", uint16(1))
	f.Add("/{target_host}{target_port}", "a", uint16(7))
	f.Fuzz(func(t *testing.T, tmpl, host string, port uint16) {
		tm, err := parseTemplate(tmpl)
		if err != nil {
			return
		}
		u, err := url.Parse(tm.expand(host, port))
		if err != nil {
			return
		}
		tm.match(u) // must not panic; adjacent variables need not round-trip
	})
}

// FuzzPayload checks the HTTP Datagram payload parser.
func FuzzPayload(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add([]byte{0x40})
	f.Add([]byte{0xc0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, p, ok := parsePayload(b)
		if !ok {
			return
		}
		if id == 0 && len(b) > 0 && b[0] == 0 {
			if string(appendUDP(nil, p)) != string(b) {
				t.Fatalf("round trip of %x", b)
			}
		}
	})
}
