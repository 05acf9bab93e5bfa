package linkem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// pingID numbers the Ping calls of this process, for ICMP identifiers.
var pingID atomic.Uint32

// Ping sends count ICMP echo requests (at most 65,536, the sequence
// numbers) with size bytes of payload (at least 8, at most 1,400) from side from to the other side's address, one every
// interval, like ping(8), and returns the round-trip time of each request
// answered, in the order they were sent; unanswered requests are left out.
// As ping(8) does, it measures from just before sending a request to the
// kernel's receive timestamp of its answer (SO_TIMESTAMPNS), so that the
// time the answer waits for this process is not counted. It waits for
// answers until ctx is done or 3 s after the last request.
func (p *Pair) Ping(ctx context.Context, from Side, count int, interval time.Duration, size int) ([]time.Duration, error) {
	if count <= 0 || count > 65536 || size < 8 || size > 1400 {
		return nil, fmt.Errorf("linkem: Ping: count %d, size %d: want count in [1, 65536] and size in [8, 1400]", count, size)
	}
	var c *net.IPConn
	err := p.Do(from, func() error {
		pc, err := net.ListenPacket("ip4:icmp", p.Addr(from).String())
		if err != nil {
			return err
		}
		c = pc.(*net.IPConn)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("linkem: Ping: %v", err)
	}
	defer c.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil, fmt.Errorf("linkem: Ping: SO_TIMESTAMPNS: %v", errors.Join(err, serr))
	}

	id := uint16(pingID.Add(1)) ^ uint16(unix.Getpid())
	dst := &net.IPAddr{IP: p.Addr(1 - from).AsSlice()}
	sent := make([]time.Time, count)
	rtts := make([]time.Duration, count)
	var mu sync.Mutex
	answered := 0
	all := make(chan struct{})

	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 2048)
		oob := make([]byte, 128)
		for {
			n, oobn, _, _, err := c.ReadMsgIP(buf, oob)
			if err != nil {
				return
			}
			seq, ok := parseEchoReply(buf[:n], id)
			if !ok || int(seq) >= count {
				continue
			}
			at, ok := rxTimestamp(oob[:oobn])
			if !ok {
				at = time.Now()
			}
			mu.Lock()
			if !sent[seq].IsZero() && rtts[seq] == 0 {
				rtts[seq] = at.Sub(sent[seq])
				answered++
				if answered == count {
					close(all)
				}
			}
			mu.Unlock()
		}
	}()

	// The requests leave from a thread of their own, with real-time
	// priority where allowed, so that no other thread runs between the
	// timestamp and the send; the thread exits with its goroutine.
	sendErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: probePriority}, 0)
		msg := make([]byte, 8+size)
		tick := time.NewTicker(max(interval, time.Microsecond))
		defer tick.Stop()
		for i := range count {
			if i > 0 {
				select {
				case <-tick.C:
				case <-ctx.Done():
					sendErr <- ctx.Err()
					return
				}
			}
			echoRequest(msg, id, uint16(i))
			mu.Lock()
			sent[i] = time.Now().Round(0) // wall clock, as the kernel's timestamps
			mu.Unlock()
			if _, err := c.WriteTo(msg, dst); err != nil {
				sendErr <- fmt.Errorf("linkem: Ping: %v", err)
				return
			}
		}
		sendErr <- nil
	}()
	if err := <-sendErr; err != nil {
		c.Close()
		<-readDone
		return nil, err
	}
	select {
	case <-all:
	case <-ctx.Done():
	case <-time.After(3 * time.Second):
	}
	c.Close()
	<-readDone
	var out []time.Duration
	for _, r := range rtts {
		if r > 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

// echoRequest writes an ICMP echo request (RFC 792) into msg, whose
// payload is left as it is.
func echoRequest(msg []byte, id, seq uint16) {
	msg[0], msg[1] = 8, 0 // echo request, code 0
	binary.BigEndian.PutUint16(msg[2:], 0)
	binary.BigEndian.PutUint16(msg[4:], id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	binary.BigEndian.PutUint16(msg[2:], icmpChecksum(msg))
}

// icmpChecksum is the Internet checksum (RFC 1071) of b.
func icmpChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// parseEchoReply returns the sequence number of b if it is an ICMP echo
// reply with identifier id, with or without its IPv4 header.
func parseEchoReply(b []byte, id uint16) (uint16, bool) {
	if len(b) >= 20 && b[0]>>4 == 4 {
		ihl := int(b[0]&0x0f) * 4
		if ihl < 20 || ihl > len(b) {
			return 0, false
		}
		b = b[ihl:]
	}
	if len(b) < 8 || b[0] != 0 || b[1] != 0 || binary.BigEndian.Uint16(b[4:]) != id {
		return 0, false
	}
	return binary.BigEndian.Uint16(b[6:]), true
}

// rxTimestamp returns the SO_TIMESTAMPNS receive time in the control
// messages oob.
func rxTimestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:]))
			return time.Unix(sec, nsec), true
		}
	}
	return time.Time{}, false
}
