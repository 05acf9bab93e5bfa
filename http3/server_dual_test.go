package http3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A DualServer on port 0 serves both protocols on one port number it
// reports, with Alt-Svc naming it and the configured lifetime.
func TestDualServerPortZero(t *testing.T) {
	cert, pool := testCert(t)
	var log protoLog
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		io.WriteString(w, r.Proto)
	})
	s := &DualServer{
		H3:   &Server{Handler: h, AltSvcMaxAge: time.Hour},
		HTTP: &http.Server{Addr: "127.0.0.1:0", TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}},
	}
	if s.UDPAddr() != nil || s.TCPAddr() != nil {
		t.Fatal("addresses before Listen")
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	udp, tcp := s.UDPAddr().(*net.UDPAddr), s.TCPAddr().(*net.TCPAddr)
	if udp.Port == 0 || udp.Port != tcp.Port {
		t.Fatalf("UDP %v, TCP %v", udp, tcp)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	url := "https://127.0.0.1:" + strconv.Itoa(tcp.Port) + "/"
	tcpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := tcpClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := `h3=":` + strconv.Itoa(udp.Port) + `"; ma=3600`; resp.Header.Get("Alt-Svc") != want || resp.Proto != "HTTP/2.0" {
		t.Fatalf("%s with Alt-Svc %q; want HTTP/2.0 with %q", resp.Proto, resp.Header.Get("Alt-Svc"), want)
	}
	h3 := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer h3.Close()
	resp, err = (&http.Client{Transport: h3}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := log.list(); !equalStrings(got, []string{"HTTP/2.0", "HTTP/3.0"}) {
		t.Fatalf("served %q", got)
	}
	s.Close()
	if err := <-served; !errors.Is(err, ErrServerClosed) || !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
}

// Shutdown lets the requests in flight on both protocols finish, refuses
// new ones, and Serve then returns.
func TestDualServerShutdown(t *testing.T) {
	cert, pool := testCert(t)
	release := make(chan struct{})
	started := make(chan string, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- r.Proto
		<-release
		io.WriteString(w, "done "+r.Proto)
	})
	s := &DualServer{
		H3: &Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}},
		// The probes of the closed listener below look like failed
		// handshakes, which net/http logs.
		HTTP: &http.Server{Addr: "127.0.0.1:0", ErrorLog: log.New(io.Discard, "", 0)},
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve() }()
	url := "https://127.0.0.1:" + strconv.Itoa(s.TCPAddr().(*net.TCPAddr).Port) + "/"
	tcpTr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	h3Tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer h3Tr.Close()
	type result struct {
		body string
		err  error
	}
	results := make(chan result, 2)
	for _, rt := range []http.RoundTripper{tcpTr, h3Tr} {
		go func() {
			resp, err := (&http.Client{Transport: rt}).Get(url)
			if err != nil {
				results <- result{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- result{string(b), err}
		}()
	}
	<-started
	<-started
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	// The listeners close at once: a new connection is refused.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.TCPAddr().String(), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("TCP listener still open after Shutdown")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned with requests in flight: %v", err)
	default:
	}
	close(release)
	got := map[string]bool{}
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatalf("request in flight: %v", r.err)
		}
		got[r.body] = true
	}
	if !got["done HTTP/2.0"] || !got["done HTTP/3.0"] {
		t.Fatalf("answers %v", got)
	}
	tcpTr.CloseIdleConnections()
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Serve: %v", err)
	}
	// Both sockets are closed: their address can be taken again.
	pc, err := net.ListenPacket("udp", s.UDPAddr().String())
	if err != nil {
		t.Fatalf("UDP socket still open after Shutdown: %v", err)
	}
	pc.Close()
	l, err := net.Listen("tcp", s.TCPAddr().String())
	if err != nil {
		t.Fatalf("TCP listener still open after Shutdown: %v", err)
	}
	l.Close()
}

// ListenAndServeTLS loads the certificate for both; a server failing to
// listen reports it.
func TestDualServerListenAndServeTLS(t *testing.T) {
	cert, pool := testCert(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, keyFile, cert)
	s := &DualServer{HTTP: &http.Server{Addr: "127.0.0.1:0", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	})}}
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServeTLS(certFile, keyFile) }()
	for s.TCPAddr() == nil {
		time.Sleep(time.Millisecond)
	}
	a := newAuto(t, pool)
	url := "https://127.0.0.1:" + strconv.Itoa(s.TCPAddr().(*net.TCPAddr).Port) + "/"
	autoGet(t, a, url)
	if proto, body := autoGet(t, a, url); proto != "HTTP/3.0" || body != proto {
		t.Fatalf("%s (%s)", proto, body)
	}
	// The port is taken now: a second server cannot listen.
	busy := &DualServer{HTTP: &http.Server{Addr: s.TCPAddr().String()}}
	if err := busy.ListenAndServeTLS(certFile, keyFile); err == nil {
		t.Fatal("second server on a busy port")
	}
	s.Close()
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("ListenAndServeTLS: %v", err)
	}
}

func writePEM(t *testing.T, certFile, keyFile string, cert tls.Certificate) {
	t.Helper()
	certPEM, keyPEM, err := encodePEMForTest(cert)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
}

func encodePEMForTest(cert tls.Certificate) (certPEM, keyPEM []byte, err error) {
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
