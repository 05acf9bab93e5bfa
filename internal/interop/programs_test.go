package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	qgh3 "github.com/quic-go/quic-go/http3"
)

// The example programs (example/client, example/server, example/bench)
// against quic-go: our client binary fetches from quic-go's HTTP/3 server
// (with resumption, and with 0-RTT) and, with HTTP/0.9 and 0-RTT, from a
// quic-go listener; our load generator loads quic-go's HTTP/3 server;
// quic-go's HTTP/3 client fetches from our server binary.

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// programs builds example/client, example/server and example/bench, and
// quic-go's example server and client, once.
func programs(t *testing.T) (client, server string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "quicstack-programs-")
		if buildErr != nil {
			return
		}
		for name, pkg := range map[string]string{
			"client": "github.com/quicstack/quic/example/client", "server": "github.com/quicstack/quic/example/server",
			"bench":         "github.com/quicstack/quic/example/bench",
			"quicgo-server": "github.com/quic-go/quic-go/example", "quicgo-client": "github.com/quic-go/quic-go/example/client",
		} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), pkg).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "client"), filepath.Join(binDir, "server")
}

// startOurServer runs the example server binary and returns its address.
func startOurServer(t *testing.T, server string) string {
	cmd := exec.Command(server, "-listen", "127.0.0.1:0")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`listening on (\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	select {
	case addr := <-addrc:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	return ""
}

// freeUDPPort returns a UDP port that was free a moment ago.
func freeUDPPort(t *testing.T) string {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return strconv.Itoa(c.LocalAddr().(*net.UDPAddr).Port)
}

// quic-go's example server (github.com/quic-go/quic-go/example, which
// serves N bytes at /N) and our example client.
func TestProgramOurClientQuicGoExampleServer(t *testing.T) {
	client, _ := programs(t)
	port := freeUDPPort(t)
	srv := exec.Command(filepath.Join(binDir, "quicgo-server"), "-bind", "127.0.0.1:"+port)
	srv.Dir = t.TempDir() // it may write qlog files in its directory
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	base := "https://localhost:" + port
	// The server prints that it listens before it does: try until it
	// answers.
	var out []byte
	var err error
	for range 50 {
		out, err = exec.Command(client, "-insecure", "-timeout", "10s", base+"/1000000", base+"/demo/tile").CombinedOutput()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^200 HTTP/3\.0 +1000000 bytes .*/1000000$`).Match(out) || !regexp.MustCompile(`(?m)^200 HTTP/3\.0 +\d+ bytes .*/demo/tile$`).Match(out) {
		t.Errorf("client output:\n%s", out)
	}
}

// quic-go's example client (github.com/quic-go/quic-go/example/client)
// against our example server.
func TestProgramQuicGoExampleClientOurServer(t *testing.T) {
	_, server := programs(t)
	addr := startOurServer(t, server)
	port := addr[strings.LastIndex(addr, ":")+1:]
	out, err := exec.Command(filepath.Join(binDir, "quicgo-client"), "-insecure", "-q",
		"https://localhost:"+port+"/bytes/100000", "https://localhost:"+port+"/").CombinedOutput()
	if err != nil {
		t.Fatalf("quic-go client: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("Response Body: 100000 bytes")) {
		t.Errorf("quic-go client output:\n%s", out)
	}
}

// removePrograms deletes the binaries programs built.
func removePrograms() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// bytesHandler serves "/" (naming the protocol) and "/bytes/N".
func bytesHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "served over %s", r.Proto) })
	mux.HandleFunc("GET /bytes/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.Write(bytes.Repeat([]byte{'x'}, n))
	})
	return mux
}

func TestProgramOurClientQuicGoH3Server(t *testing.T) {
	client, _ := programs(t)
	_, stls := h3TLS(t)
	addr := startQuicGoH3(t, stls, bytesHandler())
	port := addr[strings.LastIndex(addr, ":")+1:]
	base := "https://localhost:" + port
	out, err := exec.Command(client, "-insecure", "-resume", base+"/", base+"/bytes/1000000", base+"/bytes/10").CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	for _, re := range []string{
		`(?m)^200 HTTP/3\.0 +1000000 bytes .*/bytes/1000000$`,
		`(?m)^connection 1: QUIC v1, .*ALPN h3, .*resumed: no`,
		`(?m)^connection 2: QUIC v1, .*ALPN h3, .*resumed: yes`,
	} {
		if !regexp.MustCompile(re).Match(out) {
			t.Errorf("client output does not match %s:\n%s", re, out)
		}
	}
}

// Our client sends its second connection's GET requests in 0-RTT to
// quic-go's HTTP/3 server, which accepts them.
func TestProgramOurClient0RTTQuicGoH3Server(t *testing.T) {
	client, _ := programs(t)
	_, stls := h3TLS(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &qgh3.Server{Handler: bytesHandler(), TLSConfig: stls, QUICConfig: &quicgo.Config{Allow0RTT: true}}
	go srv.Serve(udp)
	t.Cleanup(func() { srv.Close(); udp.Close() })
	base := fmt.Sprintf("https://localhost:%d", udp.LocalAddr().(*net.UDPAddr).Port)
	out, err := exec.Command(client, "-insecure", "-0rtt", base+"/", base+"/bytes/100000", base+"/bytes/10").CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	for _, re := range []string{
		`(?m)^200 HTTP/3\.0 +100000 bytes .*/bytes/100000$`,
		`(?m)^connection 2: QUIC v1, .*ALPN h3, .*resumed: yes, 0-RTT: yes$`,
	} {
		if !regexp.MustCompile(re).Match(out) {
			t.Errorf("client output does not match %s:\n%s", re, out)
		}
	}
}

// Our load generator against quic-go's HTTP/3 server: reused connections,
// then a new connection per request.
func TestProgramOurBenchQuicGoH3Server(t *testing.T) {
	programs(t)
	bench := filepath.Join(binDir, "bench")
	_, stls := h3TLS(t)
	addr := startQuicGoH3(t, stls, bytesHandler())
	u := "https://" + addr + "/bytes/1000"
	for _, args := range [][]string{{"-c", "4", "-n", "25"}, {"-c", "2", "-n", "5", "-new"}} {
		out, err := exec.Command(bench, append([]string{"-insecure", "-u", u}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("bench %v: %v\n%s", args, err, out)
		}
		want := `(?m)^bench: .*, 100 requests in .*, 0 errors$`
		hs := `(?m)^handshakes: 4, latency p50`
		if args[len(args)-1] == "-new" {
			want, hs = `(?m)^bench: .*, 10 requests in .*, 0 errors$`, `(?m)^handshakes: 10, latency p50`
		}
		for _, re := range []string{want, hs, `(?m)^requests: latency p50 .*; throughput`} {
			if !regexp.MustCompile(re).Match(out) {
				t.Errorf("bench %v output does not match %s:\n%s", args, re, out)
			}
		}
	}
}

// serveQuicGoHQ answers HTTP/0.9 over QUIC (hq-interop) on a quic-go
// listener that accepts 0-RTT.
func serveQuicGoHQ(t *testing.T, stls *tls.Config) string {
	stls = stls.Clone()
	stls.NextProtos = []string{"hq-interop"}
	l, err := quicgo.ListenAddrEarly("127.0.0.1:0", stls, &quicgo.Config{Allow0RTT: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); l.Close() })
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					go func() {
						req, _ := io.ReadAll(io.LimitReader(s, 4096))
						path := strings.TrimSpace(strings.TrimPrefix(string(req), "GET "))
						n, _ := strconv.Atoi(strings.TrimPrefix(path, "/bytes/"))
						s.Write(bytes.Repeat([]byte{'y'}, n))
						s.Close()
					}()
				}
			}()
		}
	}()
	return l.Addr().String()
}

func TestProgramOurClient0RTTQuicGoServer(t *testing.T) {
	client, _ := programs(t)
	_, stls := testTLS(t)
	addr := serveQuicGoHQ(t, stls)
	base := "https://localhost:" + addr[strings.LastIndex(addr, ":")+1:]
	dir := t.TempDir()
	out, err := exec.Command(client, "-insecure", "-alpn", "hq-interop", "-0rtt", "-out", dir,
		base+"/bytes/5", base+"/bytes/20000", base+"/bytes/300").CombinedOutput()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^connection 2: .*ALPN hq-interop, .*resumed: yes, 0-RTT: yes$`).Match(out) {
		t.Errorf("the second connection did not use 0-RTT:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "20000")); len(b) != 20000 {
		t.Errorf("saved %d bytes of /bytes/20000", len(b))
	}
}

func TestProgramQuicGoClientOurServer(t *testing.T) {
	_, server := programs(t)
	addr := startOurServer(t, server)
	tr := &qgh3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := c.Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte("arrived over HTTP/3.0")) {
		t.Errorf("GET /: %q", body)
	}
	resp, err = c.Post("https://"+addr+"/echo", "text/plain", strings.NewReader("quic-go says hi"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "quic-go says hi" {
		t.Errorf("POST /echo: %q", body)
	}
	resp, err = c.Get("https://" + addr + "/bytes/2000000")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != 2000000 {
		t.Errorf("GET /bytes/2000000: %d bytes, %v", n, err)
	}
}
