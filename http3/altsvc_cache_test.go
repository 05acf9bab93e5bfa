package http3

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testClock is a clock tests move by hand.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time          { return c.t }
func (c *testClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestCache(max int) (*altSvcCache, *testClock) {
	clk := &testClock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	c := newAltSvcCache(max, 0)
	c.now = clk.now
	return c, clk
}

func authorities(cs []candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.authority)
	}
	return out
}

func TestAltSvcCacheReplaceClearExpire(t *testing.T) {
	c, clk := newTestCache(0)
	o := originKey("example.com", 443)
	if !c.setAltSvc(o, `h2=":443", h3="alt.example.net:8443"; ma=60, h3=":443"; ma=120`, 0) {
		t.Fatal("field not applied")
	}
	if got := authorities(c.candidates(o, "example.com")); !equalStrings(got, []string{"alt.example.net:8443", "example.com:443"}) {
		t.Fatalf("candidates %q", got)
	}
	// "its value invalidates and replaces all cached alternative
	// services for that origin"
	c.setAltSvc(o, `h3=":9443"`, 0)
	if got := authorities(c.candidates(o, "example.com")); !equalStrings(got, []string{"example.com:9443"}) {
		t.Fatalf("after replacement: %q", got)
	}
	// An origin without HTTP/3 alternatives in its new field has none.
	c.setAltSvc(o, `h2=":443"`, 0)
	if got := c.candidates(o, "example.com"); len(got) != 0 || c.len() != 0 {
		t.Fatalf("after an h2-only field: %v, %d origins", got, c.len())
	}
	// Freshness: ma less the response's Age.
	c.setAltSvc(o, `h3=":443"; ma=100`, 40*time.Second)
	clk.advance(59 * time.Second)
	if len(c.candidates(o, "example.com")) != 1 {
		t.Fatal("expired early")
	}
	clk.advance(time.Second)
	if len(c.candidates(o, "example.com")) != 0 {
		t.Fatal("fresh after ma - Age")
	}
	// clear.
	c.setAltSvc(o, `h3=":443"`, 0)
	c.setAltSvc(o, `clear`, 0)
	if len(c.candidates(o, "example.com")) != 0 {
		t.Fatal("clear kept alternatives")
	}
	// A malformed field is ignored whole: the entry stays.
	c.setAltSvc(o, `h3=":443"`, 0)
	if c.setAltSvc(o, `h3=":444", h3=`, 0) || c.setAltSvc(o, strings.Repeat(`h3=":1",`, 40), 0) {
		t.Fatal("malformed field applied")
	}
	if got := authorities(c.candidates(o, "example.com")); !equalStrings(got, []string{"example.com:443"}) {
		t.Fatalf("after malformed fields: %q", got)
	}
}

// An origin on an unprivileged port cannot send clients to a privileged
// one (RFC 7838, Section 9.1; Chromium's rule); the reverse is allowed.
func TestAltSvcCachePrivilegedPorts(t *testing.T) {
	c, _ := newTestCache(0)
	high, low := originKey("example.com", 8443), originKey("example.com", 443)
	c.setAltSvc(high, `h3=":443", h3=":1", h3=":8443"`, 0)
	if got := authorities(c.candidates(high, "example.com")); !equalStrings(got, []string{"example.com:8443"}) {
		t.Fatalf("from port 8443: %q", got)
	}
	c.setAltSvc(low, `h3=":443", h3=":8443"`, 0)
	if got := authorities(c.candidates(low, "example.com")); !equalStrings(got, []string{"example.com:443", "example.com:8443"}) {
		t.Fatalf("from port 443: %q", got)
	}
}

// One origin's field never changes another's entry (RFC 7838, Section
// 9): same host, other port; other host.
func TestAltSvcCacheOriginsIsolated(t *testing.T) {
	c, _ := newTestCache(0)
	a, b, d := originKey("example.com", 443), originKey("example.com", 8443), originKey("other.example", 443)
	c.setAltSvc(a, `h3=":443"`, 0)
	c.setAltSvc(b, `clear`, 0)
	c.setAltSvc(d, `h3="evil.example:443"`, 0)
	if got := authorities(c.candidates(a, "example.com")); !equalStrings(got, []string{"example.com:443"}) {
		t.Fatalf("origin a: %q", got)
	}
	c.markBroken(d, "evil.example:443")
	if got := authorities(c.candidates(a, "example.com")); len(got) != 1 {
		t.Fatalf("origin a after d's mark: %q", got)
	}
}

func TestAltSvcCacheBounds(t *testing.T) {
	c, _ := newTestCache(3)
	for i := 0; i < 5; i++ {
		c.setAltSvc(originKey("o"+strconv.Itoa(i)+".example", 443), `h3=":443"`, 0)
	}
	if c.len() != 3 {
		t.Fatalf("%d origins kept; want 3", c.len())
	}
	// The least recently used went first: o0 and o1.
	for i, want := range []int{0, 0, 1, 1, 1} {
		if got := len(c.candidates(originKey("o"+strconv.Itoa(i)+".example", 443), "x")); got != want {
			t.Errorf("origin %d: %d candidates; want %d", i, got, want)
		}
	}
	// Alternatives per origin.
	var f []string
	for i := 1; i <= 20; i++ {
		f = append(f, `h3=":`+strconv.Itoa(i)+`"`)
	}
	o := originKey("many.example", 443)
	c.setAltSvc(o, strings.Join(f, ","), 0)
	if got := c.candidates(o, "many.example"); len(got) != maxAltsPerOrigin || got[0].authority != "many.example:1" {
		t.Fatalf("%d alternatives, first %v; want %d, the server's first", len(got), got[0], maxAltsPerOrigin)
	}
	// Broken marks per origin.
	for i := 0; i < 3*maxBrokenPerOrigin; i++ {
		c.markBroken(o, "x.example:"+strconv.Itoa(i+1))
	}
	c.mu.Lock()
	n := len(c.origins[o].broken)
	c.mu.Unlock()
	if n != maxBrokenPerOrigin {
		t.Fatalf("%d marks kept; want %d", n, maxBrokenPerOrigin)
	}
}

// A broken alternative is left alone for 5 minutes, then 10, 20, ... at
// most 48 hours; after a mark expires the next attempt is flagged to race
// at once; a success resets the count.
func TestAltSvcCacheBrokenBackoff(t *testing.T) {
	c, clk := newTestCache(0)
	o := originKey("example.com", 443)
	c.setAltSvc(o, `h3=":443"; ma=2592000`, 0)
	auth := "example.com:443"
	want := 5 * time.Minute
	for i := 0; i < 12; i++ {
		if d := c.markBroken(o, auth); d != min(want, maxBrokenDelay) {
			t.Fatalf("failure %d: broken for %v; want %v", i+1, d, min(want, maxBrokenDelay))
		}
		if len(c.candidates(o, "example.com")) != 0 || !c.brokenNow(o) || !c.isBroken(o, auth) {
			t.Fatalf("failure %d: alternative offered while broken", i+1)
		}
		clk.advance(min(want, maxBrokenDelay) - time.Second)
		if len(c.candidates(o, "example.com")) != 0 {
			t.Fatalf("failure %d: offered a second early", i+1)
		}
		clk.advance(time.Second)
		cs := c.candidates(o, "example.com")
		if len(cs) != 1 || !cs[0].failedBefore {
			t.Fatalf("failure %d: after the mark: %+v", i+1, cs)
		}
		want *= 2
	}
	c.confirm(o, auth)
	if cs := c.candidates(o, "example.com"); len(cs) != 1 || cs[0].failedBefore {
		t.Fatalf("after success: %+v", cs)
	}
	if d := c.markBroken(o, auth); d != 5*time.Minute {
		t.Fatalf("after success, broken for %v; want 5m", d)
	}
}

func TestAltSvcCacheNetworkChangeAndForget(t *testing.T) {
	c, _ := newTestCache(0)
	o := originKey("example.com", 443)
	c.setAltSvc(o, `h3="a.example:443", h3="b.example:443"; persist=1`, 0)
	c.markBroken(o, "b.example:443")
	c.networkChanged()
	if got := authorities(c.candidates(o, "example.com")); !equalStrings(got, []string{"b.example:443"}) {
		t.Fatalf("after a network change: %q; want the persistent one, unmarked", got)
	}
	c.forget(o, "example.com", "b.example:443")
	if c.len() != 0 {
		t.Fatal("origin kept with nothing left")
	}
}

func TestAltSvcCacheSaveLoad(t *testing.T) {
	c, clk := newTestCache(0)
	o1, o2 := originKey("example.com", 443), originKey("2001:db8::1", 8443)
	c.setAltSvc(o1, `h3=":443"; ma=3600; persist=1, h3="alt.example.net:443"; ma=60`, 0)
	c.setAltSvc(o2, `h3="[2001:db8::2]:443"`, 0)
	c.markBroken(o2, "[2001:db8::2]:443")
	c.markBroken(o2, "[2001:db8::2]:443")
	var buf bytes.Buffer
	if err := c.save(&buf); err != nil {
		t.Fatal(err)
	}
	d, clk2 := newTestCache(0)
	clk2.t = clk.t.Add(2 * time.Minute) // alt.example.net expired meanwhile
	if err := d.load(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := authorities(d.candidates(o1, "example.com")); !equalStrings(got, []string{"example.com:443"}) {
		t.Fatalf("loaded %q", got)
	}
	if len(d.candidates(o2, "2001:db8::1")) != 0 || !d.isBroken(o2, "[2001:db8::2]:443") {
		t.Fatal("broken mark not loaded")
	}
	if m := d.origins[o2].broken["[2001:db8::2]:443"]; m.count != 2 {
		t.Fatalf("mark count %d; want 2", m.count)
	}
	// Malformed entries are skipped, the rest loaded; bad files fail.
	bad := `{"version":1,"origins":[` +
		`{"origin":"bad origin","alternatives":[{"host":"","port":443,"expires":"2030-01-01T00:00:00Z"}]},` +
		`{"origin":"ok.example:443","alternatives":[{"host":"bad host","port":443,"expires":"2030-01-01T00:00:00Z"},` +
		`{"host":"","port":70000,"expires":"2030-01-01T00:00:00Z"},{"host":"","port":443,"expires":"2030-01-01T00:00:00Z"}],` +
		`"broken":[{"authority":"x:0","until":"2030-01-01T00:00:00Z","count":1},{"authority":"ok.example:443","until":"2030-01-01T00:00:00Z","count":0}]}]}`
	e, _ := newTestCache(0)
	if err := e.load(strings.NewReader(bad)); err != nil {
		t.Fatal(err)
	}
	if got := authorities(e.candidates("ok.example:443", "ok.example")); !equalStrings(got, []string{"ok.example:443"}) || e.len() != 1 {
		t.Fatalf("from a partly bad file: %q, %d origins", got, e.len())
	}
	for _, f := range []string{`{`, `{"version":2,"origins":[]}`, `[]`} {
		if err := e.load(strings.NewReader(f)); err == nil {
			t.Errorf("%q loaded", f)
		}
	}
	// Files: atomic, private, and a missing one is an empty cache.
	path := filepath.Join(t.TempDir(), "altsvc.json")
	if err := d.loadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := c.saveFile(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("saved file: %v, mode %v", err, st.Mode())
	}
	if m, _ := filepath.Glob(path + ".tmp*"); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}
