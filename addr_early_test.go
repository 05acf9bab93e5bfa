package quic

import (
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// DialAddr takes the server name from the host of its address, as
// tls.Dial does, in a copy of the caller's tls.Config: a certificate for
// "localhost" only (no IP address in it) verifies when dialling
// "localhost:port" without ServerName, the session is stored under that
// name, and DialAddrEarly resumes it with 0-RTT. The caller's tls.Config
// is left as it was.
func TestDialAddrServerNameFromHost(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	ctls.ServerName = ""
	l, err := ListenAddrEarly("127.0.0.1:0", stls, &Config{Allow0RTT: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				io.Copy(s, s)
				s.CloseWrite()
			}()
		}
	}()
	addr := net.JoinHostPort("localhost", strconv.Itoa(l.Addr().(*net.UDPAddr).Port))
	echo := func(c *Conn, msg string) {
		t.Helper()
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte(msg))
		s.CloseWrite()
		if resp, err := io.ReadAll(s); err != nil || string(resp) != msg {
			t.Fatalf("echo: %q, %v", resp, err)
		}
	}
	c, err := DialAddr(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatalf("DialAddr(%q) without ServerName: %v", addr, err)
	}
	echo(c, "first")
	for deadline := time.Now().Add(10 * time.Second); cache.stored() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	c.CloseWithError(0, "")
	if cache.stored() == 0 {
		t.Fatal("no session stored")
	}
	if ctls.ServerName != "" || ctls.ClientSessionCache != cache {
		t.Fatalf("the caller's tls.Config was modified: ServerName %q, ClientSessionCache %T", ctls.ServerName, ctls.ClientSessionCache)
	}

	c, err = DialAddrEarly(ctx, addr, ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	echo(c, "second")
	<-c.HandshakeComplete()
	st := c.ConnectionState()
	if !st.TLS.DidResume || !st.Used0RTT {
		t.Errorf("second connection: resumed %v, 0-RTT %v; want both", st.TLS.DidResume, st.Used0RTT)
	}
	if st.TLS.ServerName != "localhost" {
		t.Errorf("ServerName %q, want localhost", st.TLS.ServerName)
	}
}
