package prometheus

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/quicstack/quic"
)

// TestCollectorPromtool runs two handshakes (the second resumed, with
// 0-RTT) on loopback, scrapes the collector over HTTP and checks the
// exposition with promtool check metrics, then the values.
func TestCollectorPromtool(t *testing.T) {
	promtool := findPromtool(t)
	stls, ctls := tlsConfigs(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(tr.Stats, Opts{ConstLabels: prometheus.Labels{"socket": "test"}}))
	l, err := tr.ListenEarly(stls, &quic.Config{Allow0RTT: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				s, err := c.AcceptStream(ctx)
				if err == nil {
					io.Copy(s, s)
					s.CloseWrite()
				}
			}()
		}
	}()
	cudp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ct := &quic.Transport{Conn: cudp}
	defer func() { ct.Close(); cudp.Close() }()
	for i, dial := range []func(context.Context, net.Addr, *tls.Config, *quic.Config) (*quic.Conn, error){ct.Dial, ct.DialEarly} {
		c, err := dial(ctx, l.Addr(), ctls, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := c.OpenStreamSync(ctx)
		s.Write([]byte("hi"))
		s.CloseWrite()
		if b, err := io.ReadAll(s); err != nil || string(b) != "hi" {
			t.Fatalf("echo %d: %q, %v", i, b, err)
		}
		<-c.HandshakeComplete()
		time.Sleep(100 * time.Millisecond) // the session ticket
	}
	for deadline := time.Now().Add(10 * time.Second); tr.Stats().HandshakesCompleted < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("handshakes not counted")
		}
	}

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\n--- exposition:\n%s", err, out, body)
	}
	text := string(body)
	for _, want := range []string{
		`quic_handshakes_completed_total{socket="test"} 2`,
		`quic_handshake_duration_seconds_count{socket="test"} 2`,
		`quic_handshake_duration_seconds_bucket{socket="test",le="+Inf"} 2`,
		`quic_handshakes_by_version_total{socket="test",version="v2"} 2`,
		`quic_handshakes_by_cipher_suite_total{cipher_suite="TLS_AES_128_GCM_SHA256",socket="test"} 2`,
		`quic_resumptions_accepted_total{socket="test"} 1`,
		`quic_zero_rtt_accepted_total{socket="test"} 1`,
		`quic_connections_open{socket="test"} 2`,
		`quic_handshakes_by_key_exchange_total{group="`,
		`quic_anti_replay_checks_total{outcome="failed",socket="test"} 0`,
		`quic_receive_buffer_drops_total{socket="test"} 0`,
		`quic_tokens_replayed_total{socket="test"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %s:\n%s", want, text)
		}
	}
}

// findPromtool returns the path of promtool: $PROMTOOL, on PATH, or
// extracted from Debian's prometheus package into a cache directory
// (make contrib does this too), without installing the package and its
// service.
func findPromtool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "quicstack-promtool")
	p := filepath.Join(dir, "usr", "bin", "promtool")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	os.MkdirAll(dir, 0o755)
	dl := exec.Command("apt-get", "download", "prometheus")
	dl.Dir = dir
	if out, err := dl.CombinedOutput(); err != nil {
		t.Fatalf("promtool is not installed and apt-get download prometheus failed (set PROMTOOL, or run make contrib): %v\n%s", err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dir, "prometheus_*.deb"))
	if len(debs) == 0 {
		t.Fatal("apt-get download prometheus left no package")
	}
	if out, err := exec.Command("dpkg-deb", "-x", debs[0], dir).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
	}
	return p
}

func tlsConfigs(t *testing.T) (server, client *tls.Config) {
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
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"t"}}
	client = &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"t"},
		ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	return server, client
}
