package webtransport_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/webtransport"
)

// A WebTransport server that answers each bidirectional stream with its
// content in upper case, and a client that opens a session and a stream.
func Example() {
	cert, pool, _ := certs.SelfSigned("localhost")
	wt := &webtransport.Server{}
	mux := http.NewServeMux()
	mux.HandleFunc("/wt", func(w http.ResponseWriter, r *http.Request) {
		sess, err := wt.Upgrade(w, r)
		if err != nil {
			return
		}
		go func() {
			str, err := sess.AcceptStream(sess.Context())
			if err != nil {
				return
			}
			b, _ := io.ReadAll(str)
			for i, c := range b {
				if 'a' <= c && c <= 'z' {
					b[i] = c - 'a' + 'A'
				}
			}
			str.Write(b)
			str.CloseWrite()
		}()
	})
	srv := &http3.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	wt.ConfigureServer(srv)
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	go srv.Serve(pc)
	defer srv.Close()

	d := &webtransport.Dialer{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, sess, err := d.Dial(ctx, "https://"+pc.LocalAddr().String()+"/wt", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.CloseWithError(0, "")
	str, _ := sess.OpenStreamSync(ctx)
	str.Write([]byte("hello, webtransport"))
	str.CloseWrite()
	b, _ := io.ReadAll(str)
	fmt.Println(string(b))
	// Output: HELLO, WEBTRANSPORT
}
