package http3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServerStats reads the statistics of the Transport that Serve makes,
// which the server otherwise hides, during and after serving.
func TestServerStats(t *testing.T) {
	cert, pool := testCert(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	srv := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	if st := srv.Stats(); st.HandshakesStarted != 0 || len(srv.Transports()) != 0 {
		t.Fatalf("stats before serving: %+v", st)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i := range 3 {
		resp, err := c.Get("https://" + pc.LocalAddr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
	trs := srv.Transports()
	if len(trs) != 1 || trs[0].Conn != pc {
		t.Fatalf("Transports() = %v", trs)
	}
	for deadline := time.Now().Add(10 * time.Second); srv.Stats().HandshakesCompleted < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no handshake counted")
		}
	}
	st := srv.Stats()
	if st.HandshakesCompleted != 1 || st.ConnectionsOpen != 1 || st.HandshakeDuration.Count != 1 || len(st.CipherSuites) != 1 {
		t.Errorf("stats while serving: %+v", st)
	}
	tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if st := srv.Stats(); st.HandshakesCompleted != 1 {
		t.Errorf("stats after shutdown: %+v", st)
	}
}
