package quic

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// IDs the client retires (it moves to the server's preferred address,
// then migrates twice) stop routing in both of the server's Transports,
// and once the connection is closed and its closing period over, none of
// its IDs routes anywhere.
func TestUDPRetiredConnIDsUnrouted(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, tp := &Transport{Conn: pathListenUDP(t)}, &Transport{Conn: pathListenUDP(t)}
	defer ts.Close()
	defer tp.Close()
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetPreferredAddress(tp, nil); err != nil {
		t.Fatal(err)
	}
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)

	var mu sync.Mutex
	bySeq := make(map[uint64]ConnectionID)
	var retired []uint64
	frames := func(b []byte, each func(*wire.Frame)) {
		var f wire.Frame
		for len(b) > 0 {
			n, err := wire.ParseFrame(b, &f, 0)
			if err != nil {
				return
			}
			b = b[n:]
			each(&f)
		}
	}
	tracer := func(context.Context, bool, ConnectionID) *Tracer {
		return &Tracer{
			PacketReceived: func(p PacketInfo) {
				frames(p.Payload, func(f *wire.Frame) {
					if f.Type == wire.FrameTypeNewConnectionID {
						mu.Lock()
						bySeq[f.NewConnectionID.SequenceNumber] = f.NewConnectionID.ConnectionID
						mu.Unlock()
					}
				})
			},
			PacketSent: func(p PacketInfo) {
				frames(p.Payload, func(f *wire.Frame) {
					if f.Type == wire.FrameTypeRetireConnectionID {
						mu.Lock()
						retired = append(retired, f.RetireConnectionID.SequenceNumber)
						mu.Unlock()
					}
				})
			},
		}
	}
	ta := &Transport{Conn: pathListenUDP(t)}
	defer ta.Close()
	c, err := ta.Dial(ctx, ts.Conn.LocalAddr(), ctls, &Config{Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	srv := <-conns
	pathPollUntil(t, "the move to the preferred address", func() bool {
		return c.RemoteAddr().String() == tp.Conn.LocalAddr().String()
	})
	pathEcho(t, c, []byte("preferred"))
	for range 2 {
		tn := &Transport{Conn: pathListenUDP(t)}
		defer tn.Close()
		if err := c.Migrate(ctx, tn); err != nil {
			t.Fatal(err)
		}
		pathEcho(t, c, bytes.Repeat([]byte("moved "), 100))
	}
	routed := func(cid ConnectionID) bool {
		for _, tr := range []*Transport{ts, tp} {
			if r := tr.ep.routes.get(cid); r.c != nil || r.closed != nil {
				return true
			}
		}
		return false
	}
	mu.Lock()
	var gone []ConnectionID
	for _, seq := range retired {
		if cid, ok := bySeq[seq]; ok {
			gone = append(gone, cid)
		}
	}
	var all []ConnectionID
	for _, cid := range bySeq {
		all = append(all, cid)
	}
	mu.Unlock()
	if len(gone) == 0 {
		t.Fatal("the client retired no ID it learned from a NEW_CONNECTION_ID frame: the attack did not run")
	}
	pathPollUntil(t, "retired IDs to stop routing", func() bool {
		for _, cid := range gone {
			if routed(cid) {
				return false
			}
		}
		return true
	})
	c.CloseWithError(0, "")
	<-srv.Context().Done()
	pathPollUntil(t, "the closed connection's IDs to stop routing", func() bool {
		for _, cid := range all {
			if routed(cid) {
				return false
			}
		}
		return true
	})
}
