package serve

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/internal/certs"
)

// handshakeDropRelay relays UDP datagrams between clients and a server.
// With drop set, once the server has answered, it drops the client's
// long-header datagrams other than 0-RTT ones: its Initial and Handshake
// packets, which carry the client's Finished, so that the server's
// handshake never completes while 0-RTT and 1-RTT packets pass.
type handshakeDropRelay struct {
	pc       net.PacketConn
	server   net.Addr
	drop     atomic.Bool
	answered atomic.Bool
	mu       sync.Mutex
	client   net.Addr
	toServer net.PacketConn
}

func newHandshakeDropRelay(t *testing.T, server net.Addr) *handshakeDropRelay {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &handshakeDropRelay{pc: pc, server: server, toServer: up}
	t.Cleanup(func() { pc.Close(); up.Close() })
	go func() { // client -> server
		b := make([]byte, 65536)
		for {
			n, addr, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.client = addr
			r.mu.Unlock()
			if r.drop.Load() && r.answered.Load() && b[0]&0x80 != 0 && !is0RTT(b[:n]) {
				continue
			}
			up.WriteTo(b[:n], server)
		}
	}()
	go func() { // server -> client
		b := make([]byte, 65536)
		for {
			n, _, err := up.ReadFrom(b)
			if err != nil {
				return
			}
			r.answered.Store(true)
			r.mu.Lock()
			c := r.client
			r.mu.Unlock()
			pc.WriteTo(b[:n], c)
		}
	}()
	return r
}

// is0RTT reports a long-header datagram whose first packet is 0-RTT, in
// QUIC version 1 (type 1) or 2 (type 2, RFC 9369, Section 3.2).
func is0RTT(d []byte) bool {
	if len(d) < 5 {
		return false
	}
	typ := d[0] >> 4 & 3
	switch binary.BigEndian.Uint32(d[1:5]) {
	case 1:
		return typ == 1
	case 0x6b3343cf:
		return typ == 2
	}
	return false
}

// A GET sent in 0-RTT is answered before the client's handshake
// completes: the server accepts connections early (ListenEarly). Through
// a relay that keeps the client's Finished from the server, the response
// still arrives; a server that waited for the handshake would never
// answer.
func TestZeroRTTServedBeforeHandshake(t *testing.T) {
	cert, pool, err := certs.SelfSigned(certs.DefaultHosts...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{Addr: "127.0.0.1:0", Cert: cert})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctls := &tls.Config{RootCAs: pool, ServerName: "localhost", ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	relay := newHandshakeDropRelay(t, s.Addr)
	get := func(tr *http3.Transport) (string, error) {
		defer tr.Close()
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		resp, err := c.Get("https://" + relay.pc.LocalAddr().String() + "/bytes/5")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(&http3.Transport{TLSClientConfig: ctls}); err != nil || body != "abcde" {
		t.Fatalf("first request: %q, %v", body, err)
	}
	relay.drop.Store(true)
	relay.answered.Store(false)
	body, err := get(&http3.Transport{TLSClientConfig: ctls, Allow0RTT: true})
	if err != nil || body != "abcde" {
		t.Fatalf("0-RTT request whose handshake cannot complete: %q, %v", body, err)
	}
}
