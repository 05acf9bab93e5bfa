package quic

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// slowReadConn holds each datagram it reads for delay (while delay is
// set) before handing it over, so that what the application writes just
// after a dial leaves before the server's answer is processed.
type slowReadConn struct {
	net.PacketConn
	delay atomic.Int64
}

func (c *slowReadConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, addr, err := c.PacketConn.ReadFrom(p)
	if d := c.delay.Load(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	return n, addr, err
}

// fleetServer is one server of a fleet: its own socket and Transport, the
// fleet's keys.
type fleetServer struct {
	udp net.PacketConn
	tr  *Transport
	l   *Listener
}

// fleetKeys are what the servers of a fleet share.
type fleetKeys struct {
	token, reset []byte
	ticket       [32]byte
}

func newFleetKeys() fleetKeys {
	k := fleetKeys{token: make([]byte, 32), reset: make([]byte, 32)}
	rand.Read(k.token)
	rand.Read(k.reset)
	rand.Read(k.ticket[:])
	return k
}

// startFleetServer starts a server at addr ("127.0.0.1:0" for any port)
// that requires address validation (a Retry unless the client has a
// token), allows 0-RTT, and answers each stream with "0rtt:" or "1rtt:"
// and the request.
func startFleetServer(t *testing.T, ctx context.Context, addr string, keys fleetKeys, stls *tls.Config) *fleetServer {
	t.Helper()
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Each server has its own tls.Config, as separate processes would,
	// with the fleet's session ticket key.
	tc := stls.Clone()
	tc.SetSessionTicketKeys([][32]byte{keys.ticket})
	s := &fleetServer{udp: udp, tr: &Transport{
		Conn: udp, TokenKey: keys.token, StatelessResetKey: keys.reset,
		RequireAddressValidation: func(net.Addr) bool { return true },
	}}
	if s.l, err = s.tr.ListenEarly(tc, &Config{Allow0RTT: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.tr.Close(); udp.Close() })
	go func() {
		for {
			c, err := s.l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					st, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					req, _ := io.ReadAll(st)
					early := "1rtt:"
					if st.ReceivedEarlyData() {
						early = "0rtt:"
					}
					st.Write(append([]byte(early), req...))
					st.CloseWrite()
				}
			}()
		}
	}()
	return s
}

func fleetRequest(t *testing.T, ctx context.Context, c *Conn) string {
	t.Helper()
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
	return string(resp)
}

// Two server Transports on different sockets, configured with the same
// token key, stateless reset key and session ticket key, act as one
// fleet: a client gets a session ticket and a NEW_TOKEN token from the
// first, then connects to the second without a Retry (the token is
// accepted), resumes the session and has its request accepted in 0-RTT;
// and a server that never saw a connection resets it for a server that
// lost it.
func TestUDPFleetSharedKeys(t *testing.T) {
	ctls, stls, cache := resumeTLS(t)
	keys := newFleetKeys()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := startFleetServer(t, ctx, "127.0.0.1:0", keys, stls)
	b := startFleetServer(t, ctx, "127.0.0.1:0", keys, stls)

	store := NewLRUTokenStore(4, 4)
	cfg := &Config{TokenStore: store}
	udpConn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cudp := &slowReadConn{PacketConn: udpConn}
	ctr := &Transport{Conn: cudp}
	defer func() { ctr.Close(); cudp.Close() }()

	c1, err := ctr.Dial(ctx, a.l.Addr(), ctls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if resp := fleetRequest(t, ctx, c1); resp != "1rtt:GET /" {
		t.Fatalf("first connection: %q", resp)
	}
	if !c1.state.hasRetried {
		t.Fatal("server A did not validate the first connection with a Retry")
	}
	// Wait for the ticket and the NEW_TOKEN token of server A.
	key := tokenStoreKey(ctls.ServerName, a.l.Addr()) + "|" + c1.ConnectionState().Version.String()
	var tok []byte
	for (tok == nil || cache.stored() == 0) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
		if tok == nil {
			tok = store.Get(key)
		}
	}
	if tok == nil || cache.stored() == 0 {
		t.Fatalf("token %v, tickets %d", tok != nil, cache.stored())
	}
	store.Put(key, tok)

	// The request must leave in 0-RTT: on a loaded machine the handshake
	// could otherwise complete before the application writes, and the
	// request would go in 1-RTT.
	cudp.delay.Store(int64(20 * time.Millisecond))
	c2, err := ctr.DialEarly(ctx, b.l.Addr(), ctls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp := fleetRequest(t, ctx, c2)
	cudp.delay.Store(0)
	<-c2.HandshakeComplete()
	st := c2.ConnectionState()
	if c2.state.hasRetried {
		t.Error("server B sent a Retry: it did not accept server A's token")
	}
	if !st.TLS.DidResume || !st.Used0RTT || resp != "0rtt:GET /" {
		t.Errorf("server B: resumed %v, 0-RTT %v, response %q", st.TLS.DidResume, st.Used0RTT, resp)
	}
	c2.CloseWithError(0, "")

	// Server A loses its state (its socket and Transport go away without a
	// word to the client); a server of the fleet that takes over its
	// address answers the client's next packet with a stateless reset the
	// client accepts.
	addrA := a.l.Addr().String()
	a.udp.Close()
	<-a.tr.closing
	var c *fleetServer
	for i := 0; c == nil && i < 100; i++ {
		if udp, err := net.ListenPacket("udp", addrA); err == nil {
			udp.Close()
			c = startFleetServer(t, ctx, addrA, keys, stls)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if c == nil {
		t.Fatal("cannot take over server A's address")
	}
	s, err := c1.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("anyone there?"))
	select {
	case <-c1.Context().Done():
	case <-ctx.Done():
		t.Fatal("the client never learned that server A lost the connection")
	}
	var reset *StatelessResetError
	if err := context.Cause(c1.Context()); !errors.As(err, &reset) {
		t.Fatalf("connection ended with %v, want a stateless reset", err)
	}
}
