package quic

import (
	"runtime"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// Stream buffer memory follows the data the buffers hold: what is read
// (receive side) or acknowledged (send side) is given back, and a quiet
// connection keeps no buffer memory at all. Measured on the live heap, so
// the tests hold whatever the buffers are made of.

// 100 streams that each carried 128 KiB and were drained (everything read
// and acknowledged, the streams still open) hold next to nothing: before,
// each side kept a ring per stream as large as the most it had held, 12.5
// MiB of receive buffers on the server and as much of send buffers on the
// client (50 MiB each with the 512 KiB per stream).
func TestSimDrainedStreamsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("12.5 MB transfer")
	}
	p := newSimPair(t, testLink, nil, 81)
	p.connect(t)
	before := heapInUse()
	const n, size = 100, 128 << 10
	cli := make([]*stream, n)
	written := make([]int, n)
	for k := range cli {
		s, _, err := p.client.c.streams.openStream(true)
		if err != nil || s == nil {
			t.Fatalf("openStream: %v %v", s, err)
		}
		cli[k] = s
	}
	var srv []*patternReader
	readBuf := make([]byte, 64<<10) // shared: 100 readers' own would weigh 6 MiB
	p.run(t, 120*time.Second, func() bool {
		for k, s := range cli {
			for written[k] < size {
				m := simWrite(s, testPattern(k, written[k], min(64<<10, size-written[k])))
				if m == 0 {
					break
				}
				written[k] += m
			}
		}
		for _, s := range acceptAll(p.server.c, true) {
			r := newPatternReader(t, s, int(s.id.Num())-1)
			r.buf = readBuf
			srv = append(srv, r)
		}
		done := len(srv) == n
		for _, r := range srv {
			r.step(0)
			done = done && r.got == size
		}
		for _, s := range cli {
			s.mu.Lock()
			done = done && s.send.buffered() == 0
			s.mu.Unlock()
		}
		return done
	})
	p.sim.RunFor(50 * time.Millisecond) // the last ACKs
	active := int64(heapInUse()) - int64(before)
	// What the buffers hold: the chunk tables of their windows, no data.
	buffers := func() (recv, send int) {
		for _, r := range srv {
			recv += r.s.recv.memory()
		}
		for _, s := range cli {
			send += s.send.memory()
		}
		return recv, send
	}
	recvMem, sendMem := buffers()
	// Quiet: both connections release what they can make again.
	p.run(t, 10*time.Second, func() bool { return p.client.c.idleReleased && p.server.c.idleReleased })
	quiet := int64(heapInUse()) - int64(before)
	quietRecv, quietSend := buffers()
	runtime.KeepAlive(cli)
	t.Logf("100 drained streams: receive buffers %d KiB, send buffers %d KiB; live heap %+d KiB (the simulator's datagram pool, the connections' sent-packet records, 200 streams)",
		recvMem>>10, sendMem>>10, active>>10)
	t.Logf("after the quiet-connection release: buffers %d bytes, live heap %+d KiB", quietRecv+quietSend, quiet>>10)
	if recvMem+sendMem > n*4096 {
		t.Errorf("drained buffers hold %d KiB", (recvMem+sendMem)>>10)
	}
	if quietRecv+quietSend != 0 {
		t.Errorf("buffers of a quiet connection hold %d bytes", quietRecv+quietSend)
	}
	if quiet > 1<<20 {
		t.Errorf("100 drained streams on a quiet connection hold %d KiB", quiet>>10)
	}
}

// One byte at offset 524,287 of a new stream (the initial window's last
// byte): the stream's buffer takes memory for the byte, not for the span
// below it.
func TestSimOneByteAtHighOffset(t *testing.T) {
	p := newSimPair(t, testLink, nil, 82)
	p.connect(t)
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatalf("openStream: %v %v", s, err)
	}
	before := heapInUse()
	f := wire.StreamFrame{StreamID: s.id, Offset: defaultInitialStreamWindow - 1, Data: []byte{1}, HasLength: true}
	p.injectFrames(p.client, ackhandler.SpaceApplication, f.Append(nil))
	p.sim.RunFor(50 * time.Millisecond)
	acc := acceptAll(p.server.c, true)
	if len(acc) != 1 || acc[0].recv.highest() != defaultInitialStreamWindow {
		t.Fatalf("the server did not take the byte")
	}
	grew := int64(heapInUse()) - int64(before)
	t.Logf("live heap grew by %d bytes", grew)
	if grew > 64<<10 {
		t.Errorf("one byte at offset %d took %d KiB", f.Offset, grew>>10)
	}
	runtime.KeepAlive(acc)
}

// heapInUse returns the live heap after two garbage collections (the
// second empties the pools' victim caches).
func heapInUse() uint64 {
	live, _, _ := gcMemStats()
	return live
}
