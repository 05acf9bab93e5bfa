package readmecheck

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the repository's top directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", root)
	}
	return root
}

// Commands returns the commands of markdown's ```sh blocks, in order.
func Commands(markdown string) []string {
	var cmds []string
	in := false
	var cont strings.Builder
	for _, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if !in {
				info := strings.Fields(strings.TrimPrefix(trimmed, "```"))
				in = len(info) > 0 && info[0] == "sh"
			} else {
				in = false
			}
			continue
		}
		if !in {
			continue
		}
		if i := strings.Index(trimmed, "#"); i >= 0 && (i == 0 || trimmed[i-1] == ' ' || trimmed[i-1] == '\t') {
			trimmed = strings.TrimSpace(trimmed[:i])
		}
		if strings.HasSuffix(trimmed, "\\") {
			cont.WriteString(strings.TrimSpace(strings.TrimSuffix(trimmed, "\\")) + " ")
			continue
		}
		if cont.Len() > 0 {
			trimmed = cont.String() + trimmed
			cont.Reset()
		}
		if trimmed != "" {
			cmds = append(cmds, trimmed)
		}
	}
	return cmds
}

func TestCommandsParsing(t *testing.T) {
	md := "text\n```sh\nmake test   # comment\n\n# only a comment\ngo run ./example/server \\\n  -tcp\n```\n```go\nnot a command\n```\n```sh\nmake demo\n```\n"
	got := Commands(md)
	want := []string{"make test", "go run ./example/server -tcp", "make demo"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Commands = %q, want %q", got, want)
	}
}

// makeRun are the make targets the check runs for real; others are only
// checked with make -n.
var makeRun = map[string]bool{"demo": true}

// netns is where the commands run: a network namespace of their own
// (name), or the host (name "").
type netns struct{ name string }

func newNetns(t *testing.T) netns {
	if os.Geteuid() != 0 {
		t.Log("not root: the commands run on the host's loopback")
		return netns{}
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Log("no ip(8): the commands run on the host's loopback")
		return netns{}
	}
	name := fmt.Sprintf("readme-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Logf("ip netns add: %v: %s; the commands run on the host's loopback", err, out)
		return netns{}
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	return netns{name}
}

// command returns a Cmd running argv in the namespace.
func (n netns) command(dir string, argv ...string) *exec.Cmd {
	if n.name != "" {
		argv = append([]string{"ip", "netns", "exec", n.name}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	return cmd
}

// daemons are the programs that serve until interrupted, with the flag
// that makes them do so ("" for always).
var daemons = map[string]string{
	"./example/server": "",
	"./example/perf":   "-listen",
	"./example/proxy":  "",
	"./example/netem":  "",
	"./example/linkem": "",
}

// isDaemon reports whether the command line runs program pkg as a
// server.
func isDaemon(pkg string, args []string) bool {
	flag, ok := daemons[pkg]
	if !ok {
		return false
	}
	if flag == "" {
		return true
	}
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// knownBroken are README commands that fail for a reason the README's
// owner must fix, with the reason: they are reported, not failed; each
// must still be in the README and still fail (the test fails once it
// passes, so that the entry is removed).
var knownBroken = map[string]string{}

// server is a command left running in the background.
type server struct {
	line string
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// goRunRE matches "go run ./example/NAME".
var goRunRE = regexp.MustCompile(`^go run (\./example/[a-z0-9]+)(\s|$)`)

// TestREADMECommands runs every command README.md and the docs/*.md
// pages show (see the package comment for how), a subtest per file.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's commands take a minute or two")
	}
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	shown := map[string][]string{}
	var all []string
	for _, f := range files {
		md, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		if shown[rel] = Commands(string(md)); len(shown[rel]) > 0 {
			all = append(all, shown[rel]...)
		} else if rel == "README.md" {
			t.Fatal("README.md shows no ```sh commands")
		}
	}
	for line := range knownBroken {
		if !slices.Contains(all, line) {
			t.Errorf("knownBroken lists %q, which neither README.md nor docs/ shows: remove the entry", line)
		}
	}
	bin := t.TempDir()
	built := map[string]string{}
	build := func(t *testing.T, pkg string) string {
		if p, ok := built[pkg]; ok {
			return p
		}
		p := filepath.Join(bin, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", p, pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		built[pkg] = p
		return p
	}
	ns := newNetns(t)
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		if len(shown[rel]) == 0 {
			continue
		}
		t.Run(rel, func(t *testing.T) { runCommands(t, root, shown[rel], ns, build) })
	}
}

// runCommands runs the commands of one file in order; the servers among
// them run until the file's last command ended.
func runCommands(t *testing.T, root string, cmds []string, ns netns, build func(*testing.T, string) string) {
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.cmd.Process.Signal(syscall.SIGINT)
		}
		for _, s := range servers {
			select {
			case err := <-s.done:
				if err != nil {
					t.Errorf("server %q, interrupted, exited with %v:\n%s", s.line, err, s.out)
				}
			case <-time.After(30 * time.Second):
				s.cmd.Process.Kill()
				t.Errorf("server %q did not exit within 30 s of SIGINT:\n%s", s.line, s.out)
			}
		}
	}()
	for _, line := range cmds {
		argv := strings.Fields(line)
		var cmd *exec.Cmd
		daemon := false
		switch {
		case goRunRE.MatchString(line):
			m := goRunRE.FindStringSubmatch(line)
			cmd = ns.command(root, append([]string{build(t, m[1])}, argv[3:]...)...)
			daemon = isDaemon(m[1], argv[3:])
		case argv[0] == "make" && len(argv) == 2:
			if out, err := exec.Command("make", "-C", root, "-n", argv[1]).CombinedOutput(); err != nil {
				t.Errorf("%q: make -n: %v\n%s", line, err, out)
				continue
			}
			if !makeRun[argv[1]] {
				t.Logf("%q: the target exists (make -n); not run", line)
				continue
			}
			cmd = ns.command(root, "make", argv[1])
		default:
			t.Errorf("%q: the README check does not know how to run this command (internal/readmecheck)", line)
			continue
		}
		out := &lockedBuffer{}
		pr, pw := io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		listening := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(pr)
			once := sync.Once{}
			for sc.Scan() {
				out.Write(append(sc.Bytes(), '\n'))
				if strings.Contains(sc.Text(), "listening on") {
					once.Do(func() { close(listening) })
				}
			}
			io.Copy(io.Discard, pr)
		}()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		done := make(chan error, 1)
		go func() { err := cmd.Wait(); pw.Close(); done <- err }()
		fail := func(format string, args ...any) {
			msg := fmt.Sprintf("%q: ", line) + fmt.Sprintf(format, args...)
			if why, ok := knownBroken[line]; ok {
				t.Logf("%s\n(known: %s)", msg, why)
				return
			}
			t.Error(msg)
		}
		if daemon {
			select {
			case <-listening:
				t.Logf("%q: listening after %s; runs in the background", line, time.Since(start).Round(time.Millisecond))
				servers = append(servers, &server{line: line, cmd: cmd, out: out, done: done})
			case err := <-done:
				fail("a server that exited (%v) before it said \"listening on\":\n%s", err, out)
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				fail("a server not listening after a minute:\n%s", out)
			}
			continue
		}
		select {
		case err := <-done:
			if err != nil {
				fail("%v after %s:\n%s", err, time.Since(start).Round(time.Millisecond), out)
			} else if why, ok := knownBroken[line]; ok {
				t.Errorf("%q: exit status 0, but knownBroken lists it (%s): remove the entry", line, why)
			} else {
				t.Logf("%q: exit status 0 after %s", line, time.Since(start).Round(time.Millisecond))
			}
		case <-time.After(5 * time.Minute):
			cmd.Process.Kill()
			fail("still running after 5 minutes:\n%s", out)
		}
	}
}
