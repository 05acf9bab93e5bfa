package quic

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A server with tiny, fixed flow-control windows and stream limits of 2
// reads every stream in 7-byte reads on its own goroutine while the client
// pushes 60 streams (uni and bidi) through: each read that frees credit
// must get a MAX_STREAM_DATA or MAX_DATA out, each stream read to its end
// (and, for bidi, answered) must retire and raise MAX_STREAMS. A lost
// wakeup stalls a writer until the idle timeout fails it.
func TestSynctestTinyWindowsSmallReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Config{
			InitialStreamReceiveWindow:     1000,
			MaxStreamReceiveWindow:         1000,
			InitialConnectionReceiveWindow: 1500,
			MaxConnectionReceiveWindow:     1500,
			MaxIncomingStreams:             2,
			MaxIncomingUniStreams:          2,
		}
		p := newConnPair(t, connPairOpts{Mem: true, Server: srv})
		ctx := context.Background()
		msg := func(i int) []byte { return bytes.Repeat([]byte{byte(i), byte(i >> 8), 7}, 1100) }

		var mu sync.Mutex
		got := map[int]bool{}
		var swg sync.WaitGroup
		serve := func(r io.Reader, s *Stream) {
			defer swg.Done()
			var b bytes.Buffer
			buf := make([]byte, 7)
			for {
				n, err := r.Read(buf)
				b.Write(buf[:n])
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Errorf("server read: %v", err)
					return
				}
			}
			i := int(b.Bytes()[0]) | int(b.Bytes()[1])<<8
			if !bytes.Equal(b.Bytes(), msg(i)) {
				t.Errorf("stream of message %d: %d bytes, want %d", i, b.Len(), len(msg(i)))
			}
			mu.Lock()
			got[i] = true
			mu.Unlock()
			if s != nil {
				s.Write([]byte("ok"))
				s.CloseWrite()
			}
		}
		for _, bidi := range []bool{true, false} {
			swg.Add(1)
			go func() {
				defer swg.Done()
				for range 30 {
					swg.Add(1)
					if bidi {
						s, err := p.server.AcceptStream(ctx)
						if err != nil {
							swg.Done()
							t.Errorf("accept: %v", err)
							return
						}
						go serve(s, s)
						continue
					}
					s, err := p.server.AcceptUniStream(ctx)
					if err != nil {
						swg.Done()
						t.Errorf("accept: %v", err)
						return
					}
					go serve(s, nil)
				}
			}()
		}
		var cwg sync.WaitGroup
		errs := make(chan error, 60)
		for i := range 60 {
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				if i%2 == 0 {
					s, err := p.client.OpenStreamSync(ctx)
					if err != nil {
						errs <- err
						return
					}
					if _, err := s.Write(msg(i)); err != nil {
						errs <- fmt.Errorf("write %d: %w", i, err)
						return
					}
					s.CloseWrite()
					b, err := io.ReadAll(s)
					if err != nil || string(b) != "ok" {
						errs <- fmt.Errorf("stream %d answer %q, %v", i, b, err)
					}
					return
				}
				s, err := p.client.OpenUniStreamSync(ctx)
				if err != nil {
					errs <- err
					return
				}
				if _, err := s.Write(msg(i)); err != nil {
					errs <- fmt.Errorf("write %d: %w", i, err)
					return
				}
				s.Close()
			}()
		}
		cwg.Wait()
		swg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if len(got) != 60 {
			t.Errorf("server read %d streams, want 60", len(got))
		}
	})
}

// One stream, a fixed 1000-byte stream window, and a reader that reads 7
// bytes at a time only once everything else is idle: each MAX_STREAM_DATA
// must come from the reads waking the connection goroutine, since nothing
// arrives from the blocked writer to wake it.
func TestSynctestTinyStreamWindowIdleReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Config{InitialStreamReceiveWindow: 1000, MaxStreamReceiveWindow: 1000}
		p := newConnPair(t, connPairOpts{Mem: true, Server: srv})
		ctx := context.Background()
		msg := bytes.Repeat([]byte("0123456789abc"), 1000)
		done := make(chan error, 1)
		go func() {
			s, err := p.client.OpenStreamSync(ctx)
			if err != nil {
				done <- err
				return
			}
			_, err = s.Write(msg)
			s.CloseWrite()
			done <- err
		}()
		s, err := p.server.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now() // the bubble's clock
		var b bytes.Buffer
		buf := make([]byte, 7)
		for {
			synctest.Wait()
			n, err := s.Read(buf)
			b.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("read after %d bytes: %v", b.Len(), err)
			}
		}
		if !bytes.Equal(b.Bytes(), msg) {
			t.Errorf("read %d bytes, want %d", b.Len(), len(msg))
		}
		// 13 windows at one round trip each; a window update that
		// waited for the writer's repeated STREAM_DATA_BLOCKED (or
		// another timer) instead of the read takes far longer.
		t.Logf("read in %v of the bubble's time", time.Since(start))
		if d := time.Since(start); d > 13*10*memOneWayLatency {
			t.Errorf("read took %v of the bubble's time: window updates waited for timers", d)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// With room for one stream of each type, the client opens streams one
// after the other; the server finishes each in a different way once
// everything is idle (reads a uni stream to its end; cancels reading one
// whose data all arrived; reads a bidi stream to its end and then
// answers; answers first and reads to the end once its FIN is
// acknowledged). Each way must retire the stream and send MAX_STREAMS
// at once: nothing arrives from the client, blocked on the stream limit,
// to wake the connection goroutine otherwise.
func TestSynctestStreamRetiresPromptlyEveryWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Config{MaxIncomingStreams: 1, MaxIncomingUniStreams: 1}
		p := newConnPair(t, connPairOpts{Mem: true, Server: srv})
		ctx := context.Background()
		const rounds = 12
		done := make(chan error, 1)
		var answers sync.WaitGroup
		go func() {
			for i := range rounds {
				if i%4 < 2 {
					s, err := p.client.OpenUniStreamSync(ctx)
					if err != nil {
						done <- err
						return
					}
					s.Write([]byte("uni"))
					s.Close()
					continue
				}
				s, err := p.client.OpenStreamSync(ctx)
				if err != nil {
					done <- err
					return
				}
				s.Write([]byte("bidi"))
				s.CloseWrite()
				answers.Add(1)
				go func() {
					defer answers.Done()
					b, err := io.ReadAll(s)
					if err != nil || string(b) != "ok" {
						t.Errorf("answer %q, %v", b, err)
					}
				}()
			}
			done <- nil
		}()
		// idle lets the acknowledgment timers run out, so that only what
		// the server's application does can wake its connection.
		idles := 0
		idle := func() {
			time.Sleep(time.Second)
			synctest.Wait()
			idles++
		}
		start := time.Now() // the bubble's clock
		for i := range rounds {
			switch i % 4 {
			case 0, 1:
				s, err := p.server.AcceptUniStream(ctx)
				if err != nil {
					t.Fatal(err)
				}
				idle()
				if i%4 == 0 {
					io.ReadAll(s)
				} else {
					s.CancelRead(0)
				}
			case 2, 3:
				s, err := p.server.AcceptStream(ctx)
				if err != nil {
					t.Fatal(err)
				}
				idle()
				if i%4 == 2 {
					io.ReadAll(s)
					s.Write([]byte("ok"))
					s.CloseWrite()
				} else {
					s.Write([]byte("ok"))
					s.CloseWrite()
					idle() // the FIN acknowledged
					io.ReadAll(s)
				}
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		answers.Wait()
		d := time.Since(start) - time.Duration(idles)*time.Second
		t.Logf("%d streams in %v of the bubble's time besides the idle periods", rounds, d)
		// About one round trip (2 memOneWayLatency) a stream: a
		// retirement that waits for a timer adds several.
		if d > rounds*5*memOneWayLatency {
			t.Errorf("%d streams took %v of the bubble's time: MAX_STREAMS waited for timers", rounds, d)
		}
	})
}
