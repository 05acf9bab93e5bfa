package masque

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
)

// QUIC inside MASQUE: our HTTP/3 client fetches a page from our HTTP/3
// server through our proxy, its QUIC connection running on the tunnel's
// net.PacketConn. The server sees the request come from the proxy's
// socket, not from the client.
func TestHTTP3ThroughProxy(t *testing.T) {
	cert, pool, err := certs.SelfSigned("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	remote := make(chan string, 1)
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case remote <- r.RemoteAddr:
		default:
		}
		io.WriteString(w, "hello through the proxy, over "+r.Proto)
	})
	origin := &http3.Server{Handler: page, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	opc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go origin.Serve(opc)
	t.Cleanup(func() { origin.Close(); opc.Close() })

	e := newProxyEnv(t, &Proxy{Policy: allowLoopback}, nil)
	ctx := testCtx(t)
	tunnel, err := e.client.DialUDP(ctx, opc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	qt := &quic.Transport{Conn: tunnel}
	defer qt.Close()
	client := &http.Client{Transport: &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"},
		// The inner packets travel in the outer connection's QUIC
		// DATAGRAM frames.
		QUICConfig: &quic.Config{InitialPacketSize: 1200},
		Dial: func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return qt.Dial(ctx, tunnel.RemoteAddr(), tc, qc)
		},
	}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+opc.LocalAddr().String()+"/", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "hello through the proxy, over HTTP/3.0" {
		t.Fatalf("body %q, %v", body, err)
	}
	client.CloseIdleConnections()
	// The origin saw the proxy's socket: not the tunnel's local address
	// (the client's socket to the proxy).
	if from := <-remote; from == tunnel.LocalAddr().String() || from == "" {
		t.Fatalf("the origin saw the request come from %s, the client's own address", from)
	}
}
