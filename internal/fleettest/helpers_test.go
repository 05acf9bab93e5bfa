package fleettest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// requireFleet skips unless make fleet asked for these tests, and checks
// what they need.
func requireFleet(t *testing.T) {
	t.Helper()
	if os.Getenv("FLEET") == "" {
		t.Skip("set FLEET=1 (make fleet) to run the fleet tests")
	}
	if os.Getuid() != 0 {
		t.Fatal("the fleet tests need root")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the fleet tests need %s (make fleet installs nftables)", tool)
		}
	}
}

// buildFleet builds example/fleet into a temporary directory.
func buildFleet(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fleet")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/quicstack/quic/example/fleet").CombinedOutput()
	if err != nil {
		t.Fatalf("building example/fleet: %v\n%s", err, out)
	}
	return bin
}

// fleetFiles writes a certificate for localhost, its key and a master
// secret, and returns their paths and a client TLS config trusting the
// certificate.
type fleetFiles struct {
	cert, key, secret string
	ctls              *tls.Config
}

func writeFleetFiles(t *testing.T) fleetFiles {
	t.Helper()
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	f := fleetFiles{cert: filepath.Join(dir, "cert.pem"), key: filepath.Join(dir, "key.pem"), secret: filepath.Join(dir, "secret")}
	os.WriteFile(f.cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(f.key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
	s := make([]byte, 32)
	rand.Read(s)
	os.WriteFile(f.secret, []byte(hex.EncodeToString(s)+"\n"), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	f.ctls = &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"fleet"}}
	return f
}

// server is a running example/fleet process.
type server struct {
	cmd   *exec.Cmd
	lines chan string // its output, line by line
	mu    sync.Mutex
	log   []string
	pids  []int // of the processes that printed their listening line
}

// startServer runs bin serve args (in network namespace ns unless empty)
// and waits for its "listening" line.
func startServer(t *testing.T, ns, bin string, args ...string) *server {
	t.Helper()
	argv := append([]string{bin, "serve"}, args...)
	if ns != "" {
		argv = append([]string{"ip", "netns", "exec", ns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.mu.Lock()
			s.log = append(s.log, sc.Text())
			if i := strings.Index(sc.Text(), " pid "); i > 0 && strings.Contains(sc.Text(), "fleet: listening") {
				var pid int
				fmt.Sscanf(sc.Text()[i:], " pid %d", &pid)
				s.pids = append(s.pids, pid)
			}
			s.mu.Unlock()
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		// The processes it started (graceful restarts) too: they hold
		// the output pipe, which go test waits for.
		cmd.Process.Kill()
		s.mu.Lock()
		pids := s.pids
		s.mu.Unlock()
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		cmd.Wait()
		for _, pid := range pids {
			for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
	s.waitLine(t, "fleet: listening")
	return s
}

// waitLine waits for an output line containing want and returns it.
func (s *server) waitLine(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("server exited before printing %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("no %q from the server", want)
		}
	}
}

// run runs a command and fails the test if it fails.
func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// runInput runs a command with input on its standard input.
func runInput(t *testing.T, input string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = strings.NewReader(input)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s\n--- input:\n%s", strings.Join(args, " "), err, out, input)
	}
}

// output runs a command and returns its output.
func output(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// listenUDPIn opens a UDP socket at addr inside network namespace ns, on
// a thread moved into it (the thread ends with its goroutine).
func listenUDPIn(t *testing.T, ns, addr string) *net.UDPConn {
	t.Helper()
	c, err := listenUDPNS(ns, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// listenUDPNS opens a UDP socket at addr in network namespace ns (the
// test's own unless ns is empty), which it stays in whichever thread
// uses it.
func listenUDPNS(ns, addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	if ns == "" {
		return net.ListenUDP("udp", ua)
	}
	type result struct {
		c   *net.UDPConn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, err}
			return
		}
		c, err := net.ListenUDP("udp", ua)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// names returns network namespace and interface names unique to this
// process.
func names(prefix string, i int) string { return fmt.Sprintf("%s%d_%d", prefix, os.Getpid()%100000, i) }

var _ = io.EOF

func runtimeCPUs() int { return runtime.NumCPU() }
