package quic

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// Resumption and 0-RTT through real sockets: a second connection from the
// same client TLS configuration resumes the session, and with DialEarly
// and a server allowing 0-RTT its request goes in 0-RTT.
func TestUDPResumptionAnd0RTT(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	l, err := tr.ListenEarly(stls, &Config{Allow0RTT: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
				req, _ := io.ReadAll(s)
				early := "1rtt:"
				if s.ReceivedEarlyData() {
					early = "0rtt:"
				}
				s.Write(append([]byte(early), req...))
				s.CloseWrite()
			}()
		}
	}()
	for i, early := range []bool{false, true} {
		var c *Conn
		if early {
			c, err = tr.DialEarly(ctx, l.Addr(), ctls, nil)
		} else {
			c, err = tr.Dial(ctx, l.Addr(), ctls, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("GET /"))
		s.CloseWrite()
		resp, err := io.ReadAll(s)
		if err != nil {
			t.Fatal(err)
		}
		<-c.HandshakeComplete()
		st := c.ConnectionState()
		t.Logf("connection %d: %q resumed=%v 0rtt=%v", i, resp, st.TLS.DidResume, st.Used0RTT)
		if i == 0 {
			if st.TLS.DidResume || string(resp) != "1rtt:GET /" {
				t.Fatalf("first connection: resumed=%v response %q", st.TLS.DidResume, resp)
			}
			// Wait for the session ticket.
			for cache.stored() == 0 {
				time.Sleep(time.Millisecond)
			}
		} else if !st.TLS.DidResume || !st.Used0RTT || string(resp) != "0rtt:GET /" {
			t.Fatalf("second connection: resumed=%v 0rtt=%v response %q", st.TLS.DidResume, st.Used0RTT, resp)
		}
		c.CloseWithError(0, "")
	}
}
