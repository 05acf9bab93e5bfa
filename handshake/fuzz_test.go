package handshake

import (
	"bytes"
	"testing"

	"github.com/quicstack/quic/wire"
)

// FuzzOpen feeds arbitrary bytes to RemoveHeaderProtection and Open with the
// Initial keys of the RFC 9001 / RFC 9369 Appendix A connection ID. It must
// never panic. When a packet does open, sealing the recovered header and
// payload again with the peer's Sealer must give back the input bytes.
//
// pnOffset is where the fuzzer claims the Packet Number field starts; v2
// selects QUIC version 2; fromServer selects the direction (the client's
// Opener for server packets, else the server's Opener for client packets).
// The seed corpus in testdata/fuzz/FuzzOpen holds the protected Initial
// packets of Appendix A.2 and A.3 of both RFCs.
func FuzzOpen(f *testing.F) {
	f.Add([]byte{}, uint8(0), false, false)
	f.Add(make([]byte, 20), uint8(0), false, false)
	f.Add(make([]byte, 21), uint8(1), true, true)
	f.Add(make([]byte, 1200), uint8(255), false, true)

	cid := []byte{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08}
	type keys struct {
		clientSeal, serverSeal *Sealer
		clientOpen, serverOpen *Opener
	}
	var ks [2]keys
	for i, v := range []wire.Version{wire.Version1, wire.Version2} {
		ks[i].clientSeal, ks[i].clientOpen = NewInitialKeys(v, cid, true)
		ks[i].serverSeal, ks[i].serverOpen = NewInitialKeys(v, cid, false)
	}

	f.Fuzz(func(t *testing.T, data []byte, pnOffset uint8, v2, fromServer bool) {
		k := &ks[0]
		if v2 {
			k = &ks[1]
		}
		open, peerSeal := k.serverOpen, k.clientSeal
		if fromServer {
			open, peerSeal = k.clientOpen, k.serverSeal
		}
		packet := append([]byte{}, data...)
		off := int(pnOffset)
		pnLen, err := open.RemoveHeaderProtection(packet, off)
		if err != nil {
			if len(data) >= off+20 && off >= 1 {
				t.Fatalf("RemoveHeaderProtection rejected a %d-byte packet at pnOffset %d: %v", len(data), off, err)
			}
			if !bytes.Equal(packet, data) {
				t.Fatal("failed RemoveHeaderProtection modified the packet")
			}
			return
		}
		if pnLen < 1 || pnLen > 4 {
			t.Fatalf("pnLen %d", pnLen)
		}
		trunc, _ := wire.ParseTruncatedPacketNumber(packet[off:], pnLen)
		pn := wire.PacketNumber(trunc)
		header := append([]byte{}, packet[:off+pnLen]...)
		payload, err := open.Open(packet, off, pnLen, pn)
		if err != nil {
			return
		}
		// The packet authenticated: protecting it again must reproduce it.
		again := make([]byte, 0, len(data))
		again = append(again, header...)
		again = append(again, payload...)
		if got := peerSeal.Seal(again, off, pnLen, pn); !bytes.Equal(got, data) {
			t.Fatalf("re-sealed packet differs\n got %x\nwant %x", got, data)
		}
	})
}

// FuzzRememberedParams feeds arbitrary bytes to the decoder of the
// remembered 0-RTT parameters kept with session tickets (session_params.go).
// It must never panic, and what it accepts must come back unchanged from
// an encoding and a decoding.
func FuzzRememberedParams(f *testing.F) {
	f.Add([]byte{})
	f.Add(RememberedParams{}.marshal()[len(sessionExtraPrefix):])
	p := wire.DefaultTransportParameters()
	p.InitialMaxData, p.InitialMaxStreamsBidi, p.MaxIdleTimeout = 1<<20, 100, 30e9
	p.DisableActiveMigration, p.GreaseQUICBit, p.ResetStreamAt = true, true, true
	f.Add(RememberParams(&p).marshal()[len(sessionExtraPrefix):])
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := unmarshalRememberedParams(b)
		if !ok {
			return
		}
		enc := r.marshal()[len(sessionExtraPrefix):]
		if r2, ok := unmarshalRememberedParams(enc); !ok || r2 != r {
			t.Fatalf("decoded %+v re-encodes to %x, which decodes to %+v, %v", r, enc, r2, ok)
		}
	})
}
