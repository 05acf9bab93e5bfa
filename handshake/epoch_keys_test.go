package handshake

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestRotatingTokenProtector seals NEW_TOKEN and Retry tokens in one
// epoch and opens them in the epochs around it: the neighbours accept
// them, epochs further away refuse them as invalid.
func TestRotatingTokenProtector(t *testing.T) {
	keys, err := NewEpochKeys(bytes.Repeat([]byte{3}, 32), "token ", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := NewRotatingTokenProtector(keys)
	client := netip.MustParseAddrPort("192.0.2.1:4433")
	t0 := time.Date(2030, 1, 1, 10, 30, 0, 0, time.UTC)
	tok := p.AppendNewToken(nil, t0, client.Addr())
	// A server whose clock is an epoch behind decrypts the token (the key
	// of the next epoch is accepted) and then finds its issue time too
	// far in the future: expired, not invalid.
	for _, c := range []struct {
		at   time.Duration
		want error
	}{{0, nil}, {time.Hour, nil}, {-time.Hour, ErrTokenExpired}, {2 * time.Hour, ErrTokenInvalid}, {-2 * time.Hour, ErrTokenInvalid}} {
		if _, err := p.Open(tok, client, t0.Add(c.at), time.Minute, 100*time.Hour); err != c.want {
			t.Errorf("opened %v later: %v, want %v", c.at, err, c.want)
		}
	}
	// Another secret's protector refuses it.
	other, _ := NewEpochKeys(bytes.Repeat([]byte{4}, 32), "token ", time.Hour)
	if _, err := NewRotatingTokenProtector(other).Open(tok, client, t0, time.Minute, time.Hour); err != ErrTokenInvalid {
		t.Errorf("another secret: %v", err)
	}
}

// TestSessionTicketEpochs wraps a session state in one epoch and unwraps
// it in the epochs around it.
func TestSessionTicketEpochs(t *testing.T) {
	keys, _ := NewEpochKeys(bytes.Repeat([]byte{5}, 32), "ticket ", time.Hour)
	now := time.Date(2030, 1, 1, 10, 30, 0, 0, time.UTC)
	c := &tls.Config{Time: func() time.Time { return now }}
	ConfigureSessionTickets(c, keys)
	ss, err := tls.ParseSessionState(mustSessionBytes(t))
	if err != nil {
		t.Fatal(err)
	}
	ticket, err := c.WrapSession(tls.ConnectionState{}, ss)
	if err != nil {
		t.Fatal(err)
	}
	start := now
	for _, d := range []struct {
		at time.Duration
		ok bool
	}{{0, true}, {time.Hour, true}, {-time.Hour, true}, {2 * time.Hour, false}} {
		now = start.Add(d.at)
		got, err := c.UnwrapSession(ticket, tls.ConnectionState{})
		if err != nil || (got != nil) != d.ok {
			t.Errorf("unwrapped %v later: %v, %v; want ok=%v", d.at, got, err, d.ok)
		}
	}
	now = start
	for _, bad := range [][]byte{nil, ticket[:20], append(bytes.Clone(ticket[:len(ticket)-1]), ticket[len(ticket)-1]^1)} {
		if got, err := c.UnwrapSession(bad, tls.ConnectionState{}); got != nil || err != nil {
			t.Errorf("unwrapped a damaged ticket: %v, %v", got, err)
		}
	}
}

// mustSessionBytes returns the serialized state of a real session, from
// a TLS 1.3 handshake over a pipe whose server captures it when it issues
// its ticket.
func mustSessionBytes(t testing.TB) []byte {
	t.Helper()
	pki := newTestPKI(t)
	stls, ctls := pki.serverTLS().Clone(), pki.clientTLS().Clone()
	stls.MinVersion, ctls.MinVersion = tls.VersionTLS13, tls.VersionTLS13
	ctls.ClientSessionCache = tls.NewLRUClientSessionCache(1)
	got := make(chan []byte, 1)
	stls.WrapSession = func(_ tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		b, err := ss.Bytes()
		select {
		case got <- b:
		default:
		}
		return b, err
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		s := tls.Server(a, stls)
		if s.Handshake() == nil {
			io.Copy(io.Discard, s)
		}
	}()
	c := tls.Client(b, ctls)
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	go c.Read(make([]byte, 1)) // takes in the ticket
	select {
	case s := <-got:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no session ticket issued")
		return nil
	}
}

// FuzzUnwrapSession feeds arbitrary ticket identities, which clients
// choose, to a server's UnwrapSession: never a panic or an error (an
// unusable ticket means a full handshake). That damaged tickets give no
// session is TestSessionTicketEpochs's.
func FuzzUnwrapSession(f *testing.F) {
	keys, _ := NewEpochKeys(bytes.Repeat([]byte{5}, 32), "ticket ", time.Hour)
	now := time.Date(2030, 1, 1, 10, 30, 0, 0, time.UTC)
	c := &tls.Config{Time: func() time.Time { return now }}
	ConfigureSessionTickets(c, keys)
	ss, err := tls.ParseSessionState(mustSessionBytes(f))
	if err != nil {
		f.Fatal(err)
	}
	ticket, _ := c.WrapSession(tls.ConnectionState{}, ss)
	f.Add(ticket)
	f.Add([]byte{})
	f.Add(ticket[:ticketHeaderLen+16])
	f.Fuzz(func(t *testing.T, id []byte) {
		got, err := c.UnwrapSession(id, tls.ConnectionState{})
		if err != nil {
			t.Fatalf("UnwrapSession returned an error: %v", err)
		}
		if got != nil {
			if _, err := got.Bytes(); err != nil {
				t.Fatalf("session from %x does not serialize: %v", id, err)
			}
		}
	})
}
