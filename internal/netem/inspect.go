package netem

import (
	"bytes"

	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/wire"
)

// PacketInfo describes one QUIC packet of a recorded datagram, as far as
// it can be read without the TLS secrets.
type PacketInfo struct {
	Type    wire.PacketType
	Version wire.Version // 0 for 1-RTT packets
	// DstConnID and SrcConnID are the connection IDs (SrcConnID is empty
	// for 1-RTT packets, and DstConnID is the first shortDCIDLen bytes
	// given to Parse).
	DstConnID, SrcConnID []byte
	// Token is the token of an Initial or Retry packet.
	Token []byte
	// Size is the packet's size in bytes (the rest of the datagram for a
	// 1-RTT packet).
	Size int
	// Decrypted reports that the packet is an Initial packet whose
	// protection was removed with keys derived from a connection ID seen
	// earlier in the trace; PacketNumber and Frames are then set.
	Decrypted    bool
	PacketNumber int64
	Frames       []wire.Frame
}

// CryptoAt reports whether the packet was decrypted and carries a CRYPTO
// frame starting at offset off.
func (pi *PacketInfo) CryptoAt(off uint64) bool {
	for i := range pi.Frames {
		if pi.Frames[i].Type == wire.FrameTypeCrypto && pi.Frames[i].Crypto.Offset == off {
			return true
		}
	}
	return false
}

// CryptoBytes returns the number of CRYPTO frame bytes in the packet.
func (pi *PacketInfo) CryptoBytes() int {
	n := 0
	for i := range pi.Frames {
		if pi.Frames[i].Type == wire.FrameTypeCrypto {
			n += len(pi.Frames[i].Crypto.Data)
		}
	}
	return n
}

// Datagram is a recorded datagram with its parsed packets.
type Datagram struct {
	Record
	Packets []PacketInfo
}

// Has reports whether the datagram holds a packet of type pt.
func (d *Datagram) Has(pt wire.PacketType) bool {
	for i := range d.Packets {
		if d.Packets[i].Type == pt {
			return true
		}
	}
	return false
}

// Parse splits datagram d into its coalesced packets (RFC 9000,
// Section 12.2) and parses their headers; shortDCIDLen is the length of
// the connection IDs in short headers. It stops at the first packet it
// cannot parse, which a corrupted datagram may contain.
func Parse(d []byte, shortDCIDLen int) []PacketInfo {
	var out []PacketInfo
	for len(d) > 0 {
		pt, err := wire.PacketTypeOf(d)
		if err != nil {
			return out
		}
		switch pt {
		case wire.PacketType1RTT:
			pi := PacketInfo{Type: pt, Size: len(d), PacketNumber: -1}
			if len(d) > shortDCIDLen {
				pi.DstConnID = append([]byte(nil), d[1:1+shortDCIDLen]...)
			}
			return append(out, pi)
		case wire.PacketTypeVersionNegotiation:
			h, err := wire.ParseInvariantHeader(d, shortDCIDLen)
			if err != nil {
				return out
			}
			return append(out, PacketInfo{Type: pt, DstConnID: h.DstConnID, SrcConnID: h.SrcConnID, Size: len(d), PacketNumber: -1})
		case wire.PacketTypeRetry:
			r, err := wire.ParseRetryPacket(d)
			if err != nil {
				return out
			}
			return append(out, PacketInfo{Type: pt, Version: r.Version, DstConnID: r.DstConnID.Bytes(),
				SrcConnID: r.SrcConnID.Bytes(), Token: append([]byte(nil), r.Token...), Size: len(d), PacketNumber: -1})
		}
		h, n, err := wire.ParseLongHeader(d)
		if err != nil || uint64(len(d)-n) < h.Length {
			return out
		}
		size := n + int(h.Length)
		out = append(out, PacketInfo{Type: h.Type, Version: h.Version, DstConnID: h.DstConnID.Bytes(),
			SrcConnID: h.SrcConnID.Bytes(), Token: append([]byte(nil), h.Token...), Size: size, PacketNumber: -1})
		d = d[size:]
	}
	return out
}

// Analyze parses the packet log. It derives Initial keys (RFC 9001,
// Section 5.2) from the Destination Connection ID of each client Initial
// packet and the Source Connection ID of each Retry, and opens every
// Initial packet with them, so that the packet numbers and CRYPTO frames
// of Initial packets are known. shortDCIDLen is as for Parse.
func Analyze(log []Record, shortDCIDLen int) []Datagram {
	var keyIDs [][]byte // candidate original DCIDs, most recent last
	addKey := func(id []byte) {
		for _, k := range keyIDs {
			if bytes.Equal(k, id) {
				return
			}
		}
		keyIDs = append(keyIDs, append([]byte(nil), id...))
	}
	out := make([]Datagram, 0, len(log))
	for _, r := range log {
		dg := Datagram{Record: r, Packets: Parse(r.Data, shortDCIDLen)}
		off := 0
		for i := range dg.Packets {
			pi := &dg.Packets[i]
			switch {
			case pi.Type == wire.PacketTypeRetry:
				addKey(pi.SrcConnID)
			case pi.Type == wire.PacketTypeInitial:
				if r.Dir == ToServer {
					addKey(pi.DstConnID)
				}
				for j := len(keyIDs) - 1; j >= 0 && j >= len(keyIDs)-64; j-- {
					if openInitial(pi, r.Data[off:off+pi.Size], keyIDs[j], r.Dir == ToClient) {
						break
					}
				}
			}
			off += pi.Size
		}
		out = append(out, dg)
	}
	return out
}

// openInitial tries to open Initial packet pkt with the keys derived from
// odcid, and fills in pi on success. fromServer selects the server's
// keys.
func openInitial(pi *PacketInfo, pkt, odcid []byte, fromServer bool) bool {
	if len(odcid) > 20 {
		return false
	}
	_, open := handshake.NewInitialKeys(pi.Version, odcid, fromServer)
	h, n, err := wire.ParseLongHeader(pkt)
	if err != nil {
		return false
	}
	_ = h
	b := append([]byte(nil), pkt...)
	pnLen, err := open.RemoveHeaderProtection(b, n)
	if err != nil {
		return false
	}
	var pn int64
	for _, x := range b[n : n+pnLen] {
		pn = pn<<8 | int64(x)
	}
	payload, err := open.Open(b, n, pnLen, wire.PacketNumber(pn))
	if err != nil {
		return false
	}
	pi.Decrypted = true
	pi.PacketNumber = pn
	for len(payload) > 0 {
		var f wire.Frame
		m, err := wire.ParseFrame(payload, &f, 0)
		if err != nil || m <= 0 {
			break
		}
		if f.Type != wire.FrameTypePadding {
			pi.Frames = append(pi.Frames, f)
		}
		payload = payload[m:]
	}
	return true
}
