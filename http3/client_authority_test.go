package http3

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// A URL with an IPv6 zone (RFC 6874: https://[fe80::1%25eth0]:443/)
// reaches the server: the zone says which interface to dial, and means
// nothing to the server, so the :authority goes without it, as net/http
// removes it from the Host header (it sent "[::1%lo]:port", which the
// server must refuse as an invalid authority, RFC 9110, Section 7.2).
func TestClientRequestToZonedAddress(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	lo := ""
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			lo = i.Name
		}
	}
	if lo == "" {
		t.Skip("no loopback interface")
	}
	cert, pool := testCert(t)
	got := make(chan string, 1)
	srv := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Host
		io.WriteString(w, "ok")
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	l, err := quic.ListenAddr("[::1]:0", srv.tlsConfig(), srv.quicConfig())
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	go srv.ServeListener(l)
	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	t.Cleanup(func() {
		tr.Close()
		srv.Close()
		l.Close()
	})
	port := l.Addr().(*net.UDPAddr).Port
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	resp, err := client.Get("https://[::1%25" + lo + "]:" + itoa(port) + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Fatalf("status %d, body %q", resp.StatusCode, body)
	}
	if h, want := <-got, "[::1]:"+itoa(port); h != want {
		t.Fatalf("the server saw Host %q, want %q", h, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
