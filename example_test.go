package quic_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/certs"
)

// exampleTLS returns TLS configurations for a server on localhost and a
// client that trusts it, with the application protocol "echo" (QUIC
// requires one, RFC 9001, Section 8.1). Use your own certificates.
func exampleTLS() (server, client *tls.Config) {
	cert, pool, err := certs.SelfSigned("localhost")
	if err != nil {
		log.Fatal(err)
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"echo"}}
	client = &tls.Config{RootCAs: pool, NextProtos: []string{"echo"}}
	return server, client
}

// localhost returns "localhost:PORT" for a listener's port: DialAddr takes
// the TLS server name from the host, as tls.Dial does.
func localhost(l *quic.Listener) string {
	return net.JoinHostPort("localhost", strconv.Itoa(l.Addr().(*net.UDPAddr).Port))
}

// An echo server and its client on loopback. The client ends its request
// with CloseWrite, which sends a FIN and keeps the stream open for the
// answer: Stream.Close would close both directions.
func Example_echo() {
	serverTLS, clientTLS := exampleTLS()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	l, err := quic.ListenAddr("127.0.0.1:0", serverTLS, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := conn.AcceptStream(ctx)
					if err != nil {
						return
					}
					go func() {
						io.Copy(s, s) // until the client's FIN
						s.CloseWrite()
					}()
				}
			}()
		}
	}()

	conn, err := quic.DialAddr(ctx, localhost(l), clientTLS, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.CloseWithError(0, "")
	s, err := conn.OpenStreamSync(ctx)
	if err != nil {
		log.Fatal(err)
	}
	s.Write([]byte("hello, QUIC"))
	s.CloseWrite()
	reply, err := io.ReadAll(s)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", reply)
	// Output: hello, QUIC
}

// Datagrams (RFC 9221) are unreliable: the client sends its ping again
// until the server's pong arrives. Both sides enable them.
func ExampleConn_SendDatagram() {
	serverTLS, clientTLS := exampleTLS()
	conf := &quic.Config{EnableDatagrams: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	l, err := quic.ListenAddr("127.0.0.1:0", serverTLS, conf)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		conn, err := l.Accept(ctx)
		if err != nil {
			return
		}
		for {
			d, err := conn.ReceiveDatagram(ctx)
			if err != nil {
				return
			}
			conn.SendDatagram(append([]byte("pong to "), d...))
		}
	}()

	conn, err := quic.DialAddr(ctx, localhost(l), clientTLS, conf)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.CloseWithError(0, "")
	for {
		if err := conn.SendDatagram([]byte("ping")); err != nil {
			log.Fatal(err)
		}
		wait, stop := context.WithTimeout(ctx, 200*time.Millisecond)
		d, err := conn.ReceiveDatagram(wait)
		stop()
		if err == nil {
			fmt.Printf("%s\n", d)
			break
		}
		if ctx.Err() != nil {
			log.Fatal(err)
		}
	}
	// Output: pong to ping
}

// A client that chooses its congestion controller: BBR
// (congestion.NewBBR, also the default; congestion.NewCubic and
// congestion.NewNewReno are the others). BBR starts in its startup phase.
func ExampleConfig_bbr() {
	serverTLS, clientTLS := exampleTLS()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	l, err := quic.ListenAddr("127.0.0.1:0", serverTLS, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	received := make(chan int64, 1)
	go func() {
		conn, err := l.Accept(ctx)
		if err != nil {
			return
		}
		s, err := conn.AcceptStream(ctx)
		if err != nil {
			return
		}
		n, _ := io.Copy(io.Discard, s)
		received <- n
		s.CloseWrite()
	}()

	conn, err := quic.DialAddr(ctx, localhost(l), clientTLS, &quic.Config{Congestion: congestion.NewBBR})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.CloseWithError(0, "")
	fmt.Println("congestion state:", conn.Stats().CongestionState)
	s, err := conn.OpenStreamSync(ctx)
	if err != nil {
		log.Fatal(err)
	}
	s.Write(make([]byte, 1<<20))
	s.CloseWrite()
	io.ReadAll(s) // the server's FIN: it has read everything
	fmt.Println("the server received", <-received, "bytes")
	// Output:
	// congestion state: startup
	// the server received 1048576 bytes
}
