package netem

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"
)

// maxDatagram is the largest datagram relayed.
const maxDatagram = 65535

// A Proxy relays UDP datagrams between clients and one server through the
// emulated link. Create it with New and stop it with Close.
type Proxy struct {
	cfg   Config
	down  *net.UDPConn // client-facing socket
	start time.Time

	mu      sync.Mutex
	closed  bool
	flows   map[netip.AddrPort]*flow
	rebinds int
	log     []Record
	stats   Stats
	rng     *rand.Rand // rebind addresses
	lines   [2]*line

	wg   sync.WaitGroup
	done chan struct{}
}

// Stats counts the proxy's decisions.
type Stats struct {
	Received, Delivered, Dropped, Corrupted, Duplicated [2]int
	// Rebinds counts rebind events.
	Rebinds int
}

// flow is one client address and the upstream socket that stands for it
// towards the server.
type flow struct {
	client netip.AddrPort
	up     *net.UDPConn
}

// line is one direction: its decider, its link and the delay line of
// datagrams in flight, released in time order by one goroutine.
type line struct {
	dir     Direction
	decider *decider
	link    link
	pending pendingHeap
	seq     uint64
	wake    chan struct{}
}

// pendingDatagram is a datagram in flight on a line.
type pendingDatagram struct {
	at   time.Time
	seq  uint64
	data []byte
	fl   *flow
	ecn  byte // the ECN codepoint to send it with (Config.ECN)
}

type pendingHeap []pendingDatagram

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(pendingDatagram)) }
func (h *pendingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// New starts a proxy in front of cfg.Server.
func New(cfg Config) (*Proxy, error) {
	if cfg.Server == nil {
		return nil, errors.New("netem: no server address")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
		if cfg.Server.IP.To4() == nil {
			cfg.Listen = "[::1]:0"
		}
	}
	if cfg.RecordBytes == 0 {
		cfg.RecordBytes = 64
	}
	la, err := net.ResolveUDPAddr("udp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	down, err := net.ListenUDP("udp", la)
	if err != nil {
		return nil, err
	}
	if cfg.ECN {
		if err := enableECN(down, la.IP.To4() == nil); err != nil {
			down.Close()
			return nil, err
		}
	}
	p := &Proxy{
		cfg:   cfg,
		down:  down,
		start: time.Now(),
		flows: map[netip.AddrPort]*flow{},
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x7265)),
		done:  make(chan struct{}),
	}
	for d := range p.lines {
		dir := Direction(d)
		p.lines[d] = &line{
			dir:     dir,
			decider: newDecider(dir, &p.cfg.Scenario, cfg.Link[d].Jitter, cfg.Seed),
			link:    link{cfg: cfg.Link[d]},
			wake:    make(chan struct{}, 1),
		}
	}
	p.wg.Add(3)
	go p.readDown()
	go p.release(p.lines[ToServer])
	go p.release(p.lines[ToClient])
	if r := cfg.Scenario.Rebind; r.First > 0 {
		p.wg.Add(1)
		go p.rebindLoop(r)
	}
	return p, nil
}

// Addr returns the address clients send to.
func (p *Proxy) Addr() *net.UDPAddr { return p.down.LocalAddr().(*net.UDPAddr) }

// Close stops the proxy and closes its sockets. Datagrams in flight are
// lost.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	for _, f := range p.flows {
		f.up.Close()
	}
	p.mu.Unlock()
	err := p.down.Close()
	p.wg.Wait()
	return err
}

// Log returns a copy of the packet log so far.
func (p *Proxy) Log() []Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Record(nil), p.log...)
}

// Stats returns the decision counters so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Rebinds = p.rebinds
	return s
}

func (p *Proxy) logf(format string, args ...any) {
	if p.cfg.Logf != nil {
		p.cfg.Logf("netem %8.3fs "+format, append([]any{time.Since(p.start).Seconds()}, args...)...)
	}
}

// readDown reads client datagrams and sends them down the to-server line.
func (p *Proxy) readDown() {
	defer p.wg.Done()
	buf := make([]byte, maxDatagram)
	oob := make([]byte, 128)
	for {
		n, oobn, _, from, err := p.down.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if p.isClosed() {
				return
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		fl, err := p.flowFor(from)
		if err != nil {
			p.logf("%v: no upstream socket: %v", from, err)
			continue
		}
		p.arrive(p.lines[ToServer], fl, buf[:n], p.ecnOf(oob[:oobn]))
	}
}

func (p *Proxy) isClosed() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// flowFor returns the flow of client address a, creating it and its
// upstream socket on its first datagram.
func (p *Proxy) flowFor(a netip.AddrPort) (*flow, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, net.ErrClosed
	}
	if f := p.flows[a]; f != nil {
		return f, nil
	}
	up, err := p.listenUp(false)
	if err != nil {
		return nil, err
	}
	f := &flow{client: a, up: up}
	p.flows[a] = f
	p.wg.Add(1)
	go p.readUp(f, up)
	return f, nil
}

// listenUp opens an upstream socket on a new port, and with newAddr on a
// random loopback address other than 127.0.0.1. Called with p.mu held.
func (p *Proxy) listenUp(newAddr bool) (*net.UDPConn, error) {
	ip := net.IPv4(127, 0, 0, 1)
	if p.cfg.Server.IP.To4() == nil {
		ip = net.IPv6loopback
	} else if newAddr {
		ip = net.IPv4(127, 0, 0, byte(2+p.rng.IntN(253)))
	}
	up, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err == nil && p.cfg.ECN {
		if err = enableECN(up, ip.To4() == nil); err != nil {
			up.Close()
		}
	}
	return up, err
}

// ecnOf returns the ECN codepoint of a datagram received with control
// messages oob, 0 (Not-ECT) unless the proxy carries ECN.
func (p *Proxy) ecnOf(oob []byte) byte {
	if !p.cfg.ECN || len(oob) == 0 {
		return 0
	}
	return parseECN(oob)
}

// readUp reads the server's datagrams to flow f on socket up, until up
// is closed (by Close or a rebind).
func (p *Proxy) readUp(f *flow, up *net.UDPConn) {
	defer p.wg.Done()
	buf := make([]byte, maxDatagram)
	oob := make([]byte, 128)
	for {
		n, oobn, _, _, err := up.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // ICMP errors on loopback
		}
		p.arrive(p.lines[ToClient], f, buf[:n], p.ecnOf(oob[:oobn]))
	}
}

// arrive applies the scenario and the link to datagram d arriving on l,
// records it, and puts the copies to deliver on the delay line.
func (p *Proxy) arrive(l *line, f *flow, d []byte, ecn byte) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	elapsed := now.Sub(p.start)
	v := l.decider.decide(elapsed, d)
	var at time.Time
	if v.drop == "" {
		var ok bool
		if at, ok = l.link.admit(now, len(d)); !ok {
			v.drop = "queue"
		}
	}
	p.stats.Received[l.dir]++
	p.record(elapsed, l.dir, f, d, v, ecn)
	if v.drop != "" {
		p.stats.Dropped[l.dir]++
		p.logf("%v #%d %dB dropped (%s)", l.dir, l.decider.index, len(d), v.drop)
		return
	}
	data := append([]byte(nil), d...)
	if v.corruptAt >= 0 {
		data[v.corruptAt] = v.corruptTo
		p.stats.Corrupted[l.dir]++
		p.logf("%v #%d %dB byte %d corrupted", l.dir, l.decider.index, len(d), v.corruptAt)
	}
	at = at.Add(v.extraDelay)
	p.push(l, pendingDatagram{at: at, data: data, fl: f, ecn: ecn})
	if v.duplicate {
		p.stats.Duplicated[l.dir]++
		p.logf("%v #%d %dB duplicated", l.dir, l.decider.index, len(d))
		p.push(l, pendingDatagram{at: at, data: append([]byte(nil), data...), fl: f, ecn: ecn})
	}
}

// push adds a datagram to l's delay line. Called with p.mu held.
func (p *Proxy) push(l *line, pd pendingDatagram) {
	l.seq++
	pd.seq = l.seq
	heap.Push(&l.pending, pd)
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// record appends datagram d and its verdict to the packet log. Called
// with p.mu held.
func (p *Proxy) record(elapsed time.Duration, dir Direction, f *flow, d []byte, v verdict, ecn byte) {
	if p.cfg.RecordBytes < 0 {
		return
	}
	keep := len(d)
	if len(d) > 0 && d[0]&0x80 == 0 {
		keep = min(keep, p.cfg.RecordBytes)
	}
	p.log = append(p.log, Record{
		At: elapsed, Dir: dir, Index: p.lines[dir].decider.index, Size: len(d),
		Data: append([]byte(nil), d[:keep]...), Verdict: v.String(), Dropped: v.drop != "",
		Client: f.client, Upstream: addrPortOf(f.up.LocalAddr()), ECN: ecn,
	})
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.AddrPort()
	}
	return netip.AddrPort{}
}

// release delivers l's datagrams when their time comes.
func (p *Proxy) release(l *line) {
	defer p.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		var due []pendingDatagram
		now := time.Now()
		for l.pending.Len() > 0 && !l.pending[0].at.After(now) {
			due = append(due, heap.Pop(&l.pending).(pendingDatagram))
		}
		wait := time.Hour
		if l.pending.Len() > 0 {
			wait = l.pending[0].at.Sub(now)
		}
		ups := make([]*net.UDPConn, len(due))
		for i, pd := range due {
			ups[i] = pd.fl.up // the flow's socket now: after a rebind, the new one
		}
		p.stats.Delivered[l.dir] += len(due)
		p.mu.Unlock()
		for i, pd := range due {
			oob := ecnControl(pd.ecn, p.cfg.Server.IP.To4() == nil)
			if l.dir == ToServer {
				ups[i].WriteMsgUDP(pd.data, oob, p.cfg.Server)
			} else {
				p.down.WriteMsgUDPAddrPort(pd.data, oob, pd.fl.client)
			}
		}
		timer.Reset(wait)
		select {
		case <-p.done:
			return
		case <-l.wake:
		case <-timer.C:
		}
	}
}

// rebindLoop rebinds every flow at r.First and then every r.Every.
func (p *Proxy) rebindLoop(r Rebind) {
	defer p.wg.Done()
	next := r.First
	for {
		t := time.NewTimer(time.Until(p.start.Add(next)))
		select {
		case <-p.done:
			t.Stop()
			return
		case <-t.C:
		}
		p.rebind(r.Addr)
		if r.Every <= 0 {
			return
		}
		next += r.Every
	}
}

// rebind gives every flow a new upstream socket and closes the old one.
func (p *Proxy) rebind(newAddr bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.rebinds++
	for _, f := range p.flows {
		up, err := p.listenUp(newAddr)
		if err != nil {
			p.logf("rebind %v: %v", f.client, err)
			continue
		}
		old := f.up
		f.up = up
		old.Close()
		p.logf("rebind %v: %v -> %v", f.client, old.LocalAddr(), up.LocalAddr())
		p.wg.Add(1)
		go p.readUp(f, up)
	}
}

// Record is one datagram of the packet log.
type Record struct {
	// At is the arrival time since the proxy started.
	At time.Duration
	// Dir is the direction; Index the 1-based index in it.
	Dir   Direction
	Index int
	// Size is the datagram's size.
	Size int
	// Data holds the datagram as it arrived: whole for a long header,
	// the first Config.RecordBytes bytes for a short header.
	Data []byte
	// Verdict describes the decision ("deliver", "drop:rate",
	// "deliver corrupt@7 duplicate", ...); Dropped is true for drops.
	Verdict string
	Dropped bool
	// Client is the client's address; Upstream the proxy's address the
	// server saw for the flow (it changes with rebinds).
	Client, Upstream netip.AddrPort
	// ECN is the datagram's ECN codepoint as it arrived (the two ECN bits
	// of RFC 3168: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE); always 0 unless
	// Config.ECN.
	ECN byte
}

func (r Record) String() string {
	return fmt.Sprintf("%8.3fs %v #%d %dB %s", r.At.Seconds(), r.Dir, r.Index, r.Size, r.Verdict)
}
