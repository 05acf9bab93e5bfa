package porting

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/certs"
	oursprogram "github.com/quicstack/quic/internal/interop/porting/ours"
	quicgoprogram "github.com/quicstack/quic/internal/interop/porting/quicgo"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The quic-go program and its port do the same: the same transcript, and
// both servers log the handler's panic.
func TestPortBehavesTheSame(t *testing.T) {
	cert, roots, err := certs.SelfSigned("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var goLogs, ourLogs syncBuffer
	want, err := quicgoprogram.Run(ctx, cert, roots, &goLogs)
	if err != nil {
		t.Fatalf("quic-go program: %v", err)
	}
	got, err := oursprogram.Run(ctx, cert, roots, &ourLogs)
	if err != nil {
		t.Fatalf("port: %v", err)
	}
	t.Logf("transcript:\n%s", strings.Join(want, "\n"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the port's transcript differs:\n%s\nquic-go's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for name, logs := range map[string]string{"quic-go": goLogs.String(), "port": ourLogs.String()} {
		if !strings.Contains(logs, "panic serving") || !strings.Contains(logs, "handler bug") {
			t.Errorf("%s: the server's Logger did not get the panic:\n%s", name, logs)
		}
	}
}

// migratingMark is the comment that marks a changed line of the port with
// the key of its entry in docs/MIGRATING.md.
var migratingMark = regexp.MustCompile(`\s*// MIGRATING: ([a-z0-9-]+)\s*$`)

// The port is the quic-go program with its imports rewritten and only
// changes that docs/MIGRATING.md lists: every line of the port that is not
// in the original carries "// MIGRATING: key", every run of removed lines
// is next to such a line, and every key is an entry of the guide.
func TestPortDiffersOnlyByMigrating(t *testing.T) {
	orig, err := os.ReadFile("quicgo/program.go")
	if err != nil {
		t.Fatal(err)
	}
	port, err := os.ReadFile("ours/program.go")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../../docs/MIGRATING.md")
	if err != nil {
		t.Fatal(err)
	}
	rewritten := strings.ReplaceAll(string(orig), `"github.com/quic-go/quic-go`, `"github.com/quicstack/quic`)
	a := strings.Split(rewritten, "\n")
	b := strings.Split(string(port), "\n")
	keys := make([]string, len(b))
	bare := make([]string, len(b))
	for i, l := range b {
		if m := migratingMark.FindStringSubmatch(l); m != nil {
			keys[i] = m[1]
			l = migratingMark.ReplaceAllString(l, "")
		}
		bare[i] = l
	}
	// Longest common subsequence of the lines.
	n, m := len(a), len(bare)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == bare[j] && keys[j] == "" {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	used := map[string]bool{}
	i, j := 0, 0
	for i < n || j < m {
		if i < n && j < m && a[i] == bare[j] && keys[j] == "" {
			i, j = i+1, j+1
			continue
		}
		// A hunk: removed lines of the original and added lines of the
		// port up to the next common line.
		var removed, added []int
		for i < n || j < m {
			if i < n && j < m && a[i] == bare[j] && keys[j] == "" && lcs[i][j] == lcs[i+1][j+1]+1 {
				break
			}
			if j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]) {
				added = append(added, j)
				j++
			} else {
				removed = append(removed, i)
				i++
			}
		}
		for _, k := range added {
			if keys[k] == "" {
				t.Errorf("port line %d is not in the quic-go program and has no MIGRATING mark: %q", k+1, b[k])
			}
			used[keys[k]] = true
		}
		if len(removed) > 0 && len(added) == 0 {
			t.Errorf("quic-go program lines %d-%d removed with no MIGRATING mark: %q", removed[0]+1, removed[len(removed)-1]+1, a[removed[0]])
		}
		var changes []string
		for _, k := range removed {
			changes = append(changes, "- "+strings.TrimSpace(a[k]))
		}
		for _, k := range added {
			changes = append(changes, "+ "+strings.TrimSpace(b[k]))
		}
		t.Logf("hunk:\n%s", strings.Join(changes, "\n"))
	}
	for k := range used {
		if !regexp.MustCompile("(?m)^#+ .*`" + regexp.QuoteMeta(k) + "`").Match(guide) {
			t.Errorf("MIGRATING mark %q names no heading of docs/MIGRATING.md (a heading with `%s` in it)", k, k)
		}
	}
	if len(used) == 0 {
		t.Error("no change at all: the comparison is not working")
	}
}
