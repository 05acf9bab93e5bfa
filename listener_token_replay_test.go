package quic

import (
	"context"
	"sync"
	"testing"
	"time"
)

// replayTokenStore hands out the same token to every connection attempt
// once it has one, as a client replaying it (or an attacker that captured
// it from an Initial packet and spoofs the client's address) would.
type replayTokenStore struct {
	mu  sync.Mutex
	tok []byte
}

func (s *replayTokenStore) Get(string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tok
}

func (s *replayTokenStore) Put(_ string, tok []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok == nil {
		s.tok = append([]byte(nil), tok...)
	}
}

// "Attackers could replay tokens to use servers as amplifiers in DDoS
// attacks. To protect against such attacks, servers MUST ensure that
// replay of tokens is prevented or limited. ... Tokens that are provided
// in NEW_TOKEN frames (Section 19.7) need to be valid for longer but
// SHOULD NOT be accepted multiple times." (RFC 9000, Section 8.1.4) One
// NEW_TOKEN token validates the address of one connection attempt; the
// attempts that present it again are treated as unvalidated: with a
// server that validates every unvalidated address, they get a Retry.
func TestUDPNewTokenSingleUse(t *testing.T) {
	p := newConnPair(t, connPairOpts{NoDial: true, Retry: true})
	tr, ctr, l, ctls := p.serverT, p.clientT, p.listener, p.ctls
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for {
			if _, err := l.Accept(ctx); err != nil {
				return
			}
		}
	}()
	store := &replayTokenStore{}
	cfg := &Config{TokenStore: store}
	c1, err := ctr.Dial(ctx, l.Addr(), ctls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pathPollUntil(t, "a NEW_TOKEN token", func() bool { return store.Get("") != nil })
	c1.CloseWithError(0, "")
	var validated []int
	for i := range 10 {
		c, err := ctr.Dial(ctx, l.Addr(), ctls, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !c.state.hasRetried {
			validated = append(validated, i)
		}
		c.CloseWithError(0, "")
	}
	if len(validated) != 1 || validated[0] != 0 {
		t.Errorf("attempts %v of 10 presenting the same token were taken as validated, want [0]", validated)
	}
	// A ClientHello may take two Initial datagrams, each refused.
	if n := tr.Stats().TokensReplayed; n < 9 || n > 18 {
		t.Errorf("TokensReplayed = %d, want 9 to 18", n)
	}
}

// A token the server did not make (from another server that answered at
// this name before, of another implementation) is ignored: "If the token
// is invalid, the server SHOULD proceed as if the client did not have a
// validated address" (RFC 9000, Section 8.1.3). Only a token that is ours
// and a Retry token gets INVALID_TOKEN (Section 8.1.2): one whose first
// byte happens to be that of our Retry tokens (1 in 256 foreign tokens)
// must not.
func TestUDPForeignTokenProceeds(t *testing.T) {
	p := newConnPair(t, connPairOpts{NoDial: true})
	ctr, l, ctls := p.clientT, p.listener, p.ctls
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for {
			if _, err := l.Accept(ctx); err != nil {
				return
			}
		}
	}()
	for _, first := range []byte{0x52, 0x4e, 0x00, 0xff} {
		foreign := make([]byte, 57)
		for i := range foreign {
			foreign[i] = byte(i*31 + int(first))
		}
		foreign[0] = first
		store := &replayTokenStore{tok: foreign}
		c, err := ctr.Dial(ctx, l.Addr(), ctls, &Config{TokenStore: store})
		if err != nil {
			t.Fatalf("a foreign token starting with %#x: %v", first, err)
		}
		c.CloseWithError(0, "")
	}
}
