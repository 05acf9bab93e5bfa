package quic

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"
)

// A ListenEarly Accept returns a connection whose application protocol
// and server name are known, as the ClientHello decided them, before its
// handshake completes (as quic-go's early listeners do): a server can
// dispatch by ALPN at once. Here the handshake never completes, since
// the client does not trust the server's certificate.
func TestListenEarlyAcceptKnowsALPN(t *testing.T) {
	_, stls := testTLS(t)
	stls.NextProtos = []string{"other", "test"}
	l, err := ListenAddrEarly("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		// A client that rejects the certificate (no RootCAs): the server's
		// handshake never completes.
		ctls := &tls.Config{ServerName: "localhost", NextProtos: []string{"test"}}
		DialAddr(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.UDPAddr).Port)), ctls, nil)
	}()
	c, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := c.ConnectionState()
	if st.TLS.NegotiatedProtocol != "test" || st.TLS.ServerName != "localhost" {
		t.Errorf("at Accept: ALPN %q, server name %q; want test, localhost", st.TLS.NegotiatedProtocol, st.TLS.ServerName)
	}
	select {
	case <-c.HandshakeComplete():
		t.Error("the handshake completed with a client that rejects the certificate")
	default:
	}
}
