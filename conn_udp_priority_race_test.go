package quic

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// Over loopback, through the public API only: streams are reprioritized
// from other goroutines while they are written, closed, reset
// (CancelWrite) and reset reliably (CancelWriteAt) at arbitrary moments.
// Every stream must end for the reader (EOF or the stream's reset), what
// it reads must be the bytes written, in order, at least the Reliable
// Size of a CancelWriteAt that came after them, and the connection must
// stay up and usable. Run with -race: the scheduler's state is the
// connection goroutine's, SetPriority any goroutine's.
func TestUDPPriorityChurnWithResets(t *testing.T) {
	ctls, stls := testTLS(t)
	cfg := &Config{EnableResetStreamAt: true}
	l, err := ListenAddr("127.0.0.1:0", stls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const streams, size = 24, 96 << 10
	pattern := func(k, off int) byte { return byte(k*31 + off*7 + off>>8) }

	type result struct {
		k   int
		n   int
		err error
	}
	results := make(chan result, streams)
	srvDone := make(chan error, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			srvDone <- err
			return
		}
		for range streams {
			s, err := c.AcceptStream(ctx)
			if err != nil {
				srvDone <- err
				return
			}
			go func() {
				var hdr [1]byte
				if _, err := io.ReadFull(s, hdr[:]); err != nil {
					results <- result{k: -1, err: err}
					return
				}
				k := int(hdr[0])
				buf := make([]byte, 4096)
				n := 0
				for {
					m, err := s.Read(buf)
					for i := range m {
						if buf[i] != pattern(k, n+i) {
							results <- result{k: k, n: n + i, err: errors.New("corrupt data")}
							return
						}
					}
					n += m
					if err != nil {
						if err == io.EOF {
							err = nil
						}
						results <- result{k: k, n: n, err: err}
						s.CancelWrite(0)
						return
					}
				}
			}()
		}
		srvDone <- nil
		// Echo one last stream, to show the connection still works.
		s, err := c.AcceptStream(ctx)
		if err == nil {
			io.Copy(s, s)
			s.CloseWrite()
		}
	}()

	c, err := DialAddr(ctx, l.Addr().String(), ctls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if !c.ConnectionState().SupportsResetStreamAt {
		t.Fatal("reset_stream_at not negotiated")
	}
	// How each stream ends: 0 Close, 1 CancelWrite, 2 CancelWriteAt.
	minRead := make([]int, streams)
	endings := make([]int, streams)
	var wg sync.WaitGroup
	for k := range streams {
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(k), 7))
		endAt := 1 + rng.IntN(size)
		endings[k] = k % 3
		stop := make(chan struct{})
		wg.Add(2)
		go func() { // reprioritize until the writer ends
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(k), 8))
			for {
				select {
				case <-stop:
					return
				default:
				}
				s.SetPriority(Priority{Urgency: uint8(r.IntN(10)), Incremental: r.IntN(2) == 0})
				time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
			}
		}()
		go func() {
			defer wg.Done()
			defer close(stop)
			s.Write([]byte{byte(k)})
			chunk := make([]byte, 1000)
			off := 0
			for off < endAt {
				n := min(len(chunk), endAt-off)
				for i := range n {
					chunk[i] = pattern(k, off+i)
				}
				if _, err := s.Write(chunk[:n]); err != nil {
					t.Errorf("stream %d: write: %v", k, err)
					return
				}
				off += n
			}
			switch endings[k] {
			case 0:
				s.CloseWrite()
				minRead[k] = off
			case 1:
				s.CancelWrite(5)
			case 2:
				rel := off / 2
				s.CancelWriteAt(6, uint64(rel+1)) // +1: the header byte
				minRead[k] = rel
			}
		}()
	}
	wg.Wait()
	if err := <-srvDone; err != nil {
		t.Fatal(err)
	}
	for range streams {
		var r result
		select {
		case r = <-results:
		case <-ctx.Done():
			t.Fatal("a stream never ended for its reader")
		}
		if r.k < 0 {
			continue // reset before its first byte: nothing to check
		}
		var se *StreamError
		switch {
		case r.err != nil && !errors.As(r.err, &se):
			t.Errorf("stream %d: read %d bytes, then %v", r.k, r.n, r.err)
		case endings[r.k] == 0 && r.err != nil, r.n < minRead[r.k]:
			t.Errorf("stream %d (ending %d): read %d bytes (want at least %d), err %v", r.k, endings[r.k], r.n, minRead[r.k], r.err)
		}
	}
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("still up"))
	s.CloseWrite()
	if got, err := io.ReadAll(s); err != nil || string(got) != "still up" {
		t.Fatalf("echo after the churn: %q, %v", got, err)
	}
}
