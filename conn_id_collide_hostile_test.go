package quic

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// twiceConnIDGenerator returns every ID twice in a row, so that
// connections of one Transport issuing at the same time collide.
type twiceConnIDGenerator struct {
	mu    sync.Mutex
	calls int
}

func (g *twiceConnIDGenerator) ConnectionIDLen() int { return 8 }

func (g *twiceConnIDGenerator) GenerateConnectionID() (ConnectionID, error) {
	g.mu.Lock()
	k := g.calls / 2
	g.calls++
	g.mu.Unlock()
	return wire.NewConnectionID([]byte{0xd0, 0xb1, 0, 0, byte(k >> 24), byte(k >> 16), byte(k >> 8), byte(k)}), nil
}

// Many clients on one server Transport (with a preferred address on a
// second one) whose generator hands out each ID twice: every collision
// must make the second connection pick another ID, so that each
// connection's packets, after the move to the preferred address and a
// client migration, reach it and no other.
func TestUDPCollidingConnIDsManyConns(t *testing.T) {
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gen := &twiceConnIDGenerator{}
	ts := &Transport{Conn: pathListenUDP(t), ConnectionIDGenerator: gen}
	tp := &Transport{Conn: pathListenUDP(t), ConnectionIDGenerator: gen}
	defer ts.Close()
	defer tp.Close()
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetPreferredAddress(tp, nil); err != nil {
		t.Fatal(err)
	}
	conns := make(chan *Conn, 16)
	go pathEchoServer(ctx, l, conns)

	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tc := &Transport{Conn: pathListenUDP(t)}
			defer tc.Close()
			c, err := tc.Dial(ctx, ts.Conn.LocalAddr(), ctls, nil)
			if err != nil {
				errs <- fmt.Errorf("client %d: dial: %w", i, err)
				return
			}
			defer c.CloseWithError(0, "")
			if err := echoErr(c, bytes.Repeat([]byte{byte(i)}, 5000)); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
				return
			}
			tm := &Transport{Conn: pathListenUDP(t)}
			defer tm.Close()
			if err := c.Migrate(ctx, tm); err != nil {
				errs <- fmt.Errorf("client %d: migrate: %w", i, err)
				return
			}
			for j := range 3 {
				if err := echoErr(c, bytes.Repeat([]byte{byte(i), byte(j)}, 3000)); err != nil {
					errs <- fmt.Errorf("client %d after migrating: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// echoErr is pathEcho for goroutines other than the test's.
func echoErr(c *Conn, msg []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	s.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := s.Write(msg); err != nil {
		return err
	}
	s.CloseWrite()
	got := make([]byte, 0, len(msg))
	buf := make([]byte, 4096)
	for {
		k, err := s.Read(buf)
		got = append(got, buf[:k]...)
		if err != nil {
			break
		}
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("echo: got %d bytes, want %d", len(got), len(msg))
	}
	return nil
}
