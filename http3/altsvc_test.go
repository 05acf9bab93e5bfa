package http3

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSetQUICHeaders(t *testing.T) {
	s := &Server{Addr: "127.0.0.1:8443"}
	h := make(http.Header)
	if err := s.SetQUICHeaders(h); err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Alt-Svc"); got != `h3=":8443"; ma=86400` {
		t.Fatalf("Alt-Svc %q", got)
	}
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	e.get(t, "/") // Serve has registered its listener
	h = make(http.Header)
	e.srv.SetQUICHeaders(h)
	_, port, _ := net.SplitHostPort(e.addr)
	if got := h.Get("Alt-Svc"); got != `h3=":`+port+`"; ma=86400` {
		t.Fatalf("listening server: Alt-Svc %q", got)
	}
	if err := (&Server{Addr: "localhost:0"}).SetQUICHeaders(h); err == nil {
		t.Fatal("port 0 accepted")
	}
}

func TestListenAndServeTLSBothTransports(t *testing.T) {
	cert, pool := testCert(t)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	})
	// A port free for both UDP and TCP.
	var addr string
	for i := 0; ; i++ {
		addr = freeUDPAddr(t)
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			break
		}
		if i == 20 {
			t.Fatal("no port free for both UDP and TCP")
		}
	}
	servers := make(chan [2]any, 1)
	done := make(chan error, 1)
	go func() {
		done <- listenAndServeBoth(addr, cert, handler, func(h3 *Server, tcp *http.Server) {
			servers <- [2]any{h3, tcp}
		})
	}()
	srvs := <-servers
	defer func() {
		srvs[0].(*Server).Close()
		srvs[1].(*http.Server).Close()
		<-done
	}()
	clientTLS := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	// HTTP/2 over TCP, with Alt-Svc.
	tcpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS, ForceAttemptHTTP2: true}, Timeout: 10 * time.Second}
	defer tcpClient.CloseIdleConnections()
	var resp *http.Response
	var err error
	for i := 0; i < 50; i++ {
		if resp, err = tcpClient.Get("https://" + addr + "/"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, port, _ := net.SplitHostPort(addr)
	if string(b) != "HTTP/2.0" || resp.Header.Get("Alt-Svc") != `h3=":`+port+`"; ma=86400` {
		t.Fatalf("TCP: %q, Alt-Svc %q", b, resp.Header.Get("Alt-Svc"))
	}
	// HTTP/3 over UDP on the port Alt-Svc names.
	alt := resp.Header.Get("Alt-Svc")
	altPort := alt[strings.Index(alt, ":")+1 : strings.LastIndex(alt, `"`)]
	tr := &Transport{TLSClientConfig: clientTLS}
	defer tr.Close()
	h3Client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i := 0; i < 50; i++ {
		if resp, err = h3Client.Get("https://127.0.0.1:" + altPort + "/"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "HTTP/3.0" {
		t.Fatalf("UDP: %q", b)
	}
}
