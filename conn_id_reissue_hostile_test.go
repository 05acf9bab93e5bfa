package quic

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// repeatConnIDGenerator alternates between fresh IDs and one fixed ID,
// as a load balancer's encoder with few nonces might offer an ID again:
// once the connection's peer retired the fixed ID, the generator keeps
// offering it.
type repeatConnIDGenerator struct {
	mu    sync.Mutex
	calls int
}

func (g *repeatConnIDGenerator) ConnectionIDLen() int { return 8 }

func (g *repeatConnIDGenerator) GenerateConnectionID() (ConnectionID, error) {
	g.mu.Lock()
	k := g.calls
	g.calls++
	g.mu.Unlock()
	if k%2 == 1 {
		return wire.NewConnectionID([]byte{0xc1, 0xd0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), nil
	}
	return wire.NewConnectionID([]byte{0xc1, 0xd0, 0, 0, 0, 0, byte(k >> 8), byte(k)}), nil
}

// A server whose generator returns IDs the connection issued before and the
// client retired (migrations) must not issue them again: "the same
// connection ID MUST NOT be issued more than once on the same connection"
// (RFC 9000, Section 5.1), and ConnectionIDGenerator's doc promises "A
// connection never issues the same ID twice". The client's tracer sees
// every NEW_CONNECTION_ID frame the server sends.
func TestUDPRetiredConnIDNotReissued(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The fixed ID gets sequence number 1; the client's migrations
	// retire it, and the generator offers it again at every other call.
	ts := &Transport{Conn: pathListenUDP(t), ConnectionIDGenerator: &repeatConnIDGenerator{}}
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)

	var mu sync.Mutex
	seqOf := make(map[ConnectionID]uint64)
	var dups []string
	tracer := func(context.Context, bool, ConnectionID) *Tracer {
		return &Tracer{PacketReceived: func(p PacketInfo) {
			b := p.Payload
			var f wire.Frame
			for len(b) > 0 {
				n, err := wire.ParseFrame(b, &f, 0)
				if err != nil {
					return
				}
				b = b[n:]
				if f.Type != wire.FrameTypeNewConnectionID {
					continue
				}
				nc := f.NewConnectionID
				mu.Lock()
				if s, ok := seqOf[nc.ConnectionID]; ok && s != nc.SequenceNumber {
					dups = append(dups, nc.ConnectionID.String())
				} else {
					seqOf[nc.ConnectionID] = nc.SequenceNumber
				}
				mu.Unlock()
			}
		}}
	}
	ta := &Transport{Conn: pathListenUDP(t)}
	defer ta.Close()
	c, err := ta.Dial(ctx, ts.Conn.LocalAddr(), ctls, &Config{Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	<-conns
	pathEcho(t, c, []byte("before"))
	for i := range 4 {
		tn := &Transport{Conn: pathListenUDP(t)}
		defer tn.Close()
		if err := c.Migrate(ctx, tn); err != nil {
			t.Fatalf("Migrate %d: %v", i, err)
		}
		pathEcho(t, c, bytes.Repeat([]byte("after "), 100))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dups) > 0 {
		t.Errorf("the server issued connection IDs again with new sequence numbers: %v (IDs seen: %d)", dups, len(seqOf))
	}
	if len(seqOf) < 4 {
		t.Fatalf("only %d NEW_CONNECTION_ID IDs seen: the attack did not run", len(seqOf))
	}
}

// A peer that retires ID after ID makes the connection remember each
// (so that none is issued again) only up to connIDRetiredMax; beyond it no
// replacement is issued and nothing more is stored.
func TestLocalConnIDsRetiredBounded(t *testing.T) {
	var s localConnIDs
	if err := s.init(&RandomConnectionIDGenerator{}, nil, ConnectionID{}, 0); err != nil {
		t.Fatal(err)
	}
	deliver := func() {
		for {
			ev, ok := s.pollEvent()
			if !ok {
				break
			}
			if !ev.retire {
				if err := s.onRouted(ev.seq, ev.cid, true); err != nil {
					t.Fatal(err)
				}
			}
		}
		var sent []uint64
		_, sent = s.appendFrames(nil, 1<<20, sent)
		for _, seq := range sent {
			s.onFrameAcked(seq)
		}
	}
	if err := s.setPeerLimit(4); err != nil {
		t.Fatal(err)
	}
	deliver()
	other := wire.NewConnectionID([]byte{1, 2, 3})
	for range connIDRetiredMax + 100 {
		if len(s.ids) == 0 {
			break
		}
		if err := s.onRetire(s.ids[0].seq, other); err != nil {
			t.Fatal(err)
		}
		deliver()
	}
	if len(s.retired) > connIDRetiredMax {
		t.Errorf("%d retired IDs remembered, want at most %d", len(s.retired), connIDRetiredMax)
	}
	if s.nextSeq > connIDRetiredMax+4 {
		t.Errorf("%d IDs issued: replacements went on past the bound", s.nextSeq)
	}
}
