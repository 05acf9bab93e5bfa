package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"testing"
)

func tpTestPreferredAddress() PreferredAddress {
	return PreferredAddress{
		IPv4:                netip.MustParseAddrPort("192.0.2.1:443"),
		IPv6:                netip.MustParseAddrPort("[2001:db8::1]:4433"),
		ConnectionID:        NewConnectionID([]byte{0xaa, 0xbb, 0xcc, 0xdd}),
		StatelessResetToken: StatelessResetToken{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	}
}

func TestPreferredAddressEncoding(t *testing.T) {
	a := tpTestPreferredAddress()
	want, _ := hex.DecodeString("c0000201" + "01bb" +
		"20010db8000000000000000000000001" + "1151" +
		"04" + "aabbccdd" +
		"000102030405060708090a0b0c0d0e0f")
	got := a.Append(nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("Append = %x, want %x", got, want)
	}
	if a.EncodedLen() != len(want) {
		t.Fatalf("EncodedLen = %d, want %d", a.EncodedLen(), len(want))
	}
	b, err := ParsePreferredAddress(want)
	if err != nil || b != a {
		t.Fatalf("ParsePreferredAddress = %+v, %v; want %+v", b, err, a)
	}
}

func TestPreferredAddressRoundTrip(t *testing.T) {
	maxCID := NewConnectionID(bytes.Repeat([]byte{0x5a}, MaxConnectionIDLen))
	tests := []PreferredAddress{
		tpTestPreferredAddress(),
		// Only one family: the other is the zero AddrPort (encoded as
		// 0.0.0.0:0 or [::]:0).
		{IPv4: netip.MustParseAddrPort("203.0.113.7:65535"), ConnectionID: maxCID},
		{IPv6: netip.MustParseAddrPort("[::1]:1"), ConnectionID: NewConnectionID([]byte{1})},
		// An IPv4-mapped IPv6 address stays an IPv6 address.
		{IPv6: netip.MustParseAddrPort("[::ffff:192.0.2.1]:80"), ConnectionID: NewConnectionID([]byte{1})},
		// Odd but not invalid: unspecified address with a port, and the
		// reverse.
		{
			IPv4:                netip.MustParseAddrPort("0.0.0.0:7"),
			IPv6:                netip.AddrPortFrom(netip.MustParseAddr("2001:db8::2"), 0),
			ConnectionID:        NewConnectionID([]byte{1, 2}),
			StatelessResetToken: StatelessResetToken{0xff, 15: 0xff},
		},
	}
	for _, a := range tests {
		enc := a.Append(nil)
		if len(enc) != a.EncodedLen() {
			t.Errorf("%+v: EncodedLen = %d, Append wrote %d", a, a.EncodedLen(), len(enc))
		}
		b, err := ParsePreferredAddress(enc)
		if err != nil {
			t.Errorf("%+v: %v", a, err)
			continue
		}
		if b != a {
			t.Errorf("round trip: got %+v, want %+v", b, a)
		}
	}
}

func TestPreferredAddressUnsetFamilyEncoding(t *testing.T) {
	// The zero AddrPort and an explicit 0.0.0.0:0 both encode as zeros and
	// parse back as the zero AddrPort.
	a := PreferredAddress{IPv4: netip.MustParseAddrPort("0.0.0.0:0"), IPv6: netip.MustParseAddrPort("[::]:0"), ConnectionID: NewConnectionID([]byte{9})}
	enc := a.Append(nil)
	if !bytes.Equal(enc[:24], make([]byte, 24)) {
		t.Fatalf("addresses encoded as %x, want zeros", enc[:24])
	}
	b, err := ParsePreferredAddress(enc)
	if err != nil || b.IPv4.IsValid() || b.IPv6.IsValid() {
		t.Fatalf("parsed %+v, %v; want zero addresses", b, err)
	}
	// An IPv4-mapped address in the IPv4 field is written as IPv4.
	a.IPv4 = netip.MustParseAddrPort("[::ffff:198.51.100.1]:53")
	enc = a.Append(nil)
	if !bytes.Equal(enc[:6], []byte{198, 51, 100, 1, 0, 53}) {
		t.Fatalf("IPv4-mapped address encoded as %x", enc[:6])
	}
}

func TestPreferredAddressErrors(t *testing.T) {
	valid := tpTestPreferredAddress().Append(nil)
	for i := range len(valid) {
		if _, err := ParsePreferredAddress(valid[:i]); !tpIsParamError(err) {
			t.Errorf("prefix of %d bytes: err = %v, want TRANSPORT_PARAMETER_ERROR", i, err)
		}
	}
	tests := map[string][]byte{
		"trailing byte":  append(bytes.Clone(valid), 0),
		"empty CID":      PreferredAddress{IPv4: netip.MustParseAddrPort("192.0.2.1:1")}.Append(nil),
		"CID of 21":      append(append(bytes.Clone(valid[:24]), 21), make([]byte, 21+16)...),
		"CID length 255": append(append(bytes.Clone(valid[:24]), 255), make([]byte, 255+16)...),
	}
	for name, b := range tests {
		if _, err := ParsePreferredAddress(b); !tpIsParamError(err) {
			t.Errorf("%s: err = %v, want TRANSPORT_PARAMETER_ERROR", name, err)
		}
	}
}

func TestPreferredAddressAppendPanicsOnWrongFamily(t *testing.T) {
	for _, a := range []PreferredAddress{
		{IPv4: netip.MustParseAddrPort("[2001:db8::1]:1")},
		{IPv6: netip.MustParseAddrPort("192.0.2.1:1")},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Append(%+v) did not panic", a)
				}
			}()
			a.Append(nil)
		}()
	}
}

func TestPreferredAddressAllocs(t *testing.T) {
	a := tpTestPreferredAddress()
	buf := make([]byte, 0, 128)
	n := testing.AllocsPerRun(100, func() {
		enc := a.Append(buf[:0])
		if _, err := ParsePreferredAddress(enc); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("allocs = %v, want 0", n)
	}
}

// tpIsParamError reports whether err is a *TransportError with code
// TRANSPORT_PARAMETER_ERROR.
func tpIsParamError(err error) bool {
	var te *TransportError
	return errors.As(err, &te) && te.Code == TransportParameterError && te.FrameType == 0
}
