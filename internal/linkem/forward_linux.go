package linkem

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// errOversize reports a packet longer than the pair's MTU, dropped.
var errOversize = errors.New("linkem: a packet longer than the MTU, dropped")

// forwardBatch is how many packets a forwarder reads or writes before it
// looks at the other side again.
const forwardBatch = 32

// forwarder runs one direction: it reads IP packets from the TUN device of
// the sending namespace, hands them to the link with the time they were
// read, and writes each to the TUN device of the receiving namespace when
// the link says it is due.
//
// It owns an OS thread and waits in ppoll(2) on the input device and a
// wake-up eventfd with a timeout, to the nanosecond, of the link's next
// deadline; the thread's timer slack is 1 ns (the default is 50 µs), so
// the kernel's high-resolution timer wakes it on time. A goroutine woken
// by a Go timer could be up to a millisecond late, since the runtime's
// poller waits in milliseconds.
//
// mu guards link and late: the forwarding thread takes it around each
// batch, other goroutines to change the parameters or read the counters.
// Nothing else is shared.
type forwarder struct {
	in, out, wake int // file descriptors, owned by the Pair
	realTime      bool
	mtu           int // longest packet

	mu        sync.Mutex
	link      *Link
	late      lateness
	readErrs  uint64
	writeErrs uint64
	lastErr   error
	// realTimeErr is why the thread could not get real-time scheduling.
	realTimeErr error
}

// realTimePriority is the SCHED_FIFO priority of the forwarding threads:
// above every normal thread, so that a forwarder runs as soon as its
// timer expires or a packet arrives, however loaded the machine; above
// the threads that measure the link (probePriority), which must not make
// it wait; below the kernel's own real-time threads (priority 50 and up
// for threaded interrupts). The kernel's real-time throttling
// (/proc/sys/kernel/sched_rt_runtime_us, 95% by default) keeps the rest of
// the machine alive should a forwarder ever spin.
const realTimePriority = 20

// probePriority is the SCHED_FIFO priority of the threads that send
// Ping's requests (and the tests' probes): so that nothing runs between
// their timestamps and their sending, but below the forwarders.
const probePriority = 10

// run forwards until the wake eventfd becomes readable (Pair.Close), then
// closes done.
func (f *forwarder) run(done chan<- struct{}) {
	defer close(done)
	// The thread is never unlocked: it exits with this goroutine, and its
	// timer slack with it.
	runtime.LockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if f.realTime {
		err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: realTimePriority}, 0)
		f.mu.Lock()
		f.realTimeErr = err
		f.mu.Unlock()
	}

	var (
		out  [forwardBatch]*Packet
		dues [forwardBatch]time.Time
		in   [forwardBatch]*Packet
		lat  [forwardBatch]time.Duration
	)
	fds := []unix.PollFd{{Fd: int32(f.in), Events: unix.POLLIN}, {Fd: int32(f.wake), Events: unix.POLLIN}}
	for {
		// Write out what is due.
		f.mu.Lock()
		now := time.Now()
		n := 0
		for n < forwardBatch {
			p, due := f.link.Pop(now)
			if p == nil {
				break
			}
			out[n], dues[n] = p, due
			n++
		}
		next, pending := f.link.NextDeadline()
		f.mu.Unlock()
		if n > 0 {
			var werr error
			werrs := 0
			for i, p := range out[:n] {
				lat[i] = time.Since(dues[i])
				if _, err := unix.Write(f.out, p.Data); err != nil {
					werr = err
					werrs++
				}
			}
			f.mu.Lock()
			for i, p := range out[:n] {
				f.late.add(lat[i])
				f.link.Free(p)
				out[i] = nil
			}
			if werrs > 0 {
				f.writeErrs += uint64(werrs)
				f.lastErr = werr
			}
			f.mu.Unlock()
			if n == forwardBatch {
				// More may be due; do not let the reads wait long.
				pending, next = true, time.Now()
			}
		}

		// Wait for a packet to read, the next deadline or Close.
		var timeout *unix.Timespec
		if pending {
			wait := time.Until(next)
			if wait < 0 {
				wait = 0
			}
			ts := unix.NsecToTimespec(int64(wait))
			timeout = &ts
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Ppoll(fds, timeout, nil); err != nil && err != unix.EINTR {
			f.fail(err, true)
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			f.fail(unix.EIO, true)
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			continue
		}

		// Read what the sender has written, up to a batch.
		f.mu.Lock()
		for i := range in {
			in[i] = f.link.Alloc()
		}
		f.mu.Unlock()
		got := 0
		var arrived [forwardBatch]time.Time
		var rerr error
		for reads := 0; got < forwardBatch && reads < 2*forwardBatch; reads++ {
			p := in[got]
			m, err := unix.Read(f.in, p.Data[:cap(p.Data)])
			if err != nil {
				if err != unix.EAGAIN && err != unix.EINTR {
					rerr = err
				}
				break
			}
			if m > f.mtu {
				// The buffers hold MTU+1 bytes: a packet this long
				// was cut short. Someone raised the device's MTU.
				rerr = errOversize
				continue
			}
			p.Data = p.Data[:m]
			arrived[got] = time.Now()
			got++
		}
		f.mu.Lock()
		for i := range in {
			if i < got {
				f.link.Push(arrived[i], in[i])
			} else {
				f.link.Free(in[i])
			}
			in[i] = nil
		}
		if rerr != nil {
			f.readErrs++
			f.lastErr = rerr
		}
		f.mu.Unlock()
	}
}

func (f *forwarder) fail(err error, read bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if read {
		f.readErrs++
	} else {
		f.writeErrs++
	}
	f.lastErr = err
}
