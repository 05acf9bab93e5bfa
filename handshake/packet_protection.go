package handshake

import "github.com/quicstack/quic/wire"

// MinPayloadLen returns the smallest plaintext payload, in bytes, that a
// packet with a pnLen-byte packet number needs for header protection to
// find its sample: "packets are padded so that the combined lengths of the
// encoded packet number and protected payload is at least 4 bytes longer
// than the sample required for header protection ... This results in
// needing at least 3 bytes of frames in the unprotected payload if the
// packet number is encoded on a single byte, or 2 bytes of frames for a
// 2-byte packet number encoding." RFC 9001, Section 5.4.2
func MinPayloadLen(pnLen int) int {
	return max(0, sampleOffset-pnLen)
}

// KeyPhase returns the Key Phase bit (0 or 1) of the first byte of a short
// header packet once header protection has been removed from it (RFC 9000,
// Section 17.3.1; RFC 9001, Section 6). The bit is meaningless for long
// headers.
func KeyPhase(firstByte byte) uint8 {
	return firstByte >> 2 & 1
}

// Seal protects a packet in place and returns it (RFC 9001, Sections 5.3
// and 5.4.1).
//
// On entry packet holds the complete unprotected header, ending with the
// pnLen-byte truncated packet number at pnOffset, followed by the plaintext
// payload; the low two bits of packet[0] must already encode pnLen, and pn
// is the full packet number. Seal encrypts the payload where it lies with
// the header as associated data ("The unprotected packet header is part of
// the associated data (A)"), writes the 16-byte tag into the spare capacity
// after it, and then applies header protection to packet[0] and the packet
// number ("Header protection is applied after packet protection is
// applied"). It returns packet[:len(packet)+16] and does not allocate.
//
// Seal panics, as for a programming error, if cap(packet) < len(packet)+16,
// if pnOffset or pnLen is out of range or disagrees with packet[0], if pn
// is outside 0 to 2^62-1, or if the payload is shorter than
// [MinPayloadLen](pnLen): the caller pads it (RFC 9001, Section 5.4.2).
func (s *Sealer) Seal(packet []byte, pnOffset, pnLen int, pn wire.PacketNumber) []byte {
	hdrLen := pnOffset + pnLen
	switch {
	case pnOffset < 1 || pnLen < 1 || pnLen > 4 || hdrLen > len(packet):
		panic("handshake: Seal: packet number offset or length out of range")
	case int(packet[0]&0x03)+1 != pnLen:
		panic("handshake: Seal: packet number length disagrees with the first byte")
	case pn < 0 || pn > wire.MaxPacketNumber:
		panic("handshake: Seal: packet number out of range")
	case cap(packet)-len(packet) < tagLen:
		panic("handshake: Seal: packet buffer lacks capacity for the AEAD tag")
	case len(packet)-hdrLen < MinPayloadLen(pnLen):
		panic("handshake: Seal: payload too short for the header protection sample")
	}
	p := &s.p
	p.ready()
	payload := packet[hdrLen:]
	p.aead.Seal(payload[:0], p.nonceFor(pn), payload, packet[:hdrLen])
	packet = packet[:len(packet)+tagLen]

	// "pn_length = (packet[0] & 0x03) + 1
	//  if (packet[0] & 0x80) == 0x80:
	//     # Long header: 4 bits masked
	//     packet[0] ^= mask[0] & 0x0f
	//  else:
	//     # Short header: 5 bits masked
	//     packet[0] ^= mask[0] & 0x1f
	//  packet[pn_offset:pn_offset+pn_length] ^= mask[1:1+pn_length]"
	// RFC 9001, Section 5.4.1
	mask := p.hp.mask(packet[pnOffset+sampleOffset:])
	packet[0] ^= mask[0] & firstByteMask(packet[0])
	for i := range pnLen {
		packet[pnOffset+i] ^= mask[1+i]
	}
	return packet
}

// RemoveHeaderProtection removes header protection in place from a
// received packet whose Packet Number field starts at pnOffset (RFC 9001,
// Section 5.4.1): afterwards packet[0] shows its reserved bits, Key Phase
// bit and Packet Number Length, and the pnLen bytes at pnOffset hold the
// truncated packet number. It returns pnLen (1 to 4) and does not allocate.
//
// "An endpoint MUST discard packets that are not long enough to contain a
// complete sample." RFC 9001, Section 5.4.2. For such a packet, and for a
// pnOffset below 1, RemoveHeaderProtection returns [ErrPacketTooShort] and
// leaves packet unchanged. The sample is the 16 bytes at pnOffset+4, so a
// packet shorter than pnOffset+20 bytes has none. The caller passes only
// the bytes of this packet (up to the end given by the Length field of a
// long header), not the rest of the datagram.
//
// The revealed reserved bits are not checked here: RFC 9000, Section 17.2
// says "An endpoint MUST treat receipt of a packet that has a non-zero
// value for these bits after removing both packet and header protection as
// a connection error of type PROTOCOL_VIOLATION", so the caller checks them
// once [Opener.Open] has succeeded.
func (o *Opener) RemoveHeaderProtection(packet []byte, pnOffset int) (pnLen int, err error) {
	if pnOffset < 1 || pnOffset > len(packet)-sampleOffset-sampleLen {
		return 0, ErrPacketTooShort
	}
	o.p.ready()
	// "Removing header protection only differs in the order in which the
	// packet number length (pn_length) is determined" RFC 9001, Section 5.4.1
	mask := o.p.hp.mask(packet[pnOffset+sampleOffset:])
	packet[0] ^= mask[0] & firstByteMask(packet[0])
	pnLen = int(packet[0]&0x03) + 1
	for i := range pnLen {
		packet[pnOffset+i] ^= mask[1+i]
	}
	return pnLen, nil
}

// Open authenticates and decrypts in place a packet whose header protection
// was removed by [Opener.RemoveHeaderProtection] (RFC 9001, Sections 5.3
// and 5.5). pnOffset and pnLen locate the truncated packet number, which
// ends the header (the associated data), and pn is the full packet number
// the caller decoded from it (RFC 9000, Appendix A.3). Open returns the
// plaintext payload, a sub-slice of packet, and does not allocate.
//
// If the packet is too short to hold a 16-byte tag after the header, Open
// returns [ErrPacketTooShort]; if it does not authenticate, it returns
// [ErrDecryptionFailed], and the payload bytes of packet are then
// unspecified (the AEAD may have overwritten them), so a packet cannot be
// tried with a second set of keys after a failure. Either way the packet
// is to be discarded (RFC 9001, Section 5.5).
func (o *Opener) Open(packet []byte, pnOffset, pnLen int, pn wire.PacketNumber) (payload []byte, err error) {
	if pnOffset < 1 || pnLen < 1 || pnLen > 4 || pnOffset > len(packet)-pnLen-tagLen {
		return nil, ErrPacketTooShort
	}
	p := &o.p
	p.ready()
	hdrLen := pnOffset + pnLen
	ct := packet[hdrLen:]
	payload, err = p.aead.Open(ct[:0], p.nonceFor(pn), ct, packet[:hdrLen])
	if err != nil {
		return nil, ErrDecryptionFailed
	}
	return payload, nil
}
