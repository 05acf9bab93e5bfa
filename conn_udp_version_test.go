package quic

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// Compatible version negotiation through real sockets: a client starting
// in version 1 and offering 2 is upgraded by a server listing 2. Its
// session ticket then belongs to version 2 (RFC 9369, Section 5): the
// client's next connection to the server starts in version 2, to resume
// it, and one that offers only version 1 does not use it.
func TestVersionUpgradeOverUDP(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{Conn: udp}
	defer func() { tr.Close(); udp.Close() }()
	l, err := tr.Listen(stls, &Config{Versions: v2First})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for {
			if _, err := l.Accept(ctx); err != nil {
				return
			}
		}
	}()
	dial := func(versions []wire.Version) ConnectionState {
		t.Helper()
		before := cache.stored()
		c, err := DialAddr(ctx, l.Addr().String(), ctls, &Config{Versions: versions})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		// Wait for the session ticket, which follows the handshake.
		for cache.stored() == before && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		return c.ConnectionState()
	}
	if st := dial(v1First); st.Version != wire.Version2 || st.TLS.DidResume {
		t.Fatalf("first connection: version %v, resumed %v", st.Version, st.TLS.DidResume)
	}
	if st := dial([]wire.Version{wire.Version1}); st.Version != wire.Version1 || st.TLS.DidResume {
		t.Errorf("connection offering only version 1: version %v, resumed %v with a version 2 ticket", st.Version, st.TLS.DidResume)
	}
	if st := dial(v1First); st.Version != wire.Version2 || !st.TLS.DidResume {
		t.Errorf("next connection with versions 1 and 2: version %v, resumed %v", st.Version, st.TLS.DidResume)
	}
}
