package quic

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// replayServer is a server of a simulated fleet that allows 0-RTT and
// answers each stream with "0rtt:" or "1rtt:" and the request, and the
// client Transport that reaches it over its own in-memory link.
type replayServer struct {
	p        *connPair
	st, ct   *Transport
	l        *Listener
	addr     net.Addr
	requests atomic.Int64
}

func newReplayServer(t *testing.T, keys *KeySchedule, stls *tls.Config, conf *Config) *replayServer {
	t.Helper()
	p := newConnPair(t, connPairOpts{Mem: true, NoDial: true, Early: true, Server: conf,
		TLS:             func(testing.TB) (_, _ *tls.Config) { return nil, stls },
		ServerTransport: func(tr *Transport) { tr.Keys = keys }})
	l := p.listener
	r := &replayServer{p: p, st: p.serverT, ct: p.clientT, l: l, addr: p.serverT.Conn.LocalAddr()}
	go func() {
		for {
			c, err := l.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := c.AcceptStream(context.Background())
					if err != nil {
						return
					}
					req, _ := io.ReadAll(s)
					r.requests.Add(1)
					early := "1rtt:"
					if s.ReceivedEarlyData() {
						early = "0rtt:"
					}
					s.Write(append([]byte(early), req...))
					s.CloseWrite()
				}
			}()
		}
	}()
	return r
}

// request dials r early with ctls, sends req at once (in 0-RTT when the
// session allows) and returns the answer and the connection.
func (r *replayServer) request(t *testing.T, ctls *tls.Config, req string) (string, *Conn) {
	t.Helper()
	c, err := r.ct.DialEarly(context.Background(), r.addr, ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.OpenStreamSync(context.Background()) // at once with a 0-RTT session
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte(req))
	s.CloseWrite()
	b, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the session ticket arrives
	return string(b), c
}

func (r *replayServer) close() { r.p.closeAfter(0, 0) }

// sessionCopies is a ClientSessionCache that hands every session it is
// given to copies made later, as an attacker holding a client's ticket
// would use it.
type sessionCopies struct {
	tls.ClientSessionCache
	mu      sync.Mutex
	key     string
	session *tls.ClientSessionState
}

func (s *sessionCopies) Put(key string, cs *tls.ClientSessionState) {
	s.mu.Lock()
	s.key, s.session = key, cs
	s.mu.Unlock()
	s.ClientSessionCache.Put(key, cs)
}

// copy returns a client tls.Config whose cache holds the last session.
func (s *sessionCopies) copy(ctls *tls.Config) *tls.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := ctls.Clone()
	c.ClientSessionCache = tls.NewLRUClientSessionCache(1)
	c.ClientSessionCache.Put(s.key, s.session)
	return c
}

func antiReplayTLS(t *testing.T) (ctls, stls *tls.Config, sessions *sessionCopies) {
	ctls, stls = testTLS(t)
	sessions = &sessionCopies{ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	ctls.ClientSessionCache = sessions
	return ctls, stls, sessions
}

// TestSynctestAntiReplayOnceAcrossServers presents one session ticket
// with 0-RTT to two servers sharing a master secret and an anti-replay
// store: the first accepts the 0-RTT request, the second declines 0-RTT
// and serves the request in 1-RTT. Without the store both accept it.
func TestSynctestAntiReplayOnceAcrossServers(t *testing.T) {
	for _, withStore := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			keys, _ := NewKeySchedule(bytes.Repeat([]byte{9}, 32), 0)
			ctls, stls, sessions := antiReplayTLS(t)
			conf := &Config{Allow0RTT: true}
			if withStore {
				conf.AntiReplay = NewAntiReplayCache(0)
			}
			a, b := newReplayServer(t, keys, stls, conf), newReplayServer(t, keys, stls, conf)
			defer a.close()
			defer b.close()
			if got, _ := a.request(t, ctls, "first"); got != "1rtt:first" {
				t.Fatalf("first connection: %q", got)
			}
			// The same ticket, twice: an attacker replaying the client's
			// flight to another server of the fleet presents it again.
			got1, _ := a.request(t, sessions.copy(ctls), "GET /pay")
			got2, _ := b.request(t, sessions.copy(ctls), "GET /pay")
			if !withStore {
				if got1 != "0rtt:GET /pay" || got2 != "0rtt:GET /pay" {
					t.Fatalf("without a store: %q, %q; want both in 0-RTT", got1, got2)
				}
				return
			}
			if got1 != "0rtt:GET /pay" || got2 != "1rtt:GET /pay" {
				t.Fatalf("answers %q, %q; want 0-RTT once, then 1-RTT", got1, got2)
			}
			sa, sb := a.st.Stats(), b.st.Stats()
			if sa.AntiReplayAdmitted != 1 || sb.AntiReplayReplayed != 1 || sb.ZeroRTTRejected != 1 || sa.ZeroRTTAccepted != 1 {
				t.Errorf("A admitted %d, accepted %d; B replayed %d, rejected %d", sa.AntiReplayAdmitted, sa.ZeroRTTAccepted, sb.AntiReplayReplayed, sb.ZeroRTTRejected)
			}
		})
	}
}

// stallingStore never answers before ctx is done.
type stallingStore struct{ calls atomic.Int64 }

func (s *stallingStore) Admit(ctx context.Context, _ []byte, _ time.Duration) (bool, error) {
	s.calls.Add(1)
	<-ctx.Done()
	return false, ctx.Err()
}

// failingStore fails at once, as a store whose server is down.
type failingStore struct{}

func (failingStore) Admit(context.Context, []byte, time.Duration) (bool, error) {
	return false, errors.New("connection refused")
}

// TestSynctestAntiReplayStoreOutage checks that a store that hangs or
// fails costs 0-RTT and nothing else: the handshake goes on in 1-RTT
// after AntiReplayTimeout at most, and the request is served.
func TestSynctestAntiReplayStoreOutage(t *testing.T) {
	for _, store := range []AntiReplay{&stallingStore{}, failingStore{}} {
		synctest.Test(t, func(t *testing.T) {
			ctls, stls, sessions := antiReplayTLS(t)
			const timeout = 200 * time.Millisecond
			a := newReplayServer(t, nil, stls, &Config{Allow0RTT: true, AntiReplay: store, AntiReplayTimeout: timeout})
			defer a.close()
			a.request(t, ctls, "first")
			start := time.Now()
			got, c := a.request(t, sessions.copy(ctls), "GET /")
			if got != "1rtt:GET /" {
				t.Fatalf("answer %q; want the request served in 1-RTT", got)
			}
			// The handshake waited for the store at most timeout: two
			// round trips of 20 ms, plus the wait, plus the second's
			// sleep in request for the ticket.
			if d := c.Stats().HandshakeDuration; d > 2*memOneWayLatency+timeout+10*time.Millisecond {
				t.Errorf("handshake took %v with a %v store timeout", d, timeout)
			}
			if d := time.Since(start); d > time.Second+timeout+100*time.Millisecond {
				t.Errorf("request took %v", d)
			}
			if s, ok := store.(*stallingStore); ok && s.calls.Load() != 1 {
				t.Errorf("store asked %d times", s.calls.Load())
			}
			if st := a.st.Stats(); st.AntiReplayFailures != 1 || st.HandshakesCompleted != 2 || st.HandshakesFailed != 0 {
				t.Errorf("stats: %d failures, %d completed, %d failed", st.AntiReplayFailures, st.HandshakesCompleted, st.HandshakesFailed)
			}
		})
	}
}

// TestSynctestAntiReplayWindow checks that a ticket older than the window
// gets no 0-RTT and is not even asked about, and resumes all the same.
func TestSynctestAntiReplayWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctls, stls, _ := antiReplayTLS(t)
		store := &countingAntiReplay{AntiReplay: NewAntiReplayCache(0)}
		a := newReplayServer(t, nil, stls, &Config{Allow0RTT: true, AntiReplay: store, AntiReplayWindow: time.Minute})
		defer a.close()
		a.request(t, ctls, "first")
		if got, _ := a.request(t, ctls, "fresh"); got != "0rtt:fresh" || store.calls.Load() != 1 {
			t.Fatalf("fresh ticket: %q, %d calls", got, store.calls.Load())
		}
		time.Sleep(2 * time.Minute)
		got, c := a.request(t, ctls, "stale")
		if got != "1rtt:stale" || store.calls.Load() != 1 || !c.ConnectionState().TLS.DidResume {
			t.Errorf("stale ticket: %q, %d calls, resumed %v", got, store.calls.Load(), c.ConnectionState().TLS.DidResume)
		}
		if st := a.st.Stats(); st.AntiReplayTooOld != 1 || st.AntiReplayAdmitted != 1 {
			t.Errorf("stats: too old %d, admitted %d", st.AntiReplayTooOld, st.AntiReplayAdmitted)
		}
	})
}

type countingAntiReplay struct {
	AntiReplay
	calls atomic.Int64
}

func (c *countingAntiReplay) Admit(ctx context.Context, key []byte, ttl time.Duration) (bool, error) {
	c.calls.Add(1)
	return c.AntiReplay.Admit(ctx, key, ttl)
}

// TestAntiReplayCache admits a key once until it expires, and fails
// closed when full.
func TestAntiReplayCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := NewAntiReplayCache(2)
		ctx := context.Background()
		if ok, err := a.Admit(ctx, []byte("k1"), time.Minute); !ok || err != nil {
			t.Fatal("first admit", ok, err)
		}
		if ok, _ := a.Admit(ctx, []byte("k1"), time.Minute); ok {
			t.Fatal("admitted twice")
		}
		a.Admit(ctx, []byte("k2"), time.Hour)
		if ok, err := a.Admit(ctx, []byte("k3"), time.Minute); ok || err != ErrAntiReplayFull {
			t.Fatalf("full cache: %v, %v", ok, err)
		}
		time.Sleep(2 * time.Minute) // k1 expires
		if ok, err := a.Admit(ctx, []byte("k1"), time.Minute); !ok || err != nil {
			t.Fatalf("after expiry: %v, %v", ok, err)
		}
		// Full again (k1, k2): within a second of the last sweep, a full
		// cache refuses without walking its keys, even if one expired.
		if ok, err := a.Admit(ctx, []byte("k4"), time.Minute); ok || err != ErrAntiReplayFull {
			t.Fatalf("full cache: %v, %v", ok, err)
		}
		time.Sleep(61 * time.Second) // k1 expires again; a sweep is due
		if ok, err := a.Admit(ctx, []byte("k4"), time.Minute); !ok || err != nil {
			t.Fatalf("after the next sweep: %v, %v", ok, err)
		}
		if ok, _ := a.Admit(ctx, []byte("k2"), time.Minute); ok {
			t.Fatal("k2 expired early")
		}
	})
}

// TestAntiReplayCacheAdmitAt: the cache keeps a key until ttl after the
// time its caller gives, and reads no clock of its own (dates far from
// today's prove it).
func TestAntiReplayCacheAdmitAt(t *testing.T) {
	a := NewAntiReplayCache(4)
	t0 := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for _, c := range []struct {
		now  time.Time
		want bool
	}{{t0, true}, {t0.Add(59 * time.Second), false}, {t0.Add(time.Minute), true}, {t0.Add(90 * time.Second), false}} {
		ok, err := a.AdmitAt(ctx, c.now, []byte("ticket"), time.Minute)
		if err != nil || ok != c.want {
			t.Fatalf("AdmitAt(%v) = %v, %v; want %v", c.now.Sub(t0), ok, err, c.want)
		}
	}
}
