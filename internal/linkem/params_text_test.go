package linkem

import (
	"strings"
	"testing"
	"time"
)

// Every setting of the text syntax lands in its field, units and all.
func TestParseParams(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		text string
		want Params
	}{
		{"", Params{}},
		{"delay=20ms jitter=5ms", Params{Delay: 20 * ms, Jitter: 5 * ms}},
		{"jitter=1ms jitterreorder", Params{Jitter: ms, JitterReorder: true}},
		{"jitterreorder=false", Params{}},
		{"loss=1.5%", Params{Loss: 0.015}},
		{"ge=1%/30%", Params{GE: GilbertElliott{P: 0.01, R: 0.3, LossBad: 1}}},
		{"ge=1%/30%/50%/0.1%", Params{GE: GilbertElliott{P: 0.01, R: 0.3, LossBad: 0.5, LossGood: 0.001}}},
		{"burst=2%/4", Params{GE: Gilbert(0.02, 4)}},
		{"rate=100mbit", Params{Rate: 100e6}},
		{"rate=1.5Mbps", Params{Rate: 1.5e6}},
		{"rate=780kbit", Params{Rate: 780e3}},
		{"rate=2gbit", Params{Rate: 2e9}},
		{"rate=64000", Params{Rate: 64000}},
		{"rate=10mbit queue=150kB", Params{Rate: 10e6, Queue: 150000}},
		{"rate=10mbit queue=64KiB", Params{Rate: 10e6, Queue: 65536}},
		{"rate=10mbit queue=2MB", Params{Rate: 10e6, Queue: 2e6}},
		{"rate=10mbit queue=3000", Params{Rate: 10e6, Queue: 3000}},
		{"queue=50ms rate=8mbit", Params{Rate: 8e6, Queue: 50000}},
		{"rate=8mbit queue=50ms queue=0", Params{Rate: 8e6}},
		{"reorder=1% reorderdelay=3ms", Params{Reorder: 0.01, ReorderDelay: 3 * ms}},
		{"dup=0.5%", Params{Duplicate: 0.005}},
		{"DUPLICATE=2%", Params{Duplicate: 0.02}},
		{"delay=1ms delay=2ms", Params{Delay: 2 * ms}},
	} {
		got, err := ParseParams(Params{}, tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q: got %+v; want %+v", tc.text, got, tc.want)
		}
	}
	// Settings apply on top of a base.
	got, err := ParseParams(Params{Delay: time.Second, Rate: 1e6}, "loss=1%")
	if err != nil || got != (Params{Delay: time.Second, Rate: 1e6, Loss: 0.01}) {
		t.Errorf("on a base: %+v, %v", got, err)
	}
}

// Malformed or out-of-range settings are refused with an error, never a
// panic.
func TestParseParamsErrors(t *testing.T) {
	for _, text := range []string{
		"delay", "delay=", "delay=fast", "delay=-1ms", "delay=31s", "jitter=1h",
		"loss=1", "loss=101%", "loss=-1%", "loss=NaN%", "loss=Inf%",
		"ge=1%", "ge=1%/2%/3%/4%/5%", "ge=1%/0%", "ge=x/y",
		"burst=2%", "burst=100%/3", "burst=2%/0.5", "burst=2%/NaN",
		"rate=fast", "rate=-1mbit", "rate=500gbit", "rate=1e300",
		"queue=10kB", // no rate needed for bytes, but ...
		"rate=1mbit queue=-5", "rate=1mbit queue=2GB", "queue=10ms", "rate=1mbit queue=40s",
		"reorder=50", "dup=200%", "color=blue", "jitterreorder=maybe",
		strings.Repeat("delay=1ms ", 500),
	} {
		if text == "queue=10kB" {
			// A byte queue without a rate is accepted and ignored.
			if _, err := ParseParams(Params{}, text); err != nil {
				t.Errorf("%q: %v", text, err)
			}
			continue
		}
		if p, err := ParseParams(Params{}, text); err == nil {
			t.Errorf("%q accepted as %+v", text, p)
		}
	}
}

// String writes what ParseParams reads.
func TestParamsStringRoundTrip(t *testing.T) {
	for _, p := range []Params{
		{},
		{Delay: 20 * time.Millisecond, Jitter: 3 * time.Millisecond, JitterReorder: true, Loss: 0.02,
			GE: GilbertElliott{P: 0.01, R: 0.25, LossBad: 0.75, LossGood: 0.001}, Rate: 1_638_400, Queue: 12345,
			Reorder: 0.01, ReorderDelay: 7 * time.Millisecond, Duplicate: 0.005},
		{Rate: 100e6},
		{GE: Gilbert(0.02, 3)},
	} {
		got, err := ParseParams(Params{}, p.String())
		if err != nil {
			t.Fatalf("%q: %v", p.String(), err)
		}
		if got.String() != p.String() {
			t.Errorf("%q read back as %q", p.String(), got.String())
		}
		if !closeParams(got, p) {
			t.Errorf("%+v read back as %+v", p, got)
		}
	}
}

// closeParams compares two Params, with probabilities equal to 1e-12.
func closeParams(a, b Params) bool {
	near := func(x, y float64) bool { return x-y < 1e-12 && y-x < 1e-12 }
	return a.Delay == b.Delay && a.Jitter == b.Jitter && a.JitterReorder == b.JitterReorder &&
		near(a.Loss, b.Loss) && near(a.GE.P, b.GE.P) && near(a.GE.R, b.GE.R) &&
		near(a.GE.LossBad, b.GE.LossBad) && near(a.GE.LossGood, b.GE.LossGood) &&
		a.Rate == b.Rate && a.Queue == b.Queue && near(a.Reorder, b.Reorder) &&
		a.ReorderDelay == b.ReorderDelay && near(a.Duplicate, b.Duplicate)
}

// FuzzParseParams: any text is either refused or gives valid parameters
// whose String reads back to the same parameters.
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{
		"", "delay=20ms jitter=5ms", "loss=1% burst=2%/3", "ge=1%/30%/50%/0.1%",
		"rate=100mbit queue=50ms", "reorder=1% reorderdelay=3ms dup=0.5% jitterreorder",
		"rate=1.5Mbps queue=64KiB", "delay=1e3ms", "loss=1e-5%",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseParams(Params{}, text)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%q gave invalid %+v: %v", text, p, err)
		}
		q, err := ParseParams(Params{}, p.String())
		if err != nil {
			t.Fatalf("%q: String %q does not read back: %v", text, p.String(), err)
		}
		if q.String() != p.String() || !closeParams(p, q) {
			t.Fatalf("%q: %+v read back as %+v", text, p, q)
		}
	})
}

// The built-in profiles are valid and carry their sources.
func TestProfiles(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Profiles() {
		if seen[p.Name] {
			t.Errorf("profile %q twice", p.Name)
		}
		seen[p.Name] = true
		for _, prm := range []Params{p.AB, p.BA} {
			if err := prm.Validate(); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
		if !strings.Contains(p.Doc, "ource") && !strings.Contains(p.Doc, "chosen") {
			t.Errorf("%s: no source in %q", p.Name, p.Doc)
		}
		q, err := ParseProfile(strings.NewReader(p.String()))
		if err != nil || q.AB.String() != p.AB.String() || q.BA.String() != p.BA.String() || q.Name != p.Name {
			t.Errorf("%s: %q reads back as %+v, %v", p.Name, p.String(), q, err)
		}
	}
	for _, name := range []string{"3g", "4g", "wifi-lossy", "satellite"} {
		if _, ok := LookupProfile(name); !ok {
			t.Errorf("no profile %q", name)
		}
	}
	if g, _ := LookupProfile("wifi-lossy"); g.BA.GE.MeanLoss() < 0.0199 || g.BA.GE.MeanLoss() > 0.0201 || g.BA.GE.R != 1.0/3 {
		t.Errorf("wifi-lossy: GE %+v; want 2%% loss in bursts of 3", g.BA.GE)
	}
}

// A profile file: statements in order, a base, comments, aliases.
func TestParseProfile(t *testing.T) {
	p, err := ParseProfile(strings.NewReader(`
# a 4G uplink that loses 1% of its packets in bursts of 2
name my-4g
base 4g
up burst=1%/2   # the uplink
down jitter=2ms
both loss=0.1%
`))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := LookupProfile("4g")
	wantAB, wantBA := g.AB, g.BA
	wantAB.GE, wantAB.Loss = Gilbert(0.01, 2), 0.001
	wantBA.Jitter, wantBA.Loss = 2*time.Millisecond, 0.001
	if p.Name != "my-4g" || p.AB != wantAB || p.BA != wantBA {
		t.Fatalf("got %+v", p)
	}
	for _, bad := range []string{
		"base nosuch", "up color=red", "sideways delay=1ms", "ab delay", strings.Repeat("# long\n", 10000),
		"ab " + strings.Repeat("x", 70000),
	} {
		if _, err := ParseProfile(strings.NewReader(bad)); err == nil {
			t.Errorf("%.40q accepted", bad)
		}
	}
	if _, err := LoadProfile("no-such-profile-or-file"); err == nil || !strings.Contains(err.Error(), "3g") {
		t.Errorf("LoadProfile of nothing: %v; want an error listing the built-in profiles", err)
	}
	if p, err := LoadProfile("satellite"); err != nil || p.BA.Delay != 300*time.Millisecond {
		t.Errorf("LoadProfile(satellite): %+v, %v", p, err)
	}
}

// FuzzParseProfile: any file is refused or gives valid parameters.
func FuzzParseProfile(f *testing.F) {
	for _, s := range []string{
		"name x\nbase 4g\nup loss=1%\n", "both delay=10ms rate=1mbit\n# c\nba dup=1%", "base satellite\ndown burst=3%/2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseProfile(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, prm := range []Params{p.AB, p.BA} {
			if err := prm.Validate(); err != nil {
				t.Fatalf("%q gave invalid %+v: %v", text, prm, err)
			}
		}
	})
}
