package quic

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// A client whose tls.Config has no ServerName (InsecureSkipVerify, an
// address dialled directly) resumes sessions too: crypto/tls names a QUIC
// client's sessions by ServerName and, without one, stored none, and the
// session cache by QUIC version (versionedSessionCache, RFC 9369,
// Section 5) looked them up under an empty name. Dial fills ServerName
// in from the address, as tls.Dial does from its address's host. The
// server offers version 2 and upgrades the first connection (RFC 9368):
// the second starts in version 2, where the session was stored.
func TestUDPResumptionWithoutServerName(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	ctls.ServerName, ctls.InsecureSkipVerify = "", true
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	versions := []wire.Version{wire.Version1, wire.Version2}
	l, err := tr.ListenEarly(stls, &Config{Allow0RTT: true, Versions: []wire.Version{wire.Version2, wire.Version1}})
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
				io.Copy(s, s)
				s.CloseWrite()
			}()
		}
	}()
	for i := range 2 {
		c, err := tr.DialEarly(ctx, l.Addr(), ctls, &Config{Versions: versions})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("ping"))
		s.CloseWrite()
		if resp, err := io.ReadAll(s); err != nil || string(resp) != "ping" {
			t.Fatalf("connection %d: %q, %v", i, resp, err)
		}
		<-c.HandshakeComplete()
		st := c.ConnectionState()
		t.Logf("connection %d: version %v resumed=%v 0rtt=%v", i, st.Version, st.TLS.DidResume, st.Used0RTT)
		if st.Version != wire.Version2 {
			t.Errorf("connection %d in %v, want version 2", i, st.Version)
		}
		if i == 0 {
			deadline := time.Now().Add(10 * time.Second)
			for cache.stored() == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if cache.stored() == 0 {
				t.Fatal("no session stored for a server dialled without ServerName")
			}
		} else if !st.TLS.DidResume || !st.Used0RTT {
			t.Errorf("second connection: resumed=%v 0rtt=%v", st.TLS.DidResume, st.Used0RTT)
		}
		c.CloseWithError(0, "")
	}
}
