package quicexpvar_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"expvar"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/quicexpvar"
)

// An operator reads a Transport's counters over HTTP, as JSON, after a
// real handshake on loopback.
func TestPublishOverHTTP(t *testing.T) {
	stls, ctls := tlsConfigs(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	// expvar names are process-wide: a fresh one for each run (-count).
	name := fmt.Sprintf("quic_test_%d", time.Now().UnixNano())
	quicexpvar.Publish(name, tr)
	l, err := tr.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	accepted := make(chan *quic.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			accepted <- c
		}
	}()
	c, err := quic.DialAddr(ctx, l.Addr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	select {
	case <-accepted:
	case <-ctx.Done():
		t.Fatal("no connection accepted")
	}

	srv := httptest.NewServer(expvar.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var vars map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		t.Fatal(err)
	}
	var st quicexpvar.Stats
	if err := json.Unmarshal(vars[name], &st); err != nil {
		t.Fatalf("%s = %s: %v", name, vars[name], err)
	}
	if st.HandshakesStarted != 1 || st.HandshakesCompleted != 1 || st.ConnectionsOpen != 1 {
		t.Errorf("served stats %+v, want 1 handshake started and completed, 1 connection open", st)
	}
	// The fleet statistics, with names for people.
	if st.HandshakeDuration.Count != 1 || len(st.HandshakeDuration.Cumulative) != len(quic.HandshakeDurationBuckets) {
		t.Errorf("handshake durations %+v", st.HandshakeDuration)
	}
	if st.Versions["v2"] != 1 || st.CipherSuites["TLS_AES_128_GCM_SHA256"] != 1 || len(st.KeyExchanges) != 1 {
		t.Errorf("versions %v, cipher suites %v, key exchanges %v", st.Versions, st.CipherSuites, st.KeyExchanges)
	}
	for g := range st.KeyExchanges {
		if g == "" || g[0] >= '0' && g[0] <= '9' {
			t.Errorf("key exchange group not named: %q", g)
		}
	}
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
	client = &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"t"}}
	return server, client
}
