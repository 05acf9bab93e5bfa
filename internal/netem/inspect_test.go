package netem

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	quic "github.com/quicstack/quic"
	"github.com/quicstack/quic/wire"
)

func testTLS(t *testing.T) (client, server *tls.Config) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	client = &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"netem"}}
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"netem"}}
	return client, server
}

// handshakeThrough connects our client to our server through a proxy and
// returns the analysed packet log.
func handshakeThrough(t *testing.T, retry bool, sc Scenario) []Datagram {
	t.Helper()
	ctls, stls := testTLS(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp}
	if retry {
		tr.RequireAddressValidation = func(net.Addr) bool { return true }
	}
	defer tr.Close()
	l, err := tr.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() { <-c.Context().Done() }()
		}
	}()
	p := newProxy(t, Config{Server: udp.LocalAddr().(*net.UDPAddr), Scenario: sc})
	// Version 1 only: the default also offers version 2, which a server
	// listing it upgrades to (RFC 9368).
	c, err := quic.DialAddr(ctx, p.Addr().String(), ctls, &quic.Config{Versions: []wire.Version{wire.Version1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("hello"))
	s.CloseWrite()
	c.CloseWithError(0, "")
	<-c.Context().Done()
	p.Close()
	return Analyze(p.Log(), 0)
}

// The analysis finds one handshake in version 1, decrypts the Initial
// packets of both sides and finds the ClientHello.
func TestAnalyzeHandshake(t *testing.T) {
	ds := handshakeThrough(t, false, Scenario{})
	if n := Handshakes(ds); n != 1 {
		t.Errorf("Handshakes = %d", n)
	}
	if vs := Versions(ds, ToClient, wire.PacketTypeInitial); len(vs) != 1 || !vs[wire.Version1] {
		t.Errorf("server Initial versions %v", vs)
	}
	if n := ClientHellos(ds); n != 1 {
		t.Errorf("ClientHellos = %d", n)
	}
	decrypted := [2]int{}
	for _, d := range ds {
		for _, p := range d.Packets {
			if p.Type == wire.PacketTypeInitial {
				if !p.Decrypted {
					t.Errorf("%v Initial not decrypted", d.Dir)
				}
				decrypted[d.Dir]++
			}
		}
	}
	if decrypted[ToServer] == 0 || decrypted[ToClient] == 0 {
		t.Errorf("decrypted Initials: %v", decrypted)
	}
	if s, c := AmplificationBytes(ds); s == 0 || c == 0 || s > 3*c {
		t.Errorf("amplification: server %d B for client %d B", s, c)
	}
	if Count(ds, ToClient, wire.PacketTypeHandshake) == 0 || ServerHandshakeBytes(ds) == 0 {
		t.Error("no server Handshake packets seen")
	}
}

// With Retry, the analysis sees the Retry's token in the client's next
// Initial, decrypts it with keys from the Retry's Source Connection ID,
// and shows the client did not reset its packet numbers.
func TestAnalyzeRetry(t *testing.T) {
	ds := handshakeThrough(t, true, Scenario{})
	var tokens [][]byte
	maxPN, tokenPN := int64(-1), int64(-1)
	for _, d := range ds {
		for _, p := range d.Packets {
			switch {
			case p.Type == wire.PacketTypeRetry:
				tokens = append(tokens, p.Token)
			case p.Type == wire.PacketTypeInitial && d.Dir == ToServer:
				if !p.Decrypted {
					t.Fatal("client Initial not decrypted")
				}
				if len(p.Token) > 0 && tokenPN < 0 {
					tokenPN = p.PacketNumber
				} else if tokenPN < 0 {
					maxPN = max(maxPN, p.PacketNumber)
				}
			}
		}
	}
	if len(tokens) == 0 || tokenPN < 0 {
		t.Fatalf("Retry tokens %d, token-bearing Initial PN %d", len(tokens), tokenPN)
	}
	if tokenPN <= maxPN {
		t.Errorf("client reset its packet numbers: %d after %d", tokenPN, maxPN)
	}
	if n := Handshakes(ds); n != 1 {
		t.Errorf("Handshakes = %d", n)
	}
}

// Corrupted datagrams do not break the parsers.
func TestAnalyzeCorrupted(t *testing.T) {
	sc := Scenario{Corrupt: [2]Rate{{Percent: 30, Burst: 3}, {Percent: 30, Burst: 3}}}
	ds := handshakeThrough(t, false, sc)
	if len(ds) == 0 {
		t.Fatal("empty log")
	}
	// Parse and Analyze survive arbitrary bytes.
	for i := range 2000 {
		b := make([]byte, i%300)
		rand.Read(b)
		Parse(b, 8)
		Analyze([]Record{{Data: b}, {Dir: ToClient, Data: b}}, 8)
	}
}
