package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
)

// datagramConn is what both implementations offer for RFC 9221 datagrams.
type datagramConn interface {
	SendDatagram(p []byte) error
	ReceiveDatagram(ctx context.Context) ([]byte, error)
}

const (
	datagramCount   = 100
	datagramMinRecv = 90 // on loopback, with paced sends
)

// datagramPayload is datagram seq of direction dir: a 3-byte header
// (direction, sequence number) and 50 to 1,000 bytes derived from both,
// small enough for any packet of either implementation.
func datagramPayload(dir byte, seq int) []byte {
	n := 50 + (seq*137)%951
	p := make([]byte, 3+n)
	p[0] = dir
	binary.BigEndian.PutUint16(p[1:], uint16(seq))
	for i := 3; i < len(p); i++ {
		p[i] = byte(i*7 + seq*13 + int(dir))
	}
	return p
}

// sendDatagrams sends datagramCount datagrams, paced so that neither
// side's 32-entry send queue overflows (ours drops the oldest then).
func sendDatagrams(c datagramConn, dir byte) error {
	for seq := 0; seq < datagramCount; seq++ {
		if err := c.SendDatagram(datagramPayload(dir, seq)); err != nil {
			return fmt.Errorf("send datagram %d: %w", seq, err)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// receiveDatagrams collects datagrams of direction dir until all arrived
// or ctx ends, and returns how many distinct ones arrived intact.
func receiveDatagrams(ctx context.Context, c datagramConn, dir byte) (int, error) {
	seen := make(map[int]bool)
	for len(seen) < datagramCount {
		p, err := c.ReceiveDatagram(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return len(seen), fmt.Errorf("receive: %w", err)
		}
		if len(p) < 3 || p[0] != dir {
			return len(seen), fmt.Errorf("unexpected datagram of %d bytes: % x", len(p), p[:min(len(p), 8)])
		}
		seq := int(binary.BigEndian.Uint16(p[1:]))
		if seq >= datagramCount || !bytes.Equal(p, datagramPayload(dir, seq)) {
			return len(seen), fmt.Errorf("datagram %d corrupted (%d bytes)", seq, len(p))
		}
		seen[seq] = true
	}
	return len(seen), nil
}

// runDatagramExchange sends datagramCount datagrams each way between
// client and server at once and checks that at least datagramMinRecv
// arrive intact in each direction.
func runDatagramExchange(t *testing.T, client, server datagramConn) {
	t.Helper()
	var wg sync.WaitGroup
	type result struct {
		name string
		n    int
		err  error
	}
	results := make(chan result, 4)
	direction := func(name string, from, to datagramConn, dir byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		wg.Add(2)
		sent := make(chan struct{})
		go func() {
			defer wg.Done()
			defer close(sent)
			if err := sendDatagrams(from, dir); err != nil {
				results <- result{name + " send", 0, err}
			}
		}()
		go func() {
			defer wg.Done()
			defer cancel()
			// Stop waiting 2 s after the last send: the rest is lost.
			go func() {
				select {
				case <-sent:
					select {
					case <-time.After(2 * time.Second):
						cancel()
					case <-ctx.Done():
					}
				case <-ctx.Done():
				}
			}()
			n, err := receiveDatagrams(ctx, to, dir)
			results <- result{name, n, err}
		}()
	}
	direction("client->server", client, server, 'c')
	direction("server->client", server, client, 's')
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
			continue
		}
		t.Logf("%s: %d of %d datagrams arrived intact", r.name, r.n, datagramCount)
		if r.n < datagramMinRecv {
			t.Errorf("%s: only %d of %d datagrams arrived", r.name, r.n, datagramCount)
		}
	}
}

func TestDatagramsOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := quicgo.ListenAddr("127.0.0.1:0", stls, &quicgo.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := make(chan *quicgo.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := ours.DialAddr(ctx, l.Addr().String(), ctls, &ours.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatalf("dial quic-go: %v", err)
	}
	defer c.CloseWithError(0, "")
	srv := <-accepted
	if srv == nil {
		t.Fatal("quic-go did not accept")
	}
	defer srv.CloseWithError(0, "")
	if !c.ConnectionState().SupportsDatagrams {
		t.Fatal("our client: datagrams not negotiated")
	}
	if s := srv.ConnectionState().SupportsDatagrams; !s.Local || !s.Remote {
		t.Fatalf("quic-go server: datagram support %+v", s)
	}
	runDatagramExchange(t, c, srv)
}

func TestDatagramsQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := ours.ListenAddr("127.0.0.1:0", stls, &ours.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := make(chan *ours.Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := quicgo.DialAddr(ctx, l.Addr().String(), ctls, &quicgo.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatalf("quic-go dial: %v", err)
	}
	defer c.CloseWithError(0, "")
	srv := <-accepted
	if srv == nil {
		t.Fatal("our server did not accept")
	}
	defer srv.CloseWithError(0, "")
	if !srv.ConnectionState().SupportsDatagrams {
		t.Fatal("our server: datagrams not negotiated")
	}
	if s := c.ConnectionState().SupportsDatagrams; !s.Local || !s.Remote {
		t.Fatalf("quic-go client: datagram support %+v", s)
	}
	runDatagramExchange(t, c, srv)
}

// Without EnableDatagrams on the peer, SendDatagram fails rather than
// sending frames the peer would treat as a protocol violation.
func TestDatagramsNotNegotiatedWithQuicGo(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := quicgo.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			<-ctx.Done()
			c.CloseWithError(0, "")
		}
	}()
	c, err := ours.DialAddr(ctx, l.Addr().String(), ctls, &ours.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatalf("dial quic-go: %v", err)
	}
	defer c.CloseWithError(0, "")
	if c.ConnectionState().SupportsDatagrams {
		t.Fatal("datagrams negotiated although quic-go did not enable them")
	}
	if err := c.SendDatagram([]byte("x")); err == nil {
		t.Fatal("SendDatagram succeeded without negotiation")
	}
}
