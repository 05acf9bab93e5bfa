package linkem

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The forwarding loop allocates nothing per packet: driven through
// packet sockets in place of the TUN devices (no root needed), with the
// test's own reads and writes made by raw system calls, the process's
// allocation count does not move.
func TestForwarderAllocs(t *testing.T) {
	pair := func() [2]int {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Skip(err)
		}
		t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
		return [2]int{fds[0], fds[1]}
	}
	in, out := pair(), pair()
	unix.SetNonblock(in[1], true)
	unix.SetNonblock(out[0], true)
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Skip(err)
	}
	defer unix.Close(wake)
	p := Params{Delay: 50 * time.Microsecond, Jitter: 10 * time.Microsecond, Rate: 1e9, Loss: 0, Duplicate: 0}
	f := &forwarder{in: in[1], out: out[0], wake: wake, mtu: 1500, link: NewLink(p, LinkOptions{Seed: 1, PacketSize: 1501})}
	done := make(chan struct{})
	go f.run(done)
	defer func() {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(wake, one[:])
		<-done
	}()
	pkt, buf := make([]byte, 1200), make([]byte, 2000)
	var lost int
	step := func() {
		if _, err := unix.Write(in[0], pkt); err != nil {
			lost++
			return
		}
		if n, err := unix.Read(out[1], buf); err != nil || n != len(pkt) {
			lost++
		}
	}
	for range 2000 {
		step()
	}
	if a := testing.AllocsPerRun(5000, step); a != 0 {
		t.Fatalf("%v allocations per forwarded packet; want 0", a)
	}
	if lost > 0 {
		t.Fatalf("%d packets not forwarded", lost)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// 2,000, then AllocsPerRun's warm-up run and its 5,000.
	if s := f.link.Stats(); s.Delivered != 7001 {
		t.Errorf("%d packets delivered; want 7,001", s.Delivered)
	}
}
