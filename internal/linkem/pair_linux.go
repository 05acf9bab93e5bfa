package linkem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// New makes two network namespaces, each with a TUN device holding its
// address, and starts forwarding IP packets between them through one Link
// per direction. Close undoes it all. New needs root, the ip command and
// /dev/net/tun; it returns an error that says which is missing.
func New(cfg Config) (*Pair, error) {
	if err := checkNetnsSupport(); err != nil {
		return nil, err
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	p := &Pair{cfg: cfg, ns: [2]string{cfg.Name + "-a", cfg.Name + "-b"}, fds: []int{}}
	if err := p.setup(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Pair is two network namespaces, A and B, joined by an emulated link.
// Its methods may be called from any goroutine.
type Pair struct {
	cfg Config
	ns  [2]string
	fwd [2]*forwarder

	mu      sync.Mutex
	fds     []int // every file descriptor to close
	made    []string
	done    []chan struct{}
	wakeFD  int
	closed  bool
	closing error
}

func (p *Pair) setup() error {
	for _, ns := range p.ns {
		if err := addNetns(ns); err != nil {
			return err
		}
		p.made = append(p.made, ns)
	}
	var tun [2]int
	for s, addr := range []netip.Prefix{p.cfg.AddrA, p.cfg.AddrB} {
		fd, err := openTUN(p.ns[s], addr, p.cfg.MTU)
		if err != nil {
			return err
		}
		tun[s] = fd
		p.fds = append(p.fds, fd)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("linkem: eventfd: %v", err)
	}
	p.wakeFD = wake
	p.fds = append(p.fds, wake)
	for d, prm := range []Params{p.cfg.AB, p.cfg.BA} {
		from, to := Side(d), Side(1-d)
		p.fwd[d] = &forwarder{
			in: tun[from], out: tun[to], wake: wake, realTime: !p.cfg.NoRealTime,
			link: NewLink(prm, LinkOptions{Seed: p.cfg.Seed + uint64(d), MaxPackets: p.cfg.MaxPackets, PacketSize: p.cfg.MTU}),
		}
		done := make(chan struct{})
		p.done = append(p.done, done)
		go p.fwd[d].run(done)
	}
	return nil
}

// Namespace returns the name of side s's network namespace.
func (p *Pair) Namespace(s Side) string { return p.ns[s] }

// Addr returns side s's address.
func (p *Pair) Addr(s Side) netip.Addr {
	if s == A {
		return p.cfg.AddrA.Addr()
	}
	return p.cfg.AddrB.Addr()
}

// Params returns the parameters of direction d in force.
func (p *Pair) Params(d Dir) Params {
	f := p.fwd[d]
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.link.Params()
}

// SetParams changes the parameters of direction d from now on (see
// Link.SetParams: packets already in the link keep their schedule).
func (p *Pair) SetParams(d Dir, prm Params) error {
	if err := prm.Validate(); err != nil {
		return err
	}
	f := p.fwd[d]
	f.mu.Lock()
	defer f.mu.Unlock()
	f.link.SetParams(time.Now(), prm)
	return nil
}

// Stats returns the counters of direction d.
func (p *Pair) Stats(d Dir) Stats {
	f := p.fwd[d]
	f.mu.Lock()
	defer f.mu.Unlock()
	return Stats{LinkStats: f.link.Stats(), Late: f.late.summary(), ReadErrors: f.readErrs, WriteErrors: f.writeErrs, LastError: f.lastErr,
		RealTime: f.realTime && f.realTimeErr == nil}
}

// Do runs fn on a thread inside side s's namespace (see the function Do).
func (p *Pair) Do(s Side, fn func() error) error { return Do(p.ns[s], fn) }

// Command returns a command that runs inside side s's namespace (see the
// function Command).
func (p *Pair) Command(ctx context.Context, s Side, name string, args ...string) *exec.Cmd {
	return Command(ctx, p.ns[s], name, args...)
}

// Listen opens a listener inside side s's namespace (net.Listen).
func (p *Pair) Listen(s Side, network, address string) (net.Listener, error) {
	var l net.Listener
	err := p.Do(s, func() (err error) {
		l, err = net.Listen(network, address)
		return err
	})
	return l, err
}

// ListenPacket opens a packet socket inside side s's namespace
// (net.ListenPacket).
func (p *Pair) ListenPacket(s Side, network, address string) (net.PacketConn, error) {
	var c net.PacketConn
	err := p.Do(s, func() (err error) {
		c, err = net.ListenPacket(network, address)
		return err
	})
	return c, err
}

// Dial connects from inside side s's namespace with d (nil for the zero
// Dialer). The address should be an IP address: name resolution would run
// outside the namespace.
func (p *Pair) Dial(ctx context.Context, s Side, d *net.Dialer, network, address string) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{}
	}
	var c net.Conn
	err := p.Do(s, func() (err error) {
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Close stops the forwarding, closes the TUN devices and removes the
// namespaces. Sockets still open inside them keep the namespaces alive
// until they close, but without a link. Close is idempotent.
func (p *Pair) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.closing
	}
	p.closed = true
	if len(p.done) > 0 {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		if _, err := unix.Write(p.wakeFD, one[:]); err != nil {
			p.closing = fmt.Errorf("linkem: waking the forwarders: %v", err)
		}
		for _, d := range p.done {
			<-d
		}
	}
	for _, fd := range p.fds {
		unix.Close(fd)
	}
	var errs []error
	for _, ns := range p.made {
		if err := delNetns(ns); err != nil {
			errs = append(errs, err)
		}
	}
	if p.closing == nil {
		p.closing = errors.Join(errs...)
	}
	return p.closing
}
