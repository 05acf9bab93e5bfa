package netsim

import "fmt"

// A Network connects endpoints through links and routes datagrams
// between them, on the clock of a Sim.
//
// Routing is by host: a datagram from host a to host b takes the link set
// with SetRoute(a, b, link) (Connect sets both directions). Endpoints are
// attached at addresses (Attach, Node.AddAddr); a datagram arriving for an
// address without an endpoint is dropped. SetNAT models a NAT in front of
// an address, so that tests can rebind the address a peer sees.
//
// A Network must be used from the goroutine running its Sim.
type Network struct {
	// Trace, if non-nil, is called for every datagram sent, delivered or
	// dropped, in simulation order.
	Trace func(TraceEvent)

	sim    *Sim
	seed   uint64
	links  []*Link
	routes map[simHostPair]*Link
	nodes  map[Addr]*Node
	natOut map[Addr]Addr // inside -> outside
	natIn  map[Addr]Addr // outside -> inside
	pool   datagramPool
	nextID uint64
	stats  NetworkStats
}

type simHostPair struct{ from, to uint32 }

// NewNetwork returns an empty network driven by sim. seed seeds the random
// generators of links that have no Seed of their own.
func NewNetwork(sim *Sim, seed uint64) *Network {
	return &Network{
		sim:    sim,
		seed:   seed,
		routes: make(map[simHostPair]*Link),
		nodes:  make(map[Addr]*Node),
		natOut: make(map[Addr]Addr),
		natIn:  make(map[Addr]Addr),
	}
}

// Sim returns the Sim driving the network.
func (n *Network) Sim() *Sim { return n.sim }

// NewLink creates a link that no route uses yet (see SetRoute).
func (n *Network) NewLink(cfg LinkConfig) *Link {
	l := newLink(n, len(n.links), cfg)
	n.links = append(n.links, l)
	return l
}

// Links returns the links in the order they were created.
func (n *Network) Links() []*Link { return append([]*Link(nil), n.links...) }

// SetRoute makes datagrams from host from to host to take link l; nil
// removes the route. Datagrams already on the old link still arrive.
func (n *Network) SetRoute(from, to uint32, l *Link) {
	if l == nil {
		delete(n.routes, simHostPair{from, to})
		return
	}
	n.routes[simHostPair{from, to}] = l
}

// Route returns the link from host from to host to, or nil.
func (n *Network) Route(from, to uint32) *Link { return n.routes[simHostPair{from, to}] }

// A Path is the two links between hosts A and B.
type Path struct {
	AB *Link // from A to B
	BA *Link // from B to A
}

// Connect creates a link from host a to host b with configuration ab and
// one from b to a with ba, and routes the two hosts' datagrams over them.
// Pass the same configuration twice for a symmetric path.
func (n *Network) Connect(a, b uint32, ab, ba LinkConfig) Path {
	p := Path{AB: n.NewLink(ab), BA: n.NewLink(ba)}
	n.SetRoute(a, b, p.AB)
	n.SetRoute(b, a, p.BA)
	return p
}

// Attach attaches ep at address addr and schedules its first
// PollTransmit at the current time. The same Endpoint must not be
// attached twice (use Node.AddAddr for more addresses). It panics if addr
// is in use.
func (n *Network) Attach(addr Addr, ep Endpoint) *Node {
	nd := &Node{net: n, ep: ep}
	nd.out.node = nd
	nd.timer = n.sim.NewTimer(nd.onTimer)
	nd.AddAddr(addr)
	nd.Wake()
	return nd
}

// Node returns the node attached at addr, or nil.
func (n *Network) Node(addr Addr) *Node { return n.nodes[addr] }

func (n *Network) claim(a Addr, nd *Node) {
	if n.nodes[a] != nil {
		panic(fmt.Sprintf("netsim: address %v already in use", a))
	}
	n.nodes[a] = nd
}

// SetNAT puts a NAT in front of the address inside: datagrams sent from
// inside leave with source outside, and datagrams sent to outside are
// delivered to inside. Setting a new outside address for the same inside
// address forgets the old one, which is how a NAT rebinding looks to the
// peer: datagrams still addressed to the old outside address, even those
// already on a link, are dropped when they arrive. Routing uses the
// hosts of the inside addresses.
func (n *Network) SetNAT(inside, outside Addr) {
	n.ClearNAT(inside)
	n.natOut[inside] = outside
	n.natIn[outside] = inside
}

// ClearNAT removes the NAT binding of inside, if any.
func (n *Network) ClearNAT(inside Addr) {
	if old, ok := n.natOut[inside]; ok {
		delete(n.natIn, old)
		delete(n.natOut, inside)
	}
}

// NAT returns the outside address bound to inside, if any.
func (n *Network) NAT(inside Addr) (Addr, bool) {
	a, ok := n.natOut[inside]
	return a, ok
}

// Stats returns the network's counters.
func (n *Network) Stats() NetworkStats {
	s := n.stats
	s.Outstanding = n.pool.outstanding
	return s
}

// send is Outbox.Send: it routes a copy of payload from from to to.
func (n *Network) send(from, to Addr, payload []byte, ecn ECN) {
	d := n.pool.get(payload)
	d.Src, d.Dst, d.ECN, d.ID = from, to, ecn, n.nextID
	n.nextID++
	n.stats.Sent++
	dstHost := to.Host
	if len(n.natOut) > 0 {
		if out, ok := n.natOut[from]; ok {
			d.Src = out
		}
		if in, ok := n.natIn[to]; ok {
			dstHost = in.Host
		}
	}
	l := n.routes[simHostPair{from.Host, dstHost}]
	if l == nil {
		n.stats.Unroutable++
		n.drop(TraceDropUnroutable, nil, d)
		return
	}
	if n.Trace != nil {
		n.trace(TraceSend, l, d)
	}
	l.enqueue(n.sim.now, d)
}

// deliver hands d, which has just left link l, to its endpoint.
func (n *Network) deliver(l *Link, d *Datagram) {
	if len(n.natIn) > 0 {
		if in, ok := n.natIn[d.Dst]; ok {
			d.Dst = in
		}
	}
	nd := n.nodes[d.Dst]
	if nd == nil {
		n.stats.NoEndpoint++
		n.drop(TraceDropNoEndpoint, l, d)
		return
	}
	if n.Trace != nil {
		n.trace(TraceDeliver, l, d)
	}
	now := n.sim.Now()
	nd.ep.HandleDatagram(now, d)
	n.pool.put(d)
	nd.poll(now)
}

// drop recycles d after tracing it.
func (n *Network) drop(k TraceKind, l *Link, d *Datagram) {
	if n.Trace != nil {
		n.trace(k, l, d)
	}
	n.pool.put(d)
}

func (n *Network) trace(k TraceKind, l *Link, d *Datagram) {
	n.Trace(TraceEvent{Time: n.sim.Now(), Kind: k, Link: l, Datagram: d})
}
