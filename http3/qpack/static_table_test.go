package qpack

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestStaticTableSpotChecks(t *testing.T) {
	// RFC 9204, Appendix A.
	checks := map[int]staticEntry{
		0:  {":authority", ""},
		1:  {":path", "/"},
		17: {":method", "GET"},
		25: {":status", "200"},
		31: {"accept-encoding", "gzip, deflate, br"},
		52: {"content-type", "text/html; charset=utf-8"},
		54: {"content-type", "text/plain;charset=utf-8"},
		58: {"strict-transport-security", "max-age=31536000; includesubdomains; preload"},
		85: {"content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"},
		98: {"x-frame-options", "sameorigin"},
	}
	for i, want := range checks {
		if staticTable[i] != want {
			t.Errorf("static[%d] = %q, want %q", i, staticTable[i], want)
		}
	}
}

func TestStaticLookup(t *testing.T) {
	tests := []struct {
		name, value string
		index       int
		exact       bool
	}{
		{":method", "GET", 17, true},
		{":method", "PATCH", 15, false},
		{":status", "500", 71, true},
		{":status", "201", 24, false},
		{"user-agent", "x", 95, false},
		{"user-agent", "", 95, true},
		{"x-unknown", "", -1, false},
		{"content-type", "text/plain;charset=utf-8", 54, true},
	}
	for _, tt := range tests {
		i, exact := staticLookup(tt.name, tt.value)
		if i != tt.index || exact != tt.exact {
			t.Errorf("staticLookup(%q, %q) = %d, %v; want %d, %v", tt.name, tt.value, i, exact, tt.index, tt.exact)
		}
	}
	// Every entry finds itself (the first of any duplicates).
	for i, e := range staticTable {
		j, exact := staticLookup(e.name, e.value)
		if !exact || staticTable[j] != e || j > i {
			t.Errorf("entry %d: lookup gave %d, %v", i, j, exact)
		}
		if k := staticNameIndex(e.name); k < 0 || staticTable[k].name != e.name {
			t.Errorf("entry %d: staticNameIndex gave %d", i, k)
		}
	}
}

func TestStaticLookupAllocs(t *testing.T) {
	name := strings.Clone("content-type")
	value := strings.Clone("application/json")
	n := testing.AllocsPerRun(100, func() {
		if i, ok := staticLookup(name, value); i != 46 || !ok {
			t.Fatal("lookup failed")
		}
	})
	if n != 0 {
		t.Errorf("staticLookup allocates %v times", n)
	}
}

// TestStaticTableMatchesRFC reads Table 4 of RFC 9204, Appendix A, when the
// shared specs are checked out beside the repository.
func TestStaticTableMatchesRFC(t *testing.T) {
	f, err := os.Open("../../../shared/specs/rfc9204.txt")
	if err != nil {
		t.Skip("RFC 9204 text not available:", err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\s*\|\s*(\d*)\s*\|\s*(\S*)\s*\|\s?(.*?)\s*\|\s*$`)
	var rows []staticEntry
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Appendix A.") {
			in = true
		}
		if strings.HasPrefix(line, "Appendix B.") {
			break
		}
		m := row.FindStringSubmatch(line)
		if !in || m == nil || m[2] == "Name" {
			continue
		}
		if m[1] != "" {
			if idx, _ := strconv.Atoi(m[1]); idx != len(rows) {
				t.Fatalf("row %d out of order", idx)
			}
			rows = append(rows, staticEntry{m[2], m[3]})
			continue
		}
		// A wrapped cell: the line break replaced a space after ';'.
		r := &rows[len(rows)-1]
		r.name += m[2]
		if strings.HasSuffix(r.value, ";") {
			r.value += " "
		}
		r.value += m[3]
	}
	if len(rows) != len(staticTable) {
		t.Fatalf("RFC has %d rows, table has %d", len(rows), len(staticTable))
	}
	for i := range rows {
		if rows[i] != staticTable[i] {
			t.Errorf("static[%d] = %q, RFC says %q", i, staticTable[i], rows[i])
		}
	}
}
