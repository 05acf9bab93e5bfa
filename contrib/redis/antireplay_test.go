package redis

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
	goredis "github.com/redis/go-redis/v9"
)

// The test runs two QUIC servers in child processes (this test binary,
// re-executed) that share a master secret and a real redis-server, which
// the test starts on a unix socket and stops itself.

const childEnv = "QUICSTACK_REDIS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := runChild(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild serves until its standard input closes: 0-RTT allowed, with
// the Redis anti-replay store; each stream is answered with "0rtt:" or
// "1rtt:" and the request, and the request "stats" with the Transport's
// statistics in JSON. It prints "addr <udp address>" once listening.
func runChild() error {
	secret, _ := hex.DecodeString(os.Getenv("QUIC_SECRET"))
	keys, err := quic.NewKeySchedule(secret, 0)
	if err != nil {
		return err
	}
	cert, err := tls.X509KeyPair([]byte(os.Getenv("QUIC_CERT")), []byte(os.Getenv("QUIC_KEY")))
	if err != nil {
		return err
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// No retries: a refused connection fails at once rather than when
	// AntiReplayTimeout runs out.
	rdb := goredis.NewClient(&goredis.Options{Network: "unix", Addr: os.Getenv("REDIS_SOCKET"), MaxRetries: -1, DialerRetries: 1})
	tr := &quic.Transport{Conn: udp, Keys: keys}
	l, err := tr.ListenEarly(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"t"}},
		&quic.Config{Allow0RTT: true, AntiReplay: NewAntiReplay(rdb, ""), AntiReplayTimeout: 2 * time.Second})
	if err != nil {
		return err
	}
	fmt.Printf("addr %s\n", udp.LocalAddr())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
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
					req, _ := io.ReadAll(s)
					if string(req) == "stats" {
						json.NewEncoder(s).Encode(tr.Stats())
					} else if s.ReceivedEarlyData() {
						s.Write(append([]byte("0rtt:"), req...))
					} else {
						s.Write(append([]byte("1rtt:"), req...))
					}
					s.CloseWrite()
				}
			}()
		}
	}()
	<-ctx.Done()
	tr.Close()
	return nil
}

// child is a running server process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  *net.UDPAddr
}

func startChild(t *testing.T, env []string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, childEnv+"=1")...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "addr ") {
		t.Fatalf("child: %q, %v", line, err)
	}
	if c.addr, err = net.ResolveUDPAddr("udp", strings.TrimSpace(line[5:])); err != nil {
		t.Fatal(err)
	}
	return c
}

// startRedis starts redis-server on a unix socket in a temporary
// directory and returns the socket's path and a function that stops it.
func startRedis(t *testing.T) (socket string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is not installed (make contrib installs Debian's redis-server)")
	}
	dir := t.TempDir()
	socket = filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", socket, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait() }) }
	t.Cleanup(stop)
	rdb := goredis.NewClient(&goredis.Options{Network: "unix", Addr: socket})
	defer rdb.Close()
	for deadline := time.Now().Add(20 * time.Second); rdb.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
	}
	return socket, stop
}

// sessions records the last session ticket a client was given, and
// hands copies of it to other clients, as an attacker holding a captured
// first flight replays its ticket.
type sessions struct {
	tls.ClientSessionCache
	mu  sync.Mutex
	key string
	cs  *tls.ClientSessionState
}

func (s *sessions) Put(key string, cs *tls.ClientSessionState) {
	s.mu.Lock()
	s.key, s.cs = key, cs
	s.mu.Unlock()
	s.ClientSessionCache.Put(key, cs)
}

// copy returns a client configuration whose cache holds the last
// session; the sessions it is given become the last one.
func (s *sessions) copy(c *tls.Config) *tls.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	c = c.Clone()
	cc := &copyCache{ClientSessionCache: tls.NewLRUClientSessionCache(1), parent: s}
	cc.ClientSessionCache.Put(s.key, s.cs)
	c.ClientSessionCache = cc
	return c
}

type copyCache struct {
	tls.ClientSessionCache
	parent *sessions
}

func (c *copyCache) Put(key string, cs *tls.ClientSessionState) {
	c.parent.mu.Lock()
	c.parent.key, c.parent.cs = key, cs
	c.parent.mu.Unlock()
	c.ClientSessionCache.Put(key, cs)
}

// request dials addr early, sends req at once (0-RTT when the session
// allows) and returns the answer, once the session ticket arrived.
func request(t *testing.T, addr net.Addr, ctls *tls.Config, req string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	c, err := tr.DialEarly(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte(req))
	s.CloseWrite()
	b, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.HandshakeComplete():
	case <-ctx.Done():
		t.Fatal("handshake did not complete")
	}
	time.Sleep(200 * time.Millisecond) // the session ticket
	return string(b)
}

func stats(t *testing.T, addr net.Addr, ctls *tls.Config) quic.TransportStats {
	t.Helper()
	var st quic.TransportStats
	resp := request(t, addr, ctls, "stats")
	if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimPrefix(resp, "1rtt:"), "0rtt:")), &st); err != nil {
		t.Fatalf("stats %q: %v", resp, err)
	}
	return st
}

// TestAntiReplayTwoProcesses: a session ticket presented with 0-RTT to
// two server processes sharing Redis is accepted in 0-RTT by one and
// declined by the other, which serves the request in 1-RTT. Then Redis
// is stopped: 0-RTT is declined at once and requests are still served.
func TestAntiReplayTwoProcesses(t *testing.T) {
	socket, stopRedis := startRedis(t)
	certPEM, keyPEM, pool := testCert(t)
	secret := make([]byte, 32)
	rand.Read(secret)
	env := []string{"QUIC_SECRET=" + hex.EncodeToString(secret), "QUIC_CERT=" + certPEM, "QUIC_KEY=" + keyPEM, "REDIS_SOCKET=" + socket}
	a, b := startChild(t, env), startChild(t, env)
	rec := &sessions{ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	ctls := &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"t"}, ClientSessionCache: rec}

	if got := request(t, a.addr, ctls, "hello"); got != "1rtt:hello" {
		t.Fatalf("first request: %q", got)
	}
	c1, c2 := rec.copy(ctls), rec.copy(ctls) // one ticket, twice
	gotA := request(t, a.addr, c1, "POST /transfer")
	gotB := request(t, b.addr, c2, "POST /transfer")
	if gotA != "0rtt:POST /transfer" || gotB != "1rtt:POST /transfer" {
		t.Fatalf("the same ticket at A then B: %q, %q; want 0-RTT once, then 1-RTT", gotA, gotB)
	}
	// And the other way round with a fresh ticket (B's last one).
	fresh1, fresh2 := rec.copy(ctls), rec.copy(ctls)
	if gotB, gotA := request(t, b.addr, fresh1, "again"), request(t, a.addr, fresh2, "again"); gotB != "0rtt:again" || gotA != "1rtt:again" {
		t.Errorf("fresh ticket at B then A: %q, %q", gotB, gotA)
	}

	// Redis goes away in the middle of the run: 0-RTT is declined (fail
	// closed) and the requests are still served, in 1-RTT.
	stopRedis()
	for i, addr := range []net.Addr{a.addr, b.addr} {
		start := time.Now()
		if got := request(t, addr, rec.copy(ctls), "during the outage"); got != "1rtt:during the outage" {
			t.Errorf("server %d during the outage: %q", i, got)
		}
		t.Logf("server %d answered in %v without Redis", i, time.Since(start))
	}
	sa, sb := stats(t, a.addr, ctls), stats(t, b.addr, ctls)
	t.Logf("A: admitted %d replayed %d failures %d; B: admitted %d replayed %d failures %d",
		sa.AntiReplayAdmitted, sa.AntiReplayReplayed, sa.AntiReplayFailures, sb.AntiReplayAdmitted, sb.AntiReplayReplayed, sb.AntiReplayFailures)
	if sa.AntiReplayAdmitted+sb.AntiReplayAdmitted != 2 || sa.AntiReplayReplayed+sb.AntiReplayReplayed != 2 {
		t.Errorf("admitted %d, replayed %d; want 2 and 2", sa.AntiReplayAdmitted+sb.AntiReplayAdmitted, sa.AntiReplayReplayed+sb.AntiReplayReplayed)
	}
	if sa.AntiReplayFailures == 0 || sb.AntiReplayFailures == 0 || sa.HandshakesFailed+sb.HandshakesFailed != 0 {
		t.Errorf("failures A %d, B %d; handshakes failed %d", sa.AntiReplayFailures, sb.AntiReplayFailures, sa.HandshakesFailed+sb.HandshakesFailed)
	}
}

// TestAntiReplayAdmit checks the store itself against Redis: once per
// key, and again after the key expired.
func TestAntiReplayAdmit(t *testing.T) {
	socket, _ := startRedis(t)
	rdb := goredis.NewClient(&goredis.Options{Network: "unix", Addr: socket})
	defer rdb.Close()
	a := NewAntiReplay(rdb, "test:")
	ctx := context.Background()
	if ok, err := a.Admit(ctx, []byte{1, 2}, time.Minute); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := a.Admit(ctx, []byte{1, 2}, time.Minute); ok || err != nil {
		t.Fatal("admitted twice", err)
	}
	if v, err := rdb.Get(ctx, "test:0102").Result(); err != nil || v != "1" {
		t.Fatalf("key in Redis: %q, %v", v, err)
	}
	if ok, _ := a.Admit(ctx, []byte{3}, 50*time.Millisecond); !ok {
		t.Fatal("new key refused")
	}
	time.Sleep(300 * time.Millisecond)
	if ok, err := a.Admit(ctx, []byte{3}, time.Minute); !ok || err != nil {
		t.Fatalf("after expiry: %v, %v", ok, err)
	}
}

func testCert(t *testing.T) (certPEM, keyPEM string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})), pool
}
