package linkem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"sync"

	"golang.org/x/sys/unix"
)

// New makes two network namespaces, each with a TUN device holding its
// address, and starts forwarding IP packets between them through one Link
// per direction. Close undoes it all. New needs root, the ip command and
// /dev/net/tun; where they are missing, or namespaces cannot be made, its
// error says which and wraps errors.ErrUnsupported.
//
// The forwarding runs in a process of its own: this program, started
// again from /proc/self/exe with an environment variable that this
// package's init function recognises (see forward_process_linux.go), so
// that the program's own work does not delay the packets. The process
// ends with the Pair or with this one. Config.InProcess keeps the
// forwarding in this process.
//
// A process killed before it closes its pairs leaves their namespaces
// behind; New removes those of pairs with default names whose process is
// gone.
func New(cfg Config) (*Pair, error) {
	if err := checkNetnsSupport(); err != nil {
		return nil, err
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	sweepStale()
	p := &Pair{cfg: cfg, ns: [2]string{cfg.Name + "-a", cfg.Name + "-b"}}
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

	mu      sync.Mutex
	params  [2]Params
	fw      forwarding
	fds     []int    // the TUN devices
	made    []string // the namespaces made
	closed  bool
	closing error
}

// forwarding runs the two forwarders of a pair, in this process or in a
// process of their own.
type forwarding interface {
	setParams(d Dir, p Params) error
	stats(d Dir) (Stats, error)
	close() error
}

func (p *Pair) setup() error {
	for i, ns := range p.ns {
		if err := addNetns(ns); err != nil {
			if i == 0 {
				// The first one: this system does not let us.
				return fmt.Errorf("%w: %w", err, errors.ErrUnsupported)
			}
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
	p.params = [2]Params{p.cfg.AB, p.cfg.BA}
	fc := forwardConfig{Params: p.params, Seed: p.cfg.Seed, MaxPackets: p.cfg.MaxPackets, MTU: p.cfg.MTU, RealTime: !p.cfg.NoRealTime}
	var err error
	if p.cfg.InProcess {
		p.fw, err = startLocal(tun, fc)
	} else {
		p.fw, err = startProcess(tun, fc)
	}
	return err
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
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.params[d]
}

// SetParams changes the parameters of direction d from now on (see
// Link.SetParams: packets already in the link keep their schedule).
func (p *Pair) SetParams(d Dir, prm Params) error {
	if d != AB && d != BA {
		return fmt.Errorf("linkem: no direction %d", d)
	}
	if err := prm.Validate(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	if err := p.fw.setParams(d, prm); err != nil {
		return err
	}
	p.params[d] = prm
	return nil
}

// errClosed is the error of a closed Pair's methods.
var errClosed = errors.New("linkem: pair closed")

// Stats returns the counters of direction d.
func (p *Pair) Stats(d Dir) (Stats, error) {
	if d != AB && d != BA {
		return Stats{}, fmt.Errorf("linkem: no direction %d", d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return Stats{}, errClosed
	}
	return p.fw.stats(d)
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
	var errs []error
	if p.fw != nil {
		errs = append(errs, p.fw.close())
	}
	for _, fd := range p.fds {
		unix.Close(fd)
	}
	for _, ns := range p.made {
		errs = append(errs, delNetns(ns))
	}
	p.closing = errors.Join(errs...)
	return p.closing
}
