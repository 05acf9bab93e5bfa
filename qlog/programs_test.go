package qlog_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/serve"
	"github.com/quicstack/quic/qlog"
)

// TestProgramsQlogComplete builds programs that use the library the way
// short-lived programs do, with a qlog file per connection, and exit as
// soon as the Close they call returns, without owning a quic.Transport:
// quic.DialAddr then CloseWithError (testdata/qlogexit dial), an
// http3.Transport's request then its Close (testdata/qlogexit h3), and
// example/client -qlog over HTTP/3. Each of their traces must be
// complete: JSON text sequences ending with the connection's
// quic:connection_closed event. So must the server's, once the clients'
// CONNECTION_CLOSE reached it.
func TestProgramsQlogComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	bin := t.TempDir()
	for name, pkg := range map[string]string{
		"qlogexit": "github.com/quicstack/quic/qlog/testdata/qlogexit",
		"client":   "github.com/quicstack/quic/example/client",
	} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	cert, _, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	sdir := t.TempDir()
	srv, err := serve.Start(serve.Options{Addr: "127.0.0.1:0", Cert: cert, Config: &quic.Config{Tracer: qlog.DirTracer(sdir)}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port := strconv.Itoa(srv.Addr.Port)
	base := "https://localhost:" + port
	for _, c := range []struct {
		name  string
		args  []string
		conns int
	}{
		{"DialAddr+CloseWithError", []string{"qlogexit", "dial", "127.0.0.1:" + port}, 1},
		{"http3.Transport.Close", []string{"qlogexit", "h3", base + "/bytes/100000"}, 1},
		{"example/client", []string{"client", "-insecure", base + "/", base + "/bytes/200000"}, 1},
		{"example/client -resume", []string{"client", "-insecure", "-resume", base + "/", base + "/bytes/1000"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-qlog", dir}, c.args[1:]...)
			out, err := exec.Command(filepath.Join(bin, c.args[0]), args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.args[0], err, out)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.sqlog"))
			if len(files) != c.conns {
				t.Fatalf("%d qlog files, want %d: %v", len(files), c.conns, files)
			}
			for _, f := range files {
				checkComplete(t, f)
			}
		})
	}
	// The server's traces end when the clients' CONNECTION_CLOSE arrives;
	// the programs have exited by then, but it may still be on its way.
	deadline := time.Now().Add(30 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(sdir, "*.sqlog"))
		complete := 0
		for _, f := range files {
			if b, _ := os.ReadFile(f); len(b) > 0 {
				complete++ // written out: written whole, at connection_closed
			}
		}
		if len(files) == 5 && complete == 5 {
			for _, f := range files {
				checkComplete(t, f)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d server traces written out", complete, len(files))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkComplete checks that the trace in file f parses and ends with
// quic:connection_closed.
func checkComplete(t *testing.T, f string) {
	t.Helper()
	_, events := readTrace(t, f)
	if len(events) == 0 {
		t.Fatalf("%s: no events", filepath.Base(f))
	}
	if last := events[len(events)-1]; last.Name != "quic:connection_closed" {
		t.Errorf("%s: %d events, the last %s; want quic:connection_closed last", filepath.Base(f), len(events), last.Name)
	}
}
