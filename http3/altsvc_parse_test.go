package http3

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseAltSvc(t *testing.T) {
	h3 := func(host string, port int, ma time.Duration, persist bool) altSvc {
		return altSvc{Protocol: "h3", Host: host, Port: port, MaxAge: ma, Persist: persist}
	}
	day := 24 * time.Hour
	for _, c := range []struct {
		in    string
		want  []altSvc
		clear bool
	}{
		{`h3=":443"`, []altSvc{h3("", 443, day, false)}, false},
		{`h3=":8443"; ma=3600`, []altSvc{h3("", 8443, time.Hour, false)}, false},
		{`h3="alt.example.com:443";ma=60;persist=1`, []altSvc{h3("alt.example.com", 443, time.Minute, true)}, false},
		{`h3="ALT.Example.com:443"`, []altSvc{h3("alt.example.com", 443, day, false)}, false},
		{`h3="[2001:db8::1]:443"`, []altSvc{h3("2001:db8::1", 443, day, false)}, false},
		{`h3="192.0.2.1:443"`, []altSvc{h3("192.0.2.1", 443, day, false)}, false},
		// "Clients MUST ignore "persist" parameters with values other
		// than "1"" and unknown parameters.
		{`h3=":443"; persist=2; foo="bar;baz"; MA=5`, []altSvc{h3("", 443, 5*time.Second, false)}, false},
		// Several values, in order of preference; other protocols are
		// kept for the caller to filter.
		{`h2="alt.example.com:8000", h3=":443" , h3-29=":443"`, []altSvc{
			{Protocol: "h2", Host: "alt.example.com", Port: 8000, MaxAge: day},
			h3("", 443, day, false),
			{Protocol: "h3-29", Port: 443, MaxAge: day},
		}, false},
		// Empty list elements are ignored.
		{`, h3=":443",,`, []altSvc{h3("", 443, day, false)}, false},
		// Percent-encoded protocol names (RFC 7838's examples).
		{`w%3Dx%3Ay#z=":1"`, []altSvc{{Protocol: "w=x:y#z", Port: 1, MaxAge: day}}, false},
		{`x%25y=":1"`, []altSvc{{Protocol: "x%y", Port: 1, MaxAge: day}}, false},
		// A quoted-pair in the authority.
		{`h3="\:443"`, []altSvc{h3("", 443, day, false)}, false},
		// An overflowing ma is capped at 2^31 seconds.
		{`h3=":443"; ma=99999999999999999999999`, []altSvc{h3("", 443, maxAltSvcAge, false)}, false},
		{`clear`, nil, true},
		{` clear `, nil, true},
		// "including those specified in the same response, in case of
		// an invalid reply containing both"
		{`h3=":443", clear`, nil, true},
	} {
		alts, clear, err := parseAltSvc(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(alts, c.want) || clear != c.clear {
			t.Errorf("%q: got %+v clear=%v; want %+v clear=%v", c.in, alts, clear, c.want, c.clear)
		}
	}
}

func TestParseAltSvcMalformed(t *testing.T) {
	for _, in := range []string{
		``, ` `, `,`,
		`Clear`, `clear=1`, `clear h3=":443"`,
		`h3`, `h3=`, `h3=:443`, `h3=":443`, `h3=":"`, `h3="443"`, `h3=":0"`, `h3=":65536"`, `h3=":+443"`, `h3=":443443"`,
		`h3="host:443:"`, `h3="ho st:443"`, "h3=\"h\u00f6st:443\"", `h3="[::1:443"`, `h3="[1.2.3.4]:443"`, `h3="[fe80::1%eth0]:443"`,
		`h3="..:443"`, `h3=".:443"`, `h3="a..b:443"`, `h3="` + strings.Repeat("a", 64) + `.com:443"`,
		`h3=":443"; ma`, `h3=":443"; ma=`, `h3=":443"; ma=-1`, `h3=":443"; ma=1.5`, `h3=":443"; ma="1 "`,
		`h3=":443"; ma=1; ma=2`, `h3=":443"; persist=1; persist=1`, `h3=":443";`, `h3=":443"; =1`,
		`h3=":443" h2=":443"`, `h3=":443";; ma=1`,
		`h%33=":443"`, `h3%2a=":443"`, `%2=":443"`, `x%2ay=":1"`, `%=":1"`,
		`h3=":443"` + strings.Repeat("; a=b", maxAltSvcParams+1),
		strings.Repeat(`h3=":443",`, maxAltSvcValues+1),
		strings.Repeat(",", maxAltSvcValues+1) + `h3=":443"`,
		`h3="` + strings.Repeat("a.", maxAltSvcFieldLen/2) + `:443"`,
		"h3=\":443\"\x00", "h3=\"\x7f:443\"",
	} {
		if alts, clear, err := parseAltSvc(in); err == nil {
			t.Errorf("%q: accepted as %+v clear=%v", in, alts, clear)
		}
	}
}

// formatAltSvc is parseAltSvc's inverse for the fuzz target's
// round-trip property.
func formatAltSvcForTest(alts []altSvc) string {
	var b strings.Builder
	for i, a := range alts {
		if i > 0 {
			b.WriteString(", ")
		}
		for j := 0; j < len(a.Protocol); j++ {
			c := a.Protocol[j]
			if isTokenChar(c) && c != '%' {
				b.WriteByte(c)
			} else {
				b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)+strconv.FormatUint(uint64(c)&15, 16)))
			}
		}
		host := a.Host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		b.WriteString(`="` + host + ":" + strconv.Itoa(a.Port) + `"; ma=` + strconv.FormatInt(int64(a.MaxAge/time.Second), 10))
		if a.Persist {
			b.WriteString("; persist=1")
		}
	}
	return b.String()
}

// FuzzParseAltSvc checks that the parser never panics, that what it
// accepts is within its limits, and that formatting what it parsed and
// parsing that again gives the same alternatives.
func FuzzParseAltSvc(f *testing.F) {
	for _, s := range []string{
		`h3=":443"`, `h3=":443"; ma=86400`, `h3="alt.example.com:443";ma=60;persist=1`, `clear`,
		`h2="alt.example.com:8000", h3=":443"`, `w%3Dx%3Ay#z=":1"`, `h3="[2001:db8::1]:443"`,
		`h3=":443"; foo="b\"ar"`, `h3="\:443"`, `, ,h3=":1",`, `h3=":443", clear`, `h3=":443"; ma=99999999999999999999`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		alts, clear, err := parseAltSvc(v)
		if err != nil {
			if alts != nil || clear {
				t.Fatal("results with an error")
			}
			return
		}
		if clear {
			if alts != nil {
				t.Fatal("alternatives with clear")
			}
			return
		}
		if len(alts) == 0 || len(alts) > maxAltSvcValues {
			t.Fatalf("%d alternatives", len(alts))
		}
		for _, a := range alts {
			if a.Port < 1 || a.Port > 65535 || a.MaxAge < 0 || a.MaxAge > maxAltSvcAge || a.Protocol == "" || len(a.Host) > maxHostLen {
				t.Fatalf("out of bounds: %+v", a)
			}
		}
		again, clear2, err := parseAltSvc(formatAltSvcForTest(alts))
		if err != nil || clear2 || !reflect.DeepEqual(again, alts) {
			t.Fatalf("round trip of %+v: %+v, %v, %v", alts, again, clear2, err)
		}
	})
}
