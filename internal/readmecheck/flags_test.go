package readmecheck

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quicstack/quic/internal/cli"
)

// quicPrograms are the programs that make QUIC connections: each accepts
// the common flags -cc, -qlog and -keylog with the same help text.
var quicPrograms = []string{"client", "server", "perf", "bench", "demo", "proxy"}

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
			"-cc string\n    \t" + cli.CCUsage + " (default \"cubic\")",
			"-qlog dir\n    \t" + unquote(cli.QlogUsage),
			"-keylog file\n    \t" + unquote(cli.KeylogUsage),
		} {
			if !strings.Contains(h, want) {
				t.Errorf("%s -h lacks %q:\n%s", prog, want, h)
			}
		}
	}
	if h := help("ccsim"); !strings.Contains(h, "-cc string") {
		t.Errorf("ccsim -h lacks -cc:\n%s", h)
	}
}
