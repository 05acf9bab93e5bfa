package quiclb

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"fmt"
	"math/big"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeWith builds the connection ID of server ID sid and nonce with
// configuration c, as a Generator does, but with a chosen nonce.
func encodeWith(t testing.TB, c Config, sid, nonce []byte) []byte {
	t.Helper()
	k, err := newCodec(c)
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte{c.firstOctet(0)}, sid...)
	b = append(b, nonce...)
	k.encrypt(b[1:], new(scratch))
	return b
}

// TestFourPassExample follows the example of Section 5.4.2.4 step by step.
func TestFourPassExample(t *testing.T) {
	key := unhex(t, "fdf726a9893ec05c0632d3956680baf0")
	c := Config{ID: 0, ServerIDLen: 3, NonceLen: 4, Key: key}
	k, err := newCodec(c)
	if err != nil {
		t.Fatal(err)
	}
	s := new(scratch)
	h := &s.h
	h.split(unhex(t, "31441a9c69c275")) // steps 1 and 2
	check := func(step string, got []byte, want string) {
		t.Helper()
		if hex.EncodeToString(got) != want {
			t.Errorf("%s: got %x, want %s", step, got, want)
		}
	}
	check("step 2 left_0", h.left[:h.n], "31441a90")
	check("step 2 right_0", h.right[:h.n], "0c69c275")
	block, _ := aes.NewCipher(key)
	aesOut := func(in string) string {
		var out [16]byte
		block.Encrypt(out[:], unhex(t, in))
		return hex.EncodeToString(out[:])
	}
	// The draft's AES inputs and outputs of each pass.
	for _, p := range []struct{ in, out string }{
		{"31441a90000000000000000000000701", "a255dd8cdacf01948d3a848c3c7fee23"},
		{"0e3c1ff9000000000000000000000702", "e5e452cb9e1bedb0b2bf830506bf4c4e"},
		{"d4a04850000000000000000000000703", "b7821ab3024fed0913b6a04d18e3216f"},
		{"09be054a000000000000000000000704", "b334357cfdf81e3fafe180154eaf7378"},
	} {
		if got := aesOut(p.in); got != p.out {
			t.Errorf("AES(%s) = %s, want %s", p.in, got, p.out)
		}
	}
	k.round(s, &h.right, &h.left, 1)
	check("step 4 right_1", h.right[:h.n], "ae3c1ff9")
	h.clearRight()
	check("step 5 right_1", h.right[:h.n], "0e3c1ff9")
	k.round(s, &h.left, &h.right, 2)
	check("step 6 left_1", h.left[:h.n], "d4a0485b")
	h.clearLeft()
	check("step 7 left_1", h.left[:h.n], "d4a04850")
	k.round(s, &h.right, &h.left, 3)
	check("step 8 right_2", h.right[:h.n], "b9be054a")
	h.clearRight()
	check("step 9 right_2", h.right[:h.n], "09be054a")
	k.round(s, &h.left, &h.right, 4)
	// Step 10 reads "left_2 = 0xd4a04850 ^ 0xb3e4357c = 0x67947d2c": the
	// second operand is a typo for the first four bytes of step 10's AES
	// output, 0xb334357c (checked above). 0xd4a04850 ^ 0xb3e4357c would be
	// 0x67447d2c; the draft's result, 0x67947d2c, is the XOR with
	// 0xb334357c, and the final connection ID agrees with it.
	check("step 10 left_2", h.left[:h.n], "67947d2c")
	if x := fmt.Sprintf("%08x", 0xd4a04850^0xb3e4357c); x != "67447d2c" {
		t.Errorf("typo check: %s", x)
	}
	h.clearLeft()
	check("step 11 left_2", h.left[:h.n], "67947d20")
	out := make([]byte, 7)
	h.join(out)
	check("step 12 cid", append([]byte{c.firstOctet(0)}, out...), "0767947d29be054a")

	// The whole algorithm, both ways.
	cid := encodeWith(t, c, unhex(t, "31441a"), unhex(t, "9c69c275"))
	check("encode", cid, "0767947d29be054a")
	d, _ := NewDecoder(c)
	pt, err := d.Plaintext(nil, cid)
	if err != nil {
		t.Fatal(err)
	}
	check("decode", pt, "31441a9c69c275")
}

// TestFourPassDraftErrata shows that Section 5.5.2's pseudocode, taken
// literally, does not invert the encryption for odd lengths: after
// computing right_1 it clears "the first bits" of left_1 instead of
// right_1. left_1's first bits are data, and right_1 keeps the four
// padding bits the encryption cleared, which then enter the next AES
// input. Decoding the example of Section 5.4.2.4 that way gives a wrong
// server ID; clearing right_1, as the encryption does in step 5, gives
// the right one.
func TestFourPassDraftErrata(t *testing.T) {
	key := unhex(t, "fdf726a9893ec05c0632d3956680baf0")
	c := Config{ServerIDLen: 3, NonceLen: 4, Key: key}
	k, _ := newCodec(c)
	literal := func(ct []byte) []byte {
		s := new(scratch)
		h := &s.h
		h.split(ct)
		k.round(s, &h.left, &h.right, 4)
		h.clearLeft()
		k.round(s, &h.right, &h.left, 3)
		h.left[0] &= 0x0f // "clear_first_bits(left_1, 4)", as written
		k.round(s, &h.left, &h.right, 2)
		h.clearLeft()
		k.round(s, &h.right, &h.left, 1)
		h.clearRight()
		out := make([]byte, len(ct))
		h.join(out)
		return out
	}
	ct := unhex(t, "67947d29be054a")
	if got := literal(ct); bytes.Equal(got[:3], unhex(t, "31441a")) {
		t.Errorf("the draft's literal pseudocode recovered the server ID (%x); the erratum note is wrong", got)
	}
	got := append([]byte(nil), ct...)
	k.decrypt(got, true, new(scratch))
	if !bytes.Equal(got, unhex(t, "31441a9c69c275")) {
		t.Errorf("decrypt = %x, want 31441a9c69c275", got)
	}
}

// vector is one row of Appendix B.
type vector struct {
	cr         uint8
	sid, nonce string
	cid        string
}

// TestVectorsUnencrypted checks Appendix B.1 byte for byte: "In all
// cases, the server is configured to encode the CID length."
func TestVectorsUnencrypted(t *testing.T) {
	for _, v := range []vector{
		{0, "c4605e", "4504cc4f", "07c4605e4504cc4f"},
		// The draft prints this row as "1 350d28b420 3487d970b
		// 20a350d28b4203487d970b". Its nonce has 9 hex digits and so is
		// not a whole number of bytes: it is 0x03487d970b (5 bytes)
		// printed without its leading zero, which the connection ID's
		// length requires (the first octet encodes 10 = 5 + 5 bytes after
		// it). The connection ID is the same kind of rendering: the
		// concatenation of 0x20 (config rotation 1), 0xa (length 10), the
		// server ID and the nonce, each in hexadecimal without leading
		// zeros (checked below). Its bytes are 2a 350d28b420 03487d970b.
		{1, "350d28b420", "03487d970b", "2a350d28b42003487d970b"},
	} {
		testVector(t, v, nil)
	}
	sid, nonce := new(big.Int).SetBytes(unhex(t, "350d28b420")), new(big.Int).SetBytes(unhex(t, "03487d970b"))
	if s := fmt.Sprintf("%x%x%x%x", 1<<5, 10, sid, nonce); s != "20a350d28b4203487d970b" {
		t.Errorf("the draft's rendering of row 2 is not explained: %s", s)
	}
}

// TestVectorsEncrypted checks Appendix B.2 byte for byte: row 1 uses the
// four-pass algorithm with an odd length, row 2 the four-pass one with a
// server ID longer than the nonce (the fourth decryption pass), row 3 the
// single-pass special case and row 4 the four-pass one with an even
// length and a server ID as long as the nonce.
func TestVectorsEncrypted(t *testing.T) {
	key := unhex(t, "8f95f09245765f80256934e50c66207f")
	for _, v := range []vector{
		{0, "ed793a", "ee080dbf", "0720b1d07b359d3c"},
		{1, "ed793a51d49b8f5fab65", "ee080dbf48", "2fcc381bc74cb4fbad2823a3d1f8fed2"},
		{2, "ed793a51d49b8f5f", "ee080dbf48c0d1e5", "504dd2d05a7b0de9b2b9907afb5ecf8cc3"},
		// The draft's first octet for this row is 0x12, which is config
		// rotation 0 with length 18, though the row is labelled config
		// rotation 3: with 3 it is 0x72 (0b011_10010). The 18 bytes
		// after it are the draft's, byte for byte.
		{3, "ed793a51d49b8f5fab", "ee080dbf48c0d1e55d", "725779c9cc86beb3a3a4a3ca96fce4bfe0cdbc"},
	} {
		testVector(t, v, key)
	}
	c := Config{ID: 3, ServerIDLen: 9, NonceLen: 9, Key: key}
	cid := encodeWith(t, c, unhex(t, "ed793a51d49b8f5fab"), unhex(t, "ee080dbf48c0d1e55d"))
	if got := hex.EncodeToString(cid[1:]); got != "5779c9cc86beb3a3a4a3ca96fce4bfe0cdbc" {
		t.Errorf("row 4 after the first octet: %s", got)
	}
}

func testVector(t *testing.T, v vector, key []byte) {
	t.Helper()
	sid, nonce := unhex(t, v.sid), unhex(t, v.nonce)
	c := Config{ID: v.cr, ServerIDLen: len(sid), NonceLen: len(nonce), Key: key}
	if got := hex.EncodeToString(encodeWith(t, c, sid, nonce)); got != v.cid {
		t.Errorf("config %d: encode(%s, %s) = %s, want %s", v.cr, v.sid, v.nonce, got, v.cid)
	}
	d, err := NewDecoder(c)
	if err != nil {
		t.Fatal(err)
	}
	cid := unhex(t, v.cid)
	got, err := d.ServerID(nil, cid)
	if err != nil || !bytes.Equal(got, sid) {
		t.Errorf("config %d: ServerID(%s) = %x, %v; want %s", v.cr, v.cid, got, err, v.sid)
	}
	pt, err := d.Plaintext(nil, cid)
	if err != nil || !bytes.Equal(pt, append(sid, nonce...)) {
		t.Errorf("config %d: Plaintext(%s) = %x, %v; want %s%s", v.cr, v.cid, pt, err, v.sid, v.nonce)
	}
}
