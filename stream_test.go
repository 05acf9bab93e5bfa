package quic

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// Two goroutines reading one stream at once ("concurrent Reads are
// serialized"): data that arrives after the first of them was served
// must reach the second.
func TestSynctestConcurrentReaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIdleTimeout: time.Minute}})
		cs, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cs.Write([]byte{0})
		ss, err := p.server.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(ss, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		got := make(chan byte, 2)
		for range 2 {
			go func() {
				b := make([]byte, 1)
				if n, err := ss.Read(b); n == 1 && err == nil {
					got <- b[0]
				}
			}()
		}
		synctest.Wait()
		for i := byte(1); i <= 2; i++ {
			cs.Write([]byte{i})
			time.Sleep(time.Second)
			synctest.Wait()
			if len(got) != int(i) {
				t.Fatalf("after %d bytes written, readers got %d", i, len(got))
			}
		}
		// A deadline in the past ends every waiting Read, and so does
		// the end of the connection.
		for _, end := range []func(){
			func() { ss.SetReadDeadline(time.Now().Add(-time.Second)) },
			func() { p.server.CloseWithError(0, "") },
		} {
			ended := make(chan error, 2)
			for range 2 {
				go func() {
					_, err := ss.Read(make([]byte, 1))
					ended <- err
				}()
			}
			synctest.Wait()
			if len(ended) != 0 {
				t.Fatal("Read returned early")
			}
			end()
			synctest.Wait()
			if len(ended) != 2 {
				t.Fatalf("%d of 2 waiting Reads returned", len(ended))
			}
			ss.SetReadDeadline(time.Time{})
		}
	})
}

// Two goroutines writing one stream at once, both waiting for room in
// the send buffer: acknowledgments that make room must reach both.
func TestSynctestConcurrentWriters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 16 << 10
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{
			MaxIdleTimeout:             time.Minute,
			InitialStreamReceiveWindow: window, MaxStreamReceiveWindow: window,
			InitialConnectionReceiveWindow: window, MaxConnectionReceiveWindow: window,
		}})
		cs, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan int, 2)
		// The first writer fills the send buffer and waits with 100
		// bytes left; the second waits with 10.
		go func() {
			n, _ := cs.Write(make([]byte, defaultMaxStreamSendBuffered+window+100))
			done <- n
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		go func() {
			n, _ := cs.Write(make([]byte, 10))
			done <- n
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		if len(done) != 0 {
			t.Fatal("a writer returned with the buffer full")
		}
		ss, err := p.server.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, ss)
		for range 2 {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("a writer is stuck")
			}
		}
	})
}
