package masque_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/masque"
)

// A UDP proxy and a client that sends a datagram to an echo server
// through it, all on loopback (which the proxy's policy allows here; the
// default policy refuses it).
func Example() {
	echo, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer echo.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := echo.ReadFrom(buf)
			if err != nil {
				return
			}
			echo.WriteTo(buf[:n], from)
		}
	}()

	cert, pool, _ := certs.SelfSigned("localhost")
	proxy := &masque.Proxy{Policy: func(r *http.Request, target netip.AddrPort) error {
		if target.Addr().IsLoopback() {
			return nil
		}
		return masque.ErrTargetProhibited
	}}
	srv := &http3.Server{Handler: proxy, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	masque.ConfigureServer(srv)
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	go srv.Serve(pc)
	defer srv.Close()

	client := &masque.Client{
		Template:        "https://" + pc.LocalAddr().String() + masque.DefaultTemplate,
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"},
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tunnel, err := client.DialUDP(ctx, echo.LocalAddr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tunnel.Close()
	buf := make([]byte, 1500)
	for {
		tunnel.WriteTo([]byte("hello, proxied UDP"), nil)
		tunnel.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, _, err := tunnel.ReadFrom(buf); err == nil {
			fmt.Println(string(buf[:n]))
			return
		}
	}
	// Output: hello, proxied UDP
}
