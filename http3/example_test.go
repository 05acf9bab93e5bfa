package http3_test

import (
	"context"
	"io"
	"log"
	"net/http"

	"github.com/quicstack/quic/http3"
)

func ExampleServer() {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello over "+r.Proto)
	})
	srv := &http3.Server{Addr: ":443", Handler: mux}
	log.Fatal(srv.ListenAndServeTLS("cert.pem", "key.pem"))
}

func ExampleListenAndServeTLS() {
	// HTTP/1.1 and HTTP/2 on TCP port 443 with an Alt-Svc header pointing
	// browsers to HTTP/3 on UDP port 443.
	log.Fatal(http3.ListenAndServeTLS(":443", "cert.pem", "key.pem", http.DefaultServeMux))
}

func ExampleTransport() {
	tr := &http3.Transport{Allow0RTT: true}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	resp, err := client.Get("https://example.com/")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
}

func ExampleTransport_OpenRequestStream() {
	tr := &http3.Transport{EnableDatagrams: true}
	defer tr.Close()
	req, _ := http.NewRequest(http.MethodConnect, "https://example.com/tunnel", nil)
	req.Header.Set(":protocol", "my-protocol")
	resp, str, err := tr.OpenRequestStream(req)
	if err != nil {
		log.Fatal(err)
	}
	defer str.Close()
	if resp.StatusCode != http.StatusOK {
		log.Fatalf("refused: %s", resp.Status)
	}
	str.WriteCapsule(0x2a, []byte("a capsule"))
	str.SendDatagram([]byte("a datagram"))
	d, err := str.ReceiveDatagram(context.Background())
	log.Printf("datagram %q, %v", d, err)
}

func ExampleHTTPStreamer() {
	srv := &http3.Server{
		Addr:                  ":443",
		EnableExtendedConnect: true,
		EnableDatagrams:       true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodConnect || r.Header.Get(":protocol") != "my-protocol" {
				w.WriteHeader(http.StatusNotImplemented)
				return
			}
			str := w.(http3.HTTPStreamer).HTTPStream() // sends 200
			go func() {
				defer str.Close()
				for {
					c, err := str.ReadCapsule(0)
					if err != nil {
						return
					}
					str.WriteCapsule(c.Type, c.Value) // echo
				}
			}()
		}),
	}
	log.Fatal(srv.ListenAndServeTLS("cert.pem", "key.pem"))
}
