package quic

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
)

// A ReusePortGroup is a set of UDP sockets bound to one address with
// SO_REUSEPORT (Linux), read by one goroutine each, among which the
// kernel steers each datagram with a classic BPF program
// (SO_ATTACH_REUSEPORT_CBPF) by its destination connection ID: every
// packet of a connection reaches a socket of the process that owns the
// connection, whatever the client's address, so that migration and NAT
// rebinding keep working; the first packets of a new connection go to
// one of the accepting sockets by a hash of the ID the client chose
// (see reusePortProgram for the rules). The connection IDs carry the
// index of a socket in one byte after those of
// ReusePortConfig.ConnectionIDGenerator.
//
// The sockets come in two generations of ReusePortConfig.Sockets each,
// so that processes can share the port or hand it over without the
// group's indices ever changing (the kernel renumbers the sockets of a
// group when one closes): the first process binds both generations and
// reads the first; it passes all of them (Files) to a second process,
// which reads the other generation (InheritReusePort). In ShareMode both
// processes take new connections; in TakeOverMode only the new one does,
// while the old one finishes its own connections, whose IDs still reach
// it; once it has exited, a third process can take over from the second
// with the old one's sockets. The sockets stay open as long as one
// process holds them. A generation is read by one process at a time:
// datagrams that arrive for an exited process's connections wait in its
// sockets until the next process that takes them over reads them and
// answers with stateless resets.
//
// A ReusePortGroup's methods are safe for concurrent use.
type ReusePortGroup struct {
	socks  []*net.UDPConn // the group, in index order: 2 generations
	n      int            // sockets per generation
	gen    int            // the generation this process reads
	cidLen int
	idGen  *reusePortIDGenerator

	share     bool // inherited in ShareMode
	mu        sync.Mutex
	t         *Transport
	adopted   bool
	closeOnce sync.Once
}

// ReusePortConfig configures a ReusePortGroup.
type ReusePortConfig struct {
	// Sockets is the number of sockets per generation, each read by a
	// goroutine. Default runtime.NumCPU(); at most 128.
	Sockets int
	// ConnectionIDGenerator makes the connection IDs before the socket
	// byte: a quiclb.Generator for a fleet behind a load balancer. It
	// must make IDs of 4 to 19 bytes, and the processes sharing a group
	// must use the same length. Default: random 8-byte IDs.
	ConnectionIDGenerator ConnectionIDGenerator
}

// InheritMode says how a process that inherits a group shares it with
// the process it inherited it from.
type InheritMode int

const (
	// TakeOverMode: the new process takes every new connection; the old
	// one keeps only its own. For graceful restarts.
	TakeOverMode InheritMode = iota
	// ShareMode: both processes take new connections, half of them each.
	ShareMode
)

// errReusePortUnsupported is returned where SO_REUSEPORT groups with BPF
// steering are not available.
var errReusePortUnsupported = errors.New("quic: reuseport groups need Linux")

func (c ReusePortConfig) sockets() int {
	if c.Sockets <= 0 {
		return min(runtime.NumCPU(), 128)
	}
	return min(c.Sockets, 128)
}

// Transport returns the Transport that reads this process's sockets, made
// on first use: Conn is the first of them and ConnectionIDGenerator
// appends their indices. Set its other fields (Keys, limits) before its
// first Listen or Dial. Closing it does not close the sockets: Close the
// group.
func (g *ReusePortGroup) Transport() *Transport {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.t == nil {
		own := g.generation(g.gen)
		g.t = &Transport{Conn: own[0], ConnectionIDGenerator: g.idGen}
		for _, c := range own[1:] {
			g.t.addReadSocket(c)
		}
	}
	return g.t
}

// generation returns the sockets of generation i.
func (g *ReusePortGroup) generation(i int) []*net.UDPConn {
	return g.socks[i*g.n : (i+1)*g.n]
}

// Generation returns the generation this process reads, 0 or 1.
func (g *ReusePortGroup) Generation() int { return g.gen }

// LocalAddr returns the group's address.
func (g *ReusePortGroup) LocalAddr() net.Addr { return g.socks[0].LocalAddr() }

// Files returns duplicates of the group's sockets, in order, to pass to
// another process (exec.Cmd.ExtraFiles) with the generation this one
// reads; the caller closes them once the process started.
func (g *ReusePortGroup) Files() ([]*os.File, error) {
	fs := make([]*os.File, 0, len(g.socks))
	for _, c := range g.socks {
		f, err := c.File()
		if err != nil {
			for _, f := range fs {
				f.Close()
			}
			return nil, err
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// AdoptPredecessor tells the group that the process it inherited the
// sockets from has exited: in ShareMode, this process then takes all new
// connections. In TakeOverMode it already does, and nothing changes (a
// successor of this process may have taken over since).
func (g *ReusePortGroup) AdoptPredecessor() error {
	g.mu.Lock()
	if g.adopted || !g.share {
		g.mu.Unlock()
		return nil
	}
	g.adopted = true
	g.mu.Unlock()
	return g.attach(g.gen*g.n, g.n)
}

// Close closes this process's handles of the group's sockets (the
// sockets live on in processes that hold them too). Close the Transport
// first.
func (g *ReusePortGroup) Close() error {
	g.closeOnce.Do(func() {
		for _, c := range g.socks {
			c.Close()
		}
	})
	return nil
}
