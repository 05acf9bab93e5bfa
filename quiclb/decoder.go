package quiclb

import "fmt"

// The reasons a connection ID is unroutable (Section 4.1), made once so
// that decoding the many client-chosen connection IDs a balancer sees
// allocates nothing.
var (
	errEmpty         = fmt.Errorf("%w: empty connection ID", ErrUnroutable)
	errReserved      = fmt.Errorf("%w: config rotation codepoint 0b111", ErrUnroutable)
	errUnknownConfig = fmt.Errorf("%w: no configuration for its config rotation codepoint", ErrUnroutable)
	errTooShort      = fmt.Errorf("%w: too short for its configuration", ErrUnroutable)
)

// A Decoder reads the server ID of connection IDs, for a load balancer.
// It holds up to seven configurations, one per config rotation codepoint,
// so that connection IDs of an old and a new configuration are both
// routed while servers move from one to the other (Section 3.1). A
// Decoder is immutable and safe for concurrent use; decoding allocates
// nothing when dst has room.
type Decoder struct {
	codecs [UnroutableConfigID]*codec
}

// NewDecoder returns a Decoder of the given configurations, whose IDs
// must differ.
func NewDecoder(configs ...Config) (*Decoder, error) {
	d := &Decoder{}
	for _, c := range configs {
		k, err := newCodec(c)
		if err != nil {
			return nil, err
		}
		if d.codecs[c.ID] != nil {
			return nil, fmt.Errorf("quiclb: two configurations with ID %d", c.ID)
		}
		d.codecs[c.ID] = k
	}
	return d, nil
}

// ServerID appends to dst the server ID of cid and returns the result.
// cid may be longer than the configuration's connection IDs: for a short
// header packet, whose destination connection ID has no length field,
// pass the bytes after the packet's first byte. The error wraps
// ErrUnroutable for a connection ID of codepoint 0b111 or of a
// configuration the Decoder lacks, or too short for its configuration
// (Section 4.1).
func (d *Decoder) ServerID(dst, cid []byte) ([]byte, error) {
	k, err := d.codec(cid)
	if err != nil {
		return dst, err
	}
	s := getScratch()
	block := s.b[:k.plen]
	copy(block, cid[1:])
	k.decrypt(block, false, s)
	dst = append(dst, block[:k.cfg.ServerIDLen]...)
	putScratch(s)
	return dst, nil
}

// Plaintext appends to dst the server ID and nonce of cid, decrypted with
// every pass, and returns the result; the server ID is the first
// ServerIDLen bytes. cid is as for ServerID.
func (d *Decoder) Plaintext(dst, cid []byte) ([]byte, error) {
	k, err := d.codec(cid)
	if err != nil {
		return dst, err
	}
	s := getScratch()
	block := s.b[:k.plen]
	copy(block, cid[1:])
	k.decrypt(block, true, s)
	dst = append(dst, block...)
	putScratch(s)
	return dst, nil
}

// ConfigID returns the config rotation codepoint of cid, 0 to 7.
func ConfigID(cid []byte) (uint8, error) {
	if len(cid) == 0 {
		return 0, errEmpty
	}
	return cid[0] >> 5, nil
}

// codec returns the codec of cid's configuration, if cid is routable.
func (d *Decoder) codec(cid []byte) (*codec, error) {
	id, err := ConfigID(cid)
	if err != nil {
		return nil, err
	}
	if id == UnroutableConfigID {
		return nil, errReserved
	}
	k := d.codecs[id]
	if k == nil {
		return nil, errUnknownConfig
	}
	if len(cid) < 1+k.plen {
		return nil, errTooShort
	}
	return k, nil
}
