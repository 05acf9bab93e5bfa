package quic

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestSynctestCloseWriteRacesBlockedWrite (hostile review of ac4b813):
// CloseWrite with data still queued no longer wakes the connection
// goroutine, the FIN going with the last data. Streams limited by small
// stream and connection windows, with every 7th server datagram (ACKs,
// MAX_STREAM_DATA, MAX_DATA) lost, close either after the last Write
// returned or while a Write blocks on the full send buffer (it then
// returns errWriteAfterClose with what it queued). The server must read exactly
// the bytes the client's Writes reported queued, then EOF, on every stream.
func TestSynctestCloseWriteRacesBlockedWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lossy *lossyMemConn
		p := newConnPair(t, connPairOpts{Mem: true,
			ServerConn: func(pc net.PacketConn) net.PacketConn {
				lossy = &lossyMemConn{memConn: pc.(*memConn), every: 7}
				return lossy
			},
			Server: &Config{InitialStreamReceiveWindow: 16 << 10, MaxStreamReceiveWindow: 16 << 10,
				InitialConnectionReceiveWindow: 64 << 10, MaxConnectionReceiveWindow: 64 << 10}})
		lossy.armed.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		const streams = 12
		want := make([][]byte, streams)
		var wg sync.WaitGroup
		for i := range streams {
			str, err := p.client.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			size := 2000 + rng.IntN(20000)
			if i%2 == 1 {
				size += defaultMaxStreamSendBuffered // more than Write can queue at once
			}
			data := make([]byte, size)
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					// Close after the last Write returned.
					off := 0
					for off < len(data) {
						n := min(1+rng.IntN(3000), len(data)-off)
						if w, err := str.Write(data[off : off+n]); err != nil || w != n {
							t.Errorf("stream %d: Write %d, %v", i, w, err)
							return
						}
						off += n
					}
					want[i] = data
					str.CloseWrite()
					return
				}
				// Close while one Write blocks on the full send buffer.
				done := make(chan int)
				go func() {
					n, _ := str.Write(data)
					done <- n
				}()
				time.Sleep(time.Duration(rng.IntN(10)) * time.Millisecond)
				str.CloseWrite()
				want[i] = data[:<-done]
				if len(want[i]) == len(data) {
					t.Errorf("stream %d: the Write did not block", i)
				}
			}()
		}
		got := make([][]byte, streams)
		var swg sync.WaitGroup
		for range streams {
			srv, err := p.server.AcceptStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			swg.Add(1)
			go func() {
				defer swg.Done()
				b, err := io.ReadAll(srv)
				if err != nil {
					t.Errorf("stream %d: server read %d bytes, %v", srv.StreamID(), len(b), err)
				}
				got[int(srv.StreamID())/4] = b
			}()
		}
		wg.Wait()
		swg.Wait()
		for i := range streams {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("stream %d: server read %d bytes, the client queued %d (equal prefix: %v)",
					i, len(got[i]), len(want[i]), bytes.HasPrefix(want[i], got[i]))
			}
		}
	})
}
