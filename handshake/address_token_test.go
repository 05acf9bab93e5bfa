package handshake

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

var (
	tokenNow    = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tokenClient = netip.MustParseAddrPort("192.0.2.7:4433")
)

func newTestTokenProtector(t testing.TB, key string) *TokenProtector {
	p, err := NewTokenProtector([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRetryTokenRoundTrip(t *testing.T) {
	p := newTestTokenProtector(t, "fleet key 0123456789abcdef")
	odcid := wire.NewConnectionID([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	rscid := wire.NewConnectionID(bytes.Repeat([]byte{9}, 20))
	tok := p.AppendRetryToken(nil, tokenNow, tokenClient, odcid, rscid)
	if len(tok) > MaxAddressTokenLen || !IsRetryToken(tok) {
		t.Fatalf("token of %d bytes, IsRetryToken %v", len(tok), IsRetryToken(tok))
	}
	got, err := p.Open(tok, tokenClient, tokenNow.Add(time.Second), 10*time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !got.IsRetry || !got.IssuedAt.Equal(tokenNow) || got.OriginalDestConnID != odcid || got.RetrySrcConnID != rscid {
		t.Fatalf("Open = %+v", got)
	}
	// Another server of the fleet with the same key accepts it.
	q := newTestTokenProtector(t, "fleet key 0123456789abcdef")
	if _, err := q.Open(tok, tokenClient, tokenNow, 10*time.Second, time.Hour); err != nil {
		t.Fatalf("same-key server rejected the token: %v", err)
	}
	// Two tokens for the same input differ (random nonce).
	if bytes.Equal(tok, p.AppendRetryToken(nil, tokenNow, tokenClient, odcid, rscid)) {
		t.Fatal("tokens are deterministic")
	}
}

func TestNewTokenRoundTrip(t *testing.T) {
	p := newTestTokenProtector(t, "k")
	tok := p.AppendNewToken([]byte("prefix"), tokenNow, tokenClient.Addr())
	if !bytes.HasPrefix(tok, []byte("prefix")) {
		t.Fatal("AppendNewToken did not append")
	}
	tok = tok[len("prefix"):]
	if IsRetryToken(tok) {
		t.Fatal("NEW_TOKEN token looks like a Retry token")
	}
	// The client comes back from another port: still valid.
	other := netip.AddrPortFrom(tokenClient.Addr(), 5555)
	got, err := p.Open(tok, other, tokenNow.Add(time.Hour), time.Second, 24*time.Hour)
	if err != nil || got.IsRetry || !got.IssuedAt.Equal(tokenNow) {
		t.Fatalf("Open = %+v, %v", got, err)
	}
	// An IPv4-mapped form of the same address is the same address.
	mapped := netip.AddrPortFrom(netip.AddrFrom16(tokenClient.Addr().As16()), 1)
	if _, err := p.Open(tok, mapped, tokenNow, time.Second, time.Hour); err != nil {
		t.Fatalf("IPv4-mapped address rejected: %v", err)
	}
}

func TestTokenRejections(t *testing.T) {
	p := newTestTokenProtector(t, "server key")
	odcid := wire.NewConnectionID([]byte{1, 2, 3, 4})
	retry := p.AppendRetryToken(nil, tokenNow, tokenClient, odcid, odcid)
	newTok := p.AppendNewToken(nil, tokenNow, tokenClient.Addr())
	open := func(tok []byte, client netip.AddrPort, now time.Time) error {
		_, err := p.Open(tok, client, now, 10*time.Second, time.Hour)
		return err
	}
	for _, tc := range []struct {
		name string
		err  error
		got  error
	}{
		{"retry from other port", ErrTokenInvalid, open(retry, netip.AddrPortFrom(tokenClient.Addr(), 1), tokenNow)},
		{"retry from other address", ErrTokenInvalid, open(retry, netip.MustParseAddrPort("192.0.2.8:4433"), tokenNow)},
		{"new token from other address", ErrTokenInvalid, open(newTok, netip.MustParseAddrPort("[2001:db8::1]:4433"), tokenNow)},
		{"retry expired", ErrTokenExpired, open(retry, tokenClient, tokenNow.Add(11*time.Second))},
		{"new token expired", ErrTokenExpired, open(newTok, tokenClient, tokenNow.Add(61*time.Minute))},
		{"issued in the future", ErrTokenExpired, open(retry, tokenClient, tokenNow.Add(-time.Hour))},
		{"other key", ErrTokenInvalid, func() error {
			_, err := newTestTokenProtector(t, "other key").Open(retry, tokenClient, tokenNow, time.Hour, time.Hour)
			return err
		}()},
		{"kind swapped", ErrTokenInvalid, open(append(tokenKindNewToken[:], retry[tokenKindLen:]...), tokenClient, tokenNow)},
		{"empty", ErrTokenInvalid, open(nil, tokenClient, tokenNow)},
		{"too long", ErrTokenInvalid, open(make([]byte, MaxAddressTokenLen+1), tokenClient, tokenNow)},
	} {
		if !errors.Is(tc.got, tc.err) {
			t.Errorf("%s: err = %v; want %v", tc.name, tc.got, tc.err)
		}
	}
	// Any flipped bit invalidates the token.
	for i := range len(retry) * 8 {
		tok := append([]byte(nil), retry...)
		tok[i/8] ^= 1 << (i % 8)
		if err := open(tok, tokenClient, tokenNow); err == nil {
			t.Fatalf("token with bit %d flipped accepted", i)
		}
	}
}

func TestTokenOpenAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector; `make test` runs this without -race")
	}
	p := newTestTokenProtector(t, "k")
	garbage := bytes.Repeat([]byte{0x42}, 40)
	if a := testing.AllocsPerRun(100, func() { p.Open(garbage, tokenClient, tokenNow, time.Second, time.Second) }); a != 0 {
		t.Errorf("rejecting a malformed token allocated %v times", a)
	}
	tok := p.AppendNewToken(nil, tokenNow, tokenClient.Addr())
	if a := testing.AllocsPerRun(100, func() { p.Open(tok, tokenClient, tokenNow, time.Second, time.Hour) }); a != 0 {
		t.Errorf("opening a token allocated %v times", a)
	}
}

// FuzzOpenToken feeds arbitrary bytes to Open: it must never panic, and
// whatever it accepts must be a token this key issued.
func FuzzOpenToken(f *testing.F) {
	p := newTestTokenProtector(f, "fuzz key")
	f.Add(p.AppendNewToken(nil, tokenNow, tokenClient.Addr()))
	f.Add(p.AppendRetryToken(nil, tokenNow, tokenClient, wire.NewConnectionID([]byte{1}), wire.ConnectionID{}))
	f.Add(tokenKindRetry[:])
	f.Fuzz(func(t *testing.T, tok []byte) {
		got, err := p.Open(tok, tokenClient, tokenNow, time.Hour, time.Hour)
		if err == nil && !got.IssuedAt.Equal(tokenNow) {
			t.Fatalf("accepted a token not issued by this key: %+v", got)
		}
	})
}

func BenchmarkOpenNewToken(b *testing.B) {
	p := newTestTokenProtector(b, "k")
	tok := p.AppendNewToken(nil, tokenNow, tokenClient.Addr())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Open(tok, tokenClient, tokenNow, time.Second, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}

// A token of another server's (another implementation's) is taken for one
// of our Retry tokens only if its first four bytes are those of ours, not
// merely its first byte: of the tokens starting with 'R', one in 2^24.
func TestIsRetryTokenForeign(t *testing.T) {
	p := newTestTokenProtector(t, "k")
	if !IsRetryToken(p.AppendRetryToken(nil, tokenNow, tokenClient, wire.NewConnectionID([]byte{1}), wire.ConnectionID{})) {
		t.Fatal("our Retry token not recognised")
	}
	if IsRetryToken(p.AppendNewToken(nil, tokenNow, tokenClient.Addr())) {
		t.Fatal("a NEW_TOKEN token taken for a Retry token")
	}
	foreign := bytes.Repeat([]byte{0x33}, 40)
	for b := range 256 {
		foreign[0] = byte(b)
		if IsRetryToken(foreign) {
			t.Fatalf("a foreign token starting with %#x taken for a Retry token", b)
		}
	}
}
