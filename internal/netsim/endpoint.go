package netsim

import "time"

// An Endpoint is a protocol state machine attached to the network: it is
// handed time and datagrams and asked for datagrams to send, and it never
// reads a clock, so it is driven exactly like the connection core.
//
// After attaching, and after every HandleDatagram and HandleTimeout, the
// Network calls PollTransmit and then NextDeadline, and wakes the endpoint
// at that deadline: it calls HandleTimeout (if the deadline has passed by
// then), PollTransmit and NextDeadline again. Node.Wake asks for an extra
// PollTransmit, for example after an application command changed the
// endpoint's state from an event scheduled with Sim.At.
//
// All methods are called from the goroutine running the Sim, one at a
// time.
type Endpoint interface {
	// HandleDatagram is given a datagram that arrived at d.Dst (one of
	// the endpoint's addresses) at time now. The endpoint must not keep
	// d or d.Payload after returning; it may modify the payload in place.
	HandleDatagram(now time.Time, d *Datagram)
	// HandleTimeout is called when now has reached the endpoint's
	// deadline.
	HandleTimeout(now time.Time)
	// PollTransmit lets the endpoint send the datagrams it has ready at
	// time now through out, which is valid during the call only.
	PollTransmit(now time.Time, out *Outbox)
	// NextDeadline returns when the endpoint next wants HandleTimeout to
	// be called, or the zero time for never. A deadline that has passed
	// is due immediately, so an endpoint must move or clear its deadline
	// in HandleTimeout.
	NextDeadline() time.Time
}

// An Outbox is how an Endpoint sends datagrams from PollTransmit.
type Outbox struct {
	node *Node
}

// Send sends a copy of payload with ECN codepoint ecn from the endpoint's
// primary address (the first one attached) to the address to.
func (o *Outbox) Send(to Addr, payload []byte, ecn ECN) {
	o.node.net.send(o.node.Addr(), to, payload, ecn)
}

// SendFrom is Send from address from: normally another address of the
// endpoint (a second path), but any address is accepted so that tests can
// spoof sources. The datagram is routed from from.Host.
func (o *Outbox) SendFrom(from, to Addr, payload []byte, ecn ECN) {
	o.node.net.send(from, to, payload, ecn)
}

// Local returns the endpoint's primary address.
func (o *Outbox) Local() Addr { return o.node.Addr() }

// A Node is an Endpoint attached to a Network at one or more addresses.
type Node struct {
	net      *Network
	ep       Endpoint
	addrs    []Addr
	timer    *Timer
	out      Outbox
	detached bool
}

// Endpoint returns the attached endpoint.
func (nd *Node) Endpoint() Endpoint { return nd.ep }

// Addr returns the node's primary address: the first of its addresses,
// or the zero Addr if it has none left.
func (nd *Node) Addr() Addr {
	if len(nd.addrs) == 0 {
		return Addr{}
	}
	return nd.addrs[0]
}

// Addrs returns the node's addresses, primary first.
func (nd *Node) Addrs() []Addr { return append([]Addr(nil), nd.addrs...) }

// AddAddr attaches the node at another address, for example a second
// local address for connection migration. It panics if a is in use or the
// node is detached.
func (nd *Node) AddAddr(a Addr) {
	if nd.detached {
		panic("netsim: AddAddr on a detached node")
	}
	nd.net.claim(a, nd)
	nd.addrs = append(nd.addrs, a)
}

// RemoveAddr detaches the node from a; datagrams that arrive for a
// afterwards are dropped (NetworkStats.NoEndpoint). Removing the primary
// address makes the next one primary.
func (nd *Node) RemoveAddr(a Addr) {
	for i, x := range nd.addrs {
		if x == a {
			nd.addrs = append(nd.addrs[:i], nd.addrs[i+1:]...)
			delete(nd.net.nodes, a)
			return
		}
	}
}

// Detach removes the node from all its addresses and stops calling its
// endpoint, as if the host had crashed: datagrams that arrive for it are
// dropped, its timer is cancelled and Wake does nothing.
func (nd *Node) Detach() {
	for _, a := range nd.addrs {
		delete(nd.net.nodes, a)
	}
	nd.addrs = nil
	nd.timer.Stop()
	nd.detached = true
}

// Wake makes the Network call the endpoint's PollTransmit (and
// HandleTimeout if its deadline has passed) at the current simulated
// time, after the events already scheduled for it.
func (nd *Node) Wake() {
	if !nd.detached {
		nd.timer.reset(nd.net.sim.now)
	}
}

// onTimer runs when the node's timer fires: a deadline or a Wake.
func (nd *Node) onTimer() {
	now := nd.net.sim.Now()
	if dl := nd.ep.NextDeadline(); !dl.IsZero() && !dl.After(now) {
		nd.ep.HandleTimeout(now)
	}
	nd.poll(now)
}

// poll lets the endpoint transmit and re-arms its timer.
func (nd *Node) poll(now time.Time) {
	nd.ep.PollTransmit(now, &nd.out)
	if dl := nd.ep.NextDeadline(); dl.IsZero() {
		nd.timer.Stop()
	} else {
		nd.timer.Reset(dl)
	}
}
