package linkem

import (
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// forwardConfig is what the forwarders of a pair need to start. It crosses
// to the forwarding process as JSON.
type forwardConfig struct {
	Params     [2]Params // indexed by Dir
	Seed       uint64
	MaxPackets int
	MTU        int
	RealTime   bool
}

// localForwarding runs the two forwarders of a pair in this process.
type localForwarding struct {
	fwd  [2]*forwarder
	done [2]chan struct{}
	wake int // eventfd that stops the forwarders
}

// startLocal starts forwarding between the TUN devices tun[A] and tun[B].
// It does not take ownership of them.
func startLocal(tun [2]int, cfg forwardConfig) (*localForwarding, error) {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("linkem: eventfd: %v", err)
	}
	l := &localForwarding{wake: wake}
	for d := range 2 {
		from, to := Side(d), Side(1-d)
		l.fwd[d] = &forwarder{
			in: tun[from], out: tun[to], wake: wake, realTime: cfg.RealTime, mtu: cfg.MTU,
			link: NewLink(cfg.Params[d], LinkOptions{Seed: cfg.Seed + uint64(d), MaxPackets: cfg.MaxPackets, PacketSize: cfg.MTU + 1}),
		}
		l.done[d] = make(chan struct{})
		go l.fwd[d].run(l.done[d])
	}
	return l, nil
}

func (l *localForwarding) setParams(d Dir, p Params) error {
	f := l.fwd[d]
	f.mu.Lock()
	defer f.mu.Unlock()
	f.link.SetParams(time.Now(), p)
	return nil
}

func (l *localForwarding) stats(d Dir) (Stats, error) {
	f := l.fwd[d]
	f.mu.Lock()
	defer f.mu.Unlock()
	return Stats{
		LinkStats: f.link.Stats(), Late: f.late.summary(),
		ReadErrors: f.readErrs, WriteErrors: f.writeErrs, LastError: f.lastErr,
		RealTime: f.realTime && f.realTimeErr == nil,
	}, nil
}

// close stops the forwarders and waits for them.
func (l *localForwarding) close() error {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, err := unix.Write(l.wake, one[:])
	if err == nil {
		for _, d := range l.done {
			<-d
		}
	}
	unix.Close(l.wake)
	if err != nil {
		return fmt.Errorf("linkem: stopping the forwarders: %v", err)
	}
	return nil
}
