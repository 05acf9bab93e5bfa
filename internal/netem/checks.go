package netem

import "github.com/quicstack/quic/wire"

// The checks the interop runner makes on its packet captures
// (shared/specs/INTEROP.md, Section 1), made on an analysed packet log.
// The runner reads the server-side capture: every datagram the server sent
// (dropped on the link or not) and the client datagrams that reached it.

// Handshakes counts the distinct Source Connection IDs of server Initial
// packets: the runner's handshake count.
func Handshakes(ds []Datagram) int {
	seen := map[string]bool{}
	for _, d := range ds {
		if d.Dir != ToClient {
			continue
		}
		for _, p := range d.Packets {
			if p.Type == wire.PacketTypeInitial {
				seen[string(p.SrcConnID)] = true
			}
		}
	}
	return len(seen)
}

// Versions returns the set of versions of the long-header packets of type
// pt sent in direction dir.
func Versions(ds []Datagram, dir Direction, pt wire.PacketType) map[wire.Version]bool {
	vs := map[wire.Version]bool{}
	for _, d := range ds {
		if d.Dir != dir {
			continue
		}
		for _, p := range d.Packets {
			if p.Type == pt {
				vs[p.Version] = true
			}
		}
	}
	return vs
}

// Count counts the packets of type pt sent in direction dir.
func Count(ds []Datagram, dir Direction, pt wire.PacketType) int {
	n := 0
	for _, d := range ds {
		if d.Dir != dir {
			continue
		}
		for _, p := range d.Packets {
			if p.Type == pt {
				n++
			}
		}
	}
	return n
}

// ClientHellos counts the client Initial packets that carry the start of
// the TLS handshake (a CRYPTO frame at offset 0): the ClientHello and its
// retransmissions.
func ClientHellos(ds []Datagram) int {
	n := 0
	for _, d := range ds {
		if d.Dir != ToServer {
			continue
		}
		for i := range d.Packets {
			p := &d.Packets[i]
			if p.Type == wire.PacketTypeInitial && p.CryptoAt(0) {
				n++
			}
		}
	}
	return n
}

// AmplificationBytes walks the log until the first client Handshake
// packet that reached the server and returns the bytes the server sent
// and the client bytes the server received until then (RFC 9000,
// Section 8.1: at most three times as many).
func AmplificationBytes(ds []Datagram) (server, client int) {
	for _, d := range ds {
		if d.Dir == ToClient {
			server += d.Size
			continue
		}
		if d.Dropped {
			continue
		}
		if d.Has(wire.PacketTypeHandshake) {
			return server, client
		}
		client += d.Size
	}
	return server, client
}

// ServerHandshakeBytes returns how many bytes the server's Handshake
// packets carried in total (a lower bound of its Handshake CRYPTO data,
// which the trace cannot decrypt).
func ServerHandshakeBytes(ds []Datagram) int {
	n := 0
	for _, d := range ds {
		if d.Dir != ToClient {
			continue
		}
		for _, p := range d.Packets {
			if p.Type == wire.PacketTypeHandshake {
				n += p.Size
			}
		}
	}
	return n
}
