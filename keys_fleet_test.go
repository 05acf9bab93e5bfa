package quic

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

// keyedServer is one server of a simulated fleet: a Transport listening
// on its own in-memory link to the client, which dials it from a
// Transport of its own.
type keyedServer struct {
	p      *connPair
	st, ct *Transport
	l      *Listener
	addr   net.Addr
}

func newKeyedServer(t *testing.T, keys *KeySchedule, stls *tls.Config, retry bool) *keyedServer {
	t.Helper()
	p := newConnPair(t, connPairOpts{Mem: true, NoDial: true, Retry: retry,
		TLS:             func(testing.TB) (_, _ *tls.Config) { return nil, stls },
		ServerTransport: func(tr *Transport) { tr.Keys = keys }})
	l := p.listener
	f := &keyedServer{p: p, st: p.serverT, ct: p.clientT, l: l, addr: p.serverT.Conn.LocalAddr()}
	go func() {
		for {
			c, err := l.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				s, err := c.AcceptStream(context.Background())
				if err == nil {
					io.Copy(s, s)
					s.CloseWrite()
				}
			}()
		}
	}()
	return f
}

// connect makes one connection to f, echoes a message, waits for the
// session ticket and the NEW_TOKEN frame, closes it and lets the closing
// period end; it returns the connection's TLS state.
func (f *keyedServer) connect(t *testing.T, ctls *tls.Config, conf *Config) tls.ConnectionState {
	t.Helper()
	c, err := f.ct.Dial(context.Background(), f.addr, ctls, conf)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.OpenStreamSync(context.Background())
	s.Write([]byte("hello"))
	s.CloseWrite()
	if b, err := io.ReadAll(s); err != nil || string(b) != "hello" {
		t.Fatalf("echo %q, %v", b, err)
	}
	time.Sleep(time.Second) // the ticket and the token arrive
	cs := c.ConnectionState().TLS
	c.CloseWithError(0, "")
	time.Sleep(10 * time.Second)
	return cs
}

func (f *keyedServer) close() { f.p.closeAfter(0, 0) }

// TestSynctestKeyScheduleRotation runs two servers sharing one master
// secret in simulated time: a session ticket and an address token issued
// by one are accepted by the other, in the period they were issued in and
// the next one, and refused two periods later, when the client does a
// full handshake and is sent a Retry, and still connects.
func TestSynctestKeyScheduleRotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const period = time.Hour
		secret := bytes.Repeat([]byte{0x42}, 32)
		keysA, _ := NewKeySchedule(secret, period)
		keysB, _ := NewKeySchedule(secret, period)
		ctls, stls, _ := resumeTLS(t)
		a := newKeyedServer(t, keysA, stls, true)
		b := newKeyedServer(t, keysB, stls, true)
		defer a.close()
		defer b.close()
		conf := &Config{TokenStore: NewLRUTokenStore(4, 4)}
		time.Sleep(period / 2) // mid-period

		// The client's first flight may take two datagrams (a post-quantum
		// key share), each answered with a Retry: count connections that
		// were sent one.
		retries := func() uint64 { return a.st.Stats().RetriesSent + b.st.Stats().RetriesSent }
		connect := func(f *keyedServer) (resumed, retried bool) {
			before := retries()
			cs := f.connect(t, ctls, conf)
			return cs.DidResume, retries() > before
		}
		if resumed, retried := connect(a); resumed || !retried {
			t.Fatalf("first connection: resumed %v, Retry %v", resumed, retried)
		}
		// Same period, the other server: the ticket and the token work.
		if resumed, retried := connect(b); !resumed || retried {
			t.Errorf("B in the same period: resumed %v, Retry %v", resumed, retried)
		}
		// The next period: B's ticket and token are from the previous
		// period and still accepted, by A.
		time.Sleep(period)
		if resumed, retried := connect(a); !resumed || retried {
			t.Errorf("A one period later: resumed %v, Retry %v", resumed, retried)
		}
		// Two periods after the last ticket and token were issued: both
		// are refused, and the handshake goes on without them.
		time.Sleep(2 * period)
		if resumed, retried := connect(b); resumed || !retried {
			t.Errorf("B two periods later: resumed %v, Retry %v", resumed, retried)
		}
		// That connection got a fresh ticket and token: both work again.
		if resumed, retried := connect(a); !resumed || retried {
			t.Errorf("after the fresh ticket: resumed %v, Retry %v", resumed, retried)
		}
	})
}

// TestSynctestKeyScheduleOtherSecret checks that a server with another
// master secret resumes nothing and accepts no token.
func TestSynctestKeyScheduleOtherSecret(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k1, _ := NewKeySchedule(bytes.Repeat([]byte{1}, 32), 0)
		k2, _ := NewKeySchedule(bytes.Repeat([]byte{2}, 32), 0)
		ctls, stls, _ := resumeTLS(t)
		a := newKeyedServer(t, k1, stls, true)
		b := newKeyedServer(t, k2, stls, true)
		defer a.close()
		defer b.close()
		conf := &Config{TokenStore: NewLRUTokenStore(4, 4)}
		a.connect(t, ctls, conf)
		if cs := b.connect(t, ctls, conf); cs.DidResume || b.st.Stats().RetriesSent == 0 {
			t.Errorf("other secret: resumed %v, %d Retry", cs.DidResume, b.st.Stats().RetriesSent)
		}
	})
}

// TestKeyScheduleDerivation checks that the keys depend on the secret
// and the purpose, that the stateless reset key is stable, and the
// secret file formats.
func TestKeyScheduleDerivation(t *testing.T) {
	s := bytes.Repeat([]byte{7}, 32)
	k1, err := NewKeySchedule(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := NewKeySchedule(s, time.Minute)
	if !bytes.Equal(k1.StatelessResetKey(), k2.StatelessResetKey()) || k1.Period() != DefaultKeyRotationPeriod {
		t.Error("reset key depends on the period, or wrong default period")
	}
	if bytes.Equal(k1.tickets.Key(5), k1.tokens.Key(5)) || bytes.Equal(k1.tickets.Key(5), k1.tickets.Key(6)) {
		t.Error("ticket and token keys, or two epochs, share a key")
	}
	if _, err := NewKeySchedule(s[:31], 0); err == nil {
		t.Error("accepted a 31-byte secret")
	}
	dir := t.TempDir()
	hexFile := filepath.Join(dir, "hex")
	os.WriteFile(hexFile, []byte("0707070707070707070707070707070707070707070707070707070707070707\n"), 0o600)
	k3, err := LoadKeySchedule(hexFile, 0)
	if err != nil || !bytes.Equal(k3.StatelessResetKey(), k1.StatelessResetKey()) {
		t.Errorf("hex secret file: %v", err)
	}
	rawFile := filepath.Join(dir, "raw")
	os.WriteFile(rawFile, s, 0o600)
	if k4, err := LoadKeySchedule(rawFile, 0); err != nil || !bytes.Equal(k4.StatelessResetKey(), k1.StatelessResetKey()) {
		t.Errorf("raw secret file: %v", err)
	}
	os.WriteFile(rawFile, []byte("short"), 0o600)
	if _, err := LoadKeySchedule(rawFile, 0); err == nil {
		t.Error("accepted a short secret file")
	}
}
