package interop

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// The flood generator of TestFlood (flood_test.go). It runs in a child
// process (this test binary, started through TestMain), so that its CPU
// time and memory are not the server's: it sends client Initials of one
// kind to the server at a fixed rate from floodPorts UDP sockets (source
// ports) on loopback, never reads what the server answers, and stops
// when its standard input closes.

// Flood kinds.
const (
	// floodValid: a valid client Initial with a whole ClientHello, each
	// to a new Destination Connection ID: every one starts a handshake
	// the flooder never continues.
	floodValid = "valid"
	// floodFailFast: the same ClientHello in an Initial whose Source
	// Connection ID is not the initial_source_connection_id of its
	// transport parameters: the server authenticates the packet, parses
	// the ClientHello and fails the handshake at once with
	// TRANSPORT_PARAMETER_ERROR (RFC 9000, Section 7.3).
	floodFailFast = "failfast"
	// floodGarbage: a 1200-byte datagram with a valid-looking Initial
	// header (version 1, 8-byte connection IDs, a Length that fits) and a
	// random payload, which fails packet protection.
	floodGarbage = "garbage"
)

// Environment of the flooder child process.
const (
	floodHelperEnv     = "INTEROP_FLOOD_HELPER" // the kind
	floodHelperAddrEnv = "INTEROP_FLOOD_ADDR"
	floodHelperRateEnv = "INTEROP_FLOOD_RATE" // datagrams per second
)

// floodPorts is the number of source ports the flood comes from.
const floodPorts = 256

// floodMain is the flooder child process: it floods the server at the
// address of floodHelperAddrEnv until its standard input closes, then
// prints "sent N in D" and exits.
func floodMain(kind string) int {
	addr, err := netip.ParseAddrPort(os.Getenv(floodHelperAddrEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		return 2
	}
	rate, err := strconv.Atoi(os.Getenv(floodHelperRateEnv))
	if err != nil || rate <= 0 {
		fmt.Fprintln(os.Stderr, "flood: bad rate")
		return 2
	}
	gen, err := newInitialGen(kind)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		return 1
	}
	socks := make([]*net.UDPConn, floodPorts)
	for i := range socks {
		if socks[i], err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			fmt.Fprintln(os.Stderr, "flood:", err)
			return 1
		}
		socks[i].SetWriteBuffer(1 << 20)
	}
	stop := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n') // EOF when the parent closes it
		close(stop)
	}()
	fmt.Println("ready")
	buf := make([]byte, 0, 2048)
	start := time.Now()
	sent := 0
	for {
		select {
		case <-stop:
			d := time.Since(start)
			fmt.Printf("sent %d in %v\n", sent, d.Round(time.Millisecond))
			return 0
		default:
		}
		due := int(float64(rate) * time.Since(start).Seconds())
		for ; sent < due; sent++ {
			b := gen.next(buf)
			socks[sent%len(socks)].WriteToUDPAddrPort(b, addr) // a full socket buffer drops it: so be it
		}
		time.Sleep(time.Millisecond)
	}
}

// initialGen makes the datagrams of one flood kind.
type initialGen struct {
	kind    string
	version wire.Version
	scid    wire.ConnectionID // the Source Connection ID of the header
	pn      wire.PacketNumber
	pnLen   int
	payload []byte // the plaintext frames: CRYPTO (the ClientHello) and PADDING
	rnd     *rand.Rand
}

func newInitialGen(kind string) (*initialGen, error) {
	g := &initialGen{kind: kind, version: wire.Version1, rnd: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))}
	switch kind {
	case floodGarbage:
		g.payload = make([]byte, 1200)
		for i := range g.payload {
			g.payload[i] = byte(g.rnd.Uint32())
		}
		return g, nil
	case floodValid, floodFailFast:
	default:
		return nil, fmt.Errorf("unknown flood kind %q", kind)
	}
	d, err := captureClientInitial()
	if err != nil {
		return nil, err
	}
	hdr, pnOff, err := wire.ParseLongHeader(d)
	if err != nil || hdr.Type != wire.PacketTypeInitial {
		return nil, fmt.Errorf("captured datagram is not an Initial: %v", err)
	}
	_, open := handshake.NewInitialKeys(hdr.Version, hdr.DstConnID.Bytes(), false)
	pkt := d[:pnOff+int(hdr.Length)]
	pnLen, err := open.RemoveHeaderProtection(pkt, pnOff)
	if err != nil {
		return nil, err
	}
	var pn wire.PacketNumber
	for _, b := range pkt[pnOff : pnOff+pnLen] {
		pn = pn<<8 | wire.PacketNumber(b)
	}
	payload, err := open.Open(pkt, pnOff, pnLen, pn)
	if err != nil {
		return nil, err
	}
	if len(pkt) != len(d) {
		return nil, errors.New("captured datagram holds more than one packet")
	}
	g.version, g.scid, g.pn, g.pnLen = hdr.Version, hdr.SrcConnID, pn, pnLen
	g.payload = append([]byte(nil), payload...)
	if kind == floodFailFast {
		// The transport parameters name the original Source Connection
		// ID; the header now carries another.
		s := g.scid.Bytes()
		s[0] ^= 0xff
		g.scid = wire.NewConnectionID(s)
	}
	return g, nil
}

// next returns the next datagram, in buf.
func (g *initialGen) next(buf []byte) []byte {
	var dcid [8]byte
	binary.BigEndian.PutUint64(dcid[:], g.rnd.Uint64())
	if g.kind == floodGarbage {
		var scid [8]byte
		binary.BigEndian.PutUint64(scid[:], g.rnd.Uint64())
		// An Initial of version 1 with a 4-byte packet number.
		b := append(buf[:0], 0xc3, 0, 0, 0, 1, 8)
		b = append(b, dcid[:]...)
		b = append(b, 8)
		b = append(b, scid[:]...)
		b = append(b, 0) // no token
		n := 1200 - len(b) - 2
		b = wire.AppendVarintWithLen(b, uint64(n), 2)
		return append(b, g.payload[:n]...)
	}
	h := wire.LongHeader{Type: wire.PacketTypeInitial, Version: g.version, DstConnID: wire.NewConnectionID(dcid[:]),
		SrcConnID: g.scid, Length: uint64(g.pnLen + len(g.payload) + 16)}
	b := h.Append(buf[:0], g.pn, g.pnLen)
	pnOff := len(b) - g.pnLen
	b = append(b, g.payload...)
	seal, _ := handshake.NewInitialKeys(g.version, dcid[:], true)
	return seal.Seal(b, pnOff, g.pnLen, g.pn)
}

// captureClientInitial returns the first datagram of a client of ours:
// an Initial packet with the whole ClientHello. The client offers X25519
// only, so that the ClientHello fits in one datagram and the server can
// answer it with its whole first flight, the most work an Initial costs
// it.
func captureClientInitial() ([]byte, error) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	cc := &captureConn{PacketConn: udp, first: make(chan []byte, 1)}
	tr := &ours.Transport{Conn: cc}
	defer udp.Close()
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tc := &tls.Config{ServerName: "localhost", NextProtos: []string{alpn}, InsecureSkipVerify: true,
		CurvePreferences: []tls.CurveID{tls.X25519}}
	go tr.Dial(ctx, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}, tc, nil)
	select {
	case d := <-cc.first:
		cancel()
		return d, nil
	case <-ctx.Done():
		return nil, errors.New("no client Initial captured")
	}
}

// captureConn keeps the first datagram written and sends none.
type captureConn struct {
	net.PacketConn
	first chan []byte
}

func (c *captureConn) WriteTo(p []byte, _ net.Addr) (int, error) {
	select {
	case c.first <- append([]byte(nil), p...):
	default:
	}
	return len(p), nil
}
