package quic

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// TestReusePortProgram runs the steering program in x/net/bpf's
// interpreter over the packets a group sees: short and long headers with
// our connection IDs go to the socket they name, a client's first
// packets to an accepting socket chosen by their Destination Connection
// ID, the same for every packet of that ID.
func TestReusePortProgram(t *testing.T) {
	const cidLen, group, base, n = 9, 8, 4, 4 // two generations of 4; the second accepts
	raw, err := reusePortProgram(cidLen, group, base, n)
	if err != nil {
		t.Fatal(err)
	}
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("program does not disassemble")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	run := func(p []byte) int {
		t.Helper()
		v, err := vm.Run(p)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ourID := func(worker byte) []byte {
		id := []byte{0x2a, 1, 2, 3, 4, 5, 6, 7, worker}
		return id
	}
	short := func(id []byte) []byte { return append(append([]byte{0x41}, id...), make([]byte, 30)...) }
	long := func(typ byte, dcid []byte) []byte {
		p := []byte{0xc0 | typ<<4, 0, 0, 0, 1, byte(len(dcid))}
		p = append(p, dcid...)
		p = append(p, 8, 9, 9, 9, 9, 9, 9, 9, 9)
		return append(p, make([]byte, 1200)...)
	}
	for w := range byte(group) {
		if got := run(short(ourID(w))); got != int(w) {
			t.Errorf("short header for socket %d went to %d", w, got)
		}
		if got := run(long(2, ourID(w))); got != int(w) { // Handshake
			t.Errorf("long header for socket %d went to %d", w, got)
		}
	}
	// A client's first packets: Initial and 0-RTT with its random ID.
	seen := map[int]bool{}
	for i := range 200 {
		dcid := make([]byte, 8)
		binary.BigEndian.PutUint32(dcid, uint32(i)*2654435761)
		a, b := run(long(0, dcid)), run(long(1, dcid))
		if a != b || a < base || a >= base+n {
			t.Fatalf("client ID %x: Initial to %d, 0-RTT to %d; want the same accepting socket", dcid, a, b)
		}
		seen[a] = true
	}
	if len(seen) != n {
		t.Errorf("new connections reached %d of %d accepting sockets", len(seen), n)
	}
	// A worker byte that names no socket: hashed into the accepting ones.
	if got := run(short(ourID(200))); got < base || got >= base+n {
		t.Errorf("short header naming no socket went to %d", got)
	}
	if got := run(long(2, ourID(200))); got < base || got >= base+n {
		t.Errorf("long header naming no socket went to %d", got)
	}
	// A client may choose an Initial Destination Connection ID as long as
	// ours whose last byte names a socket that takes no new connections
	// (the other generation, unread or finishing its connections): its
	// Initial and 0-RTT packets still go to an accepting socket, or the
	// connection attempt would be lost. Handshake packets always carry
	// our ID. Under QUIC v2 the packet types are numbered differently
	// (RFC 9369, Section 3.2).
	for _, v := range []struct {
		version                uint32
		initial, zeroRTT, hand byte
	}{{0x00000001, 0, 1, 2}, {0x6b3343cf, 1, 2, 3}} {
		longV := func(typ byte, dcid []byte) []byte {
			p := long(typ, dcid)
			binary.BigEndian.PutUint32(p[1:], v.version)
			return p
		}
		for w := range byte(group) {
			if got := run(longV(v.hand, ourID(w))); got != int(w) {
				t.Errorf("version %#x: Handshake packet for socket %d went to %d", v.version, w, got)
			}
			a, b := run(longV(v.initial, ourID(w))), run(longV(v.zeroRTT, ourID(w)))
			if a != b || a < base || a >= base+n {
				t.Errorf("version %#x: client ID %x: Initial to %d, 0-RTT to %d; want the same accepting socket", v.version, ourID(w), a, b)
			}
			if w >= base && a != int(w) {
				// Our ID naming an accepting socket: a client's Initial
				// packets after our first Initial reach the connection.
				t.Errorf("version %#x: Initial for accepting socket %d went to %d", v.version, w, a)
			}
		}
	}
	// Truncated packets end the program with 0.
	for _, p := range [][]byte{{}, {0x41}, {0xc0, 0, 0}} {
		if got := run(p); got != 0 {
			t.Errorf("truncated %x went to %d", p, got)
		}
	}
	for _, bad := range [][4]int{{0, 4, 0, 1}, {9, 0, 0, 1}, {9, 300, 0, 1}, {9, 4, 2, 3}, {21, 4, 0, 1}} {
		if _, err := reusePortProgram(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("accepted parameters %v", bad)
		}
	}
}
