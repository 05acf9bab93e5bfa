package readmecheck

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quicstack/quic/internal/cli"
)

// quicPrograms are the programs that make QUIC connections: each accepts
// the common flags -cc, -qlog and -keylog with the same help text.
var quicPrograms = []string{"client", "server", "perf", "bench", "demo", "proxy", "masque", "webtransport", "priority"}

// Every program that makes QUIC connections accepts -cc, -qlog and
// -keylog the same way (cli.AddCommon); ccsim, which simulates, takes
// -cc for its controllers.
func TestCommonFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds every program")
	}
	root := repoRoot(t)
	bin := t.TempDir()
	help := func(prog string) string {
		p := filepath.Join(bin, prog)
		build := exec.Command("go", "build", "-o", p, "./example/"+prog)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", prog, err, out)
		}
		out, err := exec.Command(p, "-h").CombinedOutput()
		if err != nil {
			t.Fatalf("%s -h: %v\n%s", prog, err, out)
		}
		return string(out)
	}
	unquote := func(s string) string { return strings.ReplaceAll(s, "`", "") }
	for _, prog := range quicPrograms {
		h := help(prog)
		for _, want := range []string{
			"-cc string\n    \t" + cli.CCUsage + " (default \"bbr\")",
			"-qlog dir\n    \t" + unquote(cli.QlogUsage),
			"-keylog file\n    \t" + unquote(cli.KeylogUsage),
		} {
			if !strings.Contains(h, want) {
				t.Errorf("%s -h lacks %q:\n%s", prog, want, h)
			}
		}
	}
	// fleet's server subcommand.
	p := filepath.Join(bin, "fleet")
	build := exec.Command("go", "build", "-o", p, "./example/fleet")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build fleet: %v\n%s", err, out)
	}
	out, _ := exec.Command(p, "serve", "-h").CombinedOutput()
	for _, want := range []string{"-cc string\n    \t" + cli.CCUsage, "-qlog dir\n", "-keylog file\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("fleet serve -h lacks %q:\n%s", want, out)
		}
	}
	if h := help("ccsim"); !strings.Contains(h, "-cc string") {
		t.Errorf("ccsim -h lacks -cc:\n%s", h)
	}
}

// notCommon are the programs importing quic or http3 that are not held
// to the common flags, with the reason.
var notCommon = map[string]string{
	"ccsim": "a simulator: it takes -cc for the controllers it simulates (TestCommonFlags), makes no real connections and writes no qlog or key log",
	"fleet": "a program of subcommands (nft, serve ...) whose -h lists the subcommands: its serve subcommand takes the common flags (checked in TestCommonFlags)",
}

// quicPrograms lists every program under example/ that imports the
// library's quic or http3 package, so that a program added later is held
// to the common flags too (go/parser reads the imports; no build needed).
func TestCommonFlagsCoverEveryProgram(t *testing.T) {
	root := repoRoot(t)
	dirs, err := os.ReadDir(filepath.Join(root, "example"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, "example", d.Name(), "*.go"))
		usesQUIC := false
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				switch p, _ := strconv.Unquote(imp.Path.Value); p {
				case "github.com/quicstack/quic", "github.com/quicstack/quic/http3":
					usesQUIC = true
				}
			}
		}
		if !usesQUIC {
			continue
		}
		if why, ok := notCommon[d.Name()]; ok {
			t.Logf("example/%s: not held to the common flags: %s", d.Name(), why)
			continue
		}
		found++
		if !slices.Contains(quicPrograms, d.Name()) {
			t.Errorf("example/%s makes QUIC connections but is not in quicPrograms: add it (with cli.AddCommon's flags)", d.Name())
		}
	}
	if found != len(quicPrograms) {
		t.Errorf("%d programs under example/ import quic or http3; quicPrograms lists %d: %v", found, len(quicPrograms), quicPrograms)
	}
}
