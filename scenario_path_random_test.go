package quic

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// The randomized path test: a download during which, on a seeded
// simulated network, the client's NAT rebinds (a new port, a new address),
// flaps back to the old binding (at a random moment, or right when the
// client answers the new path's challenge), the client migrates to a new
// local address, and an attacker replays the client's datagrams from its
// own addresses (fresh copies ahead of the originals, or old ones) and
// relays the server's datagrams to the client as an on-path attacker
// would. After every event of either endpoint (a datagram received, a
// timer, a poll for datagrams to send) the invariants of RFC 9000,
// Sections 8 and 9 are checked:
//
//   - the active path of each side is validated or being validated, so
//     that the anti-amplification limit cannot hold the connection for
//     good (Section 9.3);
//   - nothing is sent to an address the server has not validated beyond
//     three times what it received from that address (Section 9.3.1);
//   - no connection ID is used on two paths (Section 9.5; the server may
//     keep its ID on a NAT rebinding when it has no unused one);
//   - the path table and the peer's connection IDs stay within bounds;
//
// and the transfer must complete with its SHA-256 intact.
//
// make test runs pathRandomSeeds seeds; QUIC_PATH_SEEDS=n runs n (make
// paths-soak), QUIC_PATH_SEED=s runs seed s alone with its event log, and
// QUIC_PATH_KEEPGOING=1 reports every failing seed instead of stopping at
// the first.

const pathRandomSeeds = 200

// pathKeepAlive is the endpoints' keep-alive period; QUIC_PATH_KEEPALIVE
// changes it (0: none, to study how a client that only receives fares).
func pathKeepAlive(t *testing.T) time.Duration {
	if s := os.Getenv("QUIC_PATH_KEEPALIVE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("QUIC_PATH_KEEPALIVE: %v", err)
		}
		return d
	}
	return time.Second
}

// pathSeedRange returns the seeds to run.
func pathSeedRange(t *testing.T) (first, n uint64, verbose bool) {
	if s := os.Getenv("QUIC_PATH_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("QUIC_PATH_SEED: %v", err)
		}
		return seed, 1, true
	}
	n = pathRandomSeeds
	if s := os.Getenv("QUIC_PATH_SEEDS"); s != "" {
		var err error
		if n, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("QUIC_PATH_SEEDS: %v", err)
		}
	}
	if testing.Short() {
		n = min(n, 20)
	}
	return 1, n, false
}

func TestSimPathRandom(t *testing.T) {
	first, n, verbose := pathSeedRange(t)
	var events, migrations, validations, failures, replayed int
	var simTime time.Duration
	keepGoing := os.Getenv("QUIC_PATH_KEEPGOING") != ""
	var failed []uint64
	for seed := first; seed < first+n; seed++ {
		var s *pathScenario
		if !t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s = runPathScenario(t, seed)
			if verbose {
				t.Logf("events:\n%s", strings.Join(s.log, "\n"))
			}
		}) {
			failed = append(failed, seed)
			if !keepGoing {
				t.Fatalf("seed %d failed; rerun it alone with QUIC_PATH_SEED=%d go test -run 'TestSimPathRandom$' -v .", seed, seed)
			}
			continue
		}
		events += s.events
		srv := s.p.server.c
		migrations += srv.paths.migrations
		validations += srv.paths.validationsOK
		failures += srv.paths.validationsFail
		replayed += s.att.sent
		simTime += s.p.sim.Elapsed()
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d seeds failed: %v", len(failed), n, failed)
	}
	t.Logf("%d seeds: %d events, %d attacker datagrams; server migrations %d, validations %d ok and %d failed; %v of simulated time",
		n, events, replayed, migrations, validations, failures, simTime)
}

// pathScenario is one seed's network, connections, attacker and checks.
type pathScenario struct {
	t    testing.TB
	seed uint64
	rng  *mrand.Rand
	p    *simPair
	att  *pathAttacker
	log  []string

	events    int // changes of the network and attacks
	nextPort  uint16
	nextLocal uint16
	busyUntil time.Time // no new event before (a flap in progress)
	// flipOnChallenge, when set, is the NAT binding to go back to when
	// the client next processes a PATH_CHALLENGE; holdAnswer then drops
	// the client's datagrams until the one with its PATH_RESPONSE.
	flipOnChallenge *netsim.Addr
	flipInside      netsim.Addr
	holdAnswer      bool
	// natChanges are NAT rebindings to make when the client next sends
	// a datagram at or after their time: a NAT binds anew when a
	// datagram goes out after the old binding expired.
	natChanges []natChange

	lastActive    netip.AddrPort
	lastValidated bool

	// At the server, by the client-side address: bytes received, sent,
	// and whether the server validated the address at some point.
	recv, sent map[netsim.Addr]int
	validated  map[netsim.Addr]bool
}

func (s *pathScenario) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf("%8.3fs ", s.p.sim.Elapsed().Seconds())+fmt.Sprintf(format, args...))
}

type natChange struct {
	at      time.Time
	inside  netsim.Addr
	outside netsim.Addr
	what    string
}

// rebind makes the NAT bind inside to outside when the client next sends
// a datagram after d.
func (s *pathScenario) rebind(d time.Duration, inside, outside netsim.Addr, what string) {
	s.natChanges = append(s.natChanges, natChange{s.p.sim.Now().Add(d), inside, outside, what})
}

// applyNAT makes the rebindings due, as the client sends a datagram.
func (s *pathScenario) applyNAT(now time.Time) {
	for len(s.natChanges) > 0 && !s.natChanges[0].at.After(now) {
		c := s.natChanges[0]
		s.natChanges = s.natChanges[1:]
		s.p.net.SetNAT(c.inside, c.outside)
		s.logf("  NAT binds %v to %v (%s)", c.inside, c.outside, c.what)
	}
}

// checkedEndpoint runs after every call into an endpoint.
type checkedEndpoint struct {
	netsim.Endpoint
	after func()
}

func (e *checkedEndpoint) HandleDatagram(now time.Time, d *netsim.Datagram) {
	e.Endpoint.HandleDatagram(now, d)
	e.after()
}

func (e *checkedEndpoint) HandleTimeout(now time.Time) {
	e.Endpoint.HandleTimeout(now)
	e.after()
}

func (e *checkedEndpoint) PollTransmit(now time.Time, out *netsim.Outbox) {
	e.Endpoint.PollTransmit(now, out)
	e.after()
}

// The addresses of the scenario: the client inside its NAT on host 1
// (from port 5000), the server on host 2, the NAT's outside addresses on
// hosts 1 and 11 to 13, and the attacker on host 4 (from port 600), with
// a link to the server faster than the client's.
var (
	pathOutsideHosts = []uint32{1, 11, 12, 13}
	pathAttackerHost = uint32(4)
)

func runPathScenario(t *testing.T, seed uint64) *pathScenario {
	rng := mrand.New(mrand.NewPCG(seed, 0x9a75))
	// A slow link, so that the download lasts for several events.
	link := testLink
	link.Bandwidth = int64(1+rng.IntN(8)) * 1_000_000
	link.QueuePackets = 64
	link.Delay = time.Duration(2+rng.IntN(40)) * time.Millisecond
	if rng.IntN(3) == 0 {
		link.LossProb = 0.01
	}
	// A client that only receives sends nothing but acknowledgments:
	// when the server's PATH_CHALLENGE to the address the NAT just gave
	// it is lost, the server cannot send again there (it may send three
	// times what it received) and the client has nothing to say. A
	// keep-alive gets it out (RFC 9000, Section 10.1.2: "An endpoint
	// might need to send ack-eliciting packets to avoid an idle timeout
	// if it is expecting response data").
	ctls, stls := pathTestTLS(t)
	p := newSimPairOpts(t, link, seed, simPairOpts{config: &Config{KeepAlivePeriod: pathKeepAlive(t)}, ctls: ctls, stls: stls})
	s := &pathScenario{t: t, seed: seed, rng: rng, p: p, nextPort: 40000, nextLocal: 5001,
		recv: map[netsim.Addr]int{}, sent: map[netsim.Addr]int{}, validated: map[netsim.Addr]bool{}}
	caddr, saddr := p.cnode.Addr(), p.snode.Addr()
	p.net.SetNAT(caddr, s.newOutside(1))
	defer func() {
		if t.Failed() {
			t.Logf("seed %d events:\n%s\n%s", seed, strings.Join(s.log, "\n"), s.dump())
		}
	}()

	// Endpoints wrapped to check after every event.
	p.snode.Detach()
	p.cnode.Detach()
	p.snode = p.net.Attach(saddr, &checkedEndpoint{p.server, s.check})
	p.cnode = p.net.Attach(caddr, &checkedEndpoint{p.client, s.check})
	s.att = &pathAttacker{s: s, server: saddr}
	fast := netsim.LinkConfig{Delay: link.Delay / 4}
	p.net.Connect(pathAttackerHost, 2, fast, fast)
	s.att.node = p.net.Attach(netsim.Addr{Host: pathAttackerHost, Port: 600}, s.att)
	for i := range 3 {
		s.att.node.AddAddr(netsim.Addr{Host: pathAttackerHost, Port: uint16(601 + i)})
	}

	// Accounting at the server.
	p.server.dropIn = func(now time.Time, d *netsim.Datagram) bool {
		s.recv[d.Src] += len(d.Payload)
		return false
	}
	srvIDs := watchConnIDs(t, p.server, 8, true)
	prevSend := p.server.onSend
	p.server.onSend = func(from, to netsim.Addr, d []byte, challenge bool) {
		prevSend(from, to, d, challenge)
		s.sent[to] += len(d)
		s.checkAmplification(to)
	}
	watchConnIDs(t, p.client, 8, false)
	_ = srvIDs
	// The client's datagrams: the attacker's supply, and the NAT flip
	// on a challenge.
	p.client.onSend = chainSend(p.client.onSend, func(from, to netsim.Addr, d []byte, _ bool) {
		s.applyNAT(p.sim.Now())
		s.att.observe(d)
	})
	p.client.dropOut = func(now time.Time, d []byte) bool {
		if !s.holdAnswer {
			return false
		}
		if !p.client.c.activePath().responseToSend {
			s.holdAnswer = false // this datagram carries the PATH_RESPONSE
			return false
		}
		return true
	}

	p.connect(t)
	s.logf("connected; link %d Mbit/s, delay %v, loss %v", link.Bandwidth/1_000_000, link.Delay, link.LossProb)
	p.client.c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		if f.Type == wire.FrameTypePathChallenge && s.flipOnChallenge != nil {
			back := *s.flipOnChallenge
			s.flipOnChallenge = nil
			p.net.SetNAT(s.flipInside, back)
			s.holdAnswer = s.rng.IntN(2) == 0
			s.logf("  the client got a PATH_CHALLENGE: NAT back to %v (answer first: %v)", back, s.holdAnswer)
		}
	}

	size := (128 + rng.IntN(384)) << 10
	next := p.sim.Now().Add(time.Duration(20+rng.IntN(200)) * time.Millisecond)
	events := 0
	maxEvents := 3 + rng.IntN(8)
	s.download(size, func(now time.Time) {
		if events >= maxEvents || now.Before(next) || now.Before(s.busyUntil) {
			return
		}
		events++
		s.events++
		s.event(now)
		next = now.Add(time.Duration(10+rng.IntN(250)) * time.Millisecond)
	})
	// Stray timers and the attacker's last datagrams: the invariants
	// still hold while the connection idles.
	p.sim.RunFor(time.Second)
	return s
}

// chainSend returns an onSend hook that calls a, if set, then b.
func chainSend(a, b func(from, to netsim.Addr, d []byte, challenge bool)) func(from, to netsim.Addr, d []byte, challenge bool) {
	return func(from, to netsim.Addr, d []byte, challenge bool) {
		if a != nil {
			a(from, to, d, challenge)
		}
		b(from, to, d, challenge)
	}
}

// newOutside returns a fresh outside address of the NAT on host.
func (s *pathScenario) newOutside(host uint32) netsim.Addr {
	s.nextPort++
	return netsim.Addr{Host: host, Port: s.nextPort}
}

// clientInside returns the client's current local address, and its NAT
// binding.
func (s *pathScenario) clientInside() (inside, outside netsim.Addr) {
	inside = simAddr(s.p.client.c.activePath().addrs.local)
	outside, _ = s.p.net.NAT(inside)
	return inside, outside
}

// event changes the network or attacks, at random.
func (s *pathScenario) event(now time.Time) {
	inside, cur := s.clientInside()
	rtt := 2 * s.p.path.AB.Config().Delay
	switch k := s.rng.IntN(9); k {
	case 0: // NAT rebinding, new port
		to := s.newOutside(cur.Host)
		s.rebind(0, inside, to, "new port")
		s.logf("NAT rebinding %v -> %v (port)", cur, to)
	case 1: // NAT rebinding, new address
		to := s.newOutside(pathOutsideHosts[s.rng.IntN(len(pathOutsideHosts))])
		s.rebind(0, inside, to, "new address")
		s.logf("NAT rebinding %v -> %v (address)", cur, to)
	case 2: // NAT flap: a new binding, and back after a while
		to := s.newOutside(pathOutsideHosts[s.rng.IntN(len(pathOutsideHosts))])
		back := time.Duration(s.rng.Int64N(int64(3*rtt) + 1))
		s.rebind(0, inside, to, "flap")
		s.rebind(back, inside, cur, "flap back")
		s.busyUntil = now.Add(back + time.Millisecond)
		s.logf("NAT flap %v -> %v for %v", cur, to, back)
	case 3: // NAT flap back when the client answers the new path's challenge
		to := s.newOutside(pathOutsideHosts[s.rng.IntN(len(pathOutsideHosts))])
		s.rebind(0, inside, to, "flap")
		s.flipOnChallenge, s.flipInside = &cur, inside
		s.busyUntil = now.Add(5 * rtt)
		s.p.sim.After(5*rtt, func() { s.flipOnChallenge = nil })
		s.logf("NAT flap on challenge: %v -> %v", cur, to)
	case 4, 5: // copies of the client's next datagrams from the attacker, ahead of the originals or late
		n := 1 + s.rng.IntN(3)
		delay := time.Duration(0)
		if k == 5 {
			delay = time.Duration(s.rng.Int64N(int64(2 * rtt)))
		}
		s.att.capture(n, delay)
		s.logf("attacker: copies of the next %d client datagrams, %v late", n, delay)
	case 6: // an old client datagram again from an attacker address
		s.att.replayOld(now)
		s.logf("attacker: replays an old client datagram")
	case 7: // on-path relay for a while
		d := time.Duration(50+s.rng.IntN(1500)) * time.Millisecond
		s.att.relay(now, d)
		s.logf("attacker: relays for %v", d)
	case 8: // the client moves to a new local address
		local := netsim.Addr{Host: 1, Port: s.nextLocal}
		s.nextLocal++
		out := s.newOutside(pathOutsideHosts[s.rng.IntN(len(pathOutsideHosts))])
		s.p.cnode.AddAddr(local)
		s.p.net.SetNAT(local, out)
		target := pathAddrs{local: local.AddrPort(), remote: s.p.client.c.activePath().addrs.remote}
		err := s.p.client.c.probePath(now, target, false, true, nil)
		s.logf("client migrates to %v (NAT %v): %v", local, out, err)
	}
	s.p.cnode.Wake()
	s.p.snode.Wake()
}

// download has the server send size bytes and the client read them,
// calling during at every step, and checks the data's SHA-256.
func (s *pathScenario) download(size int, during func(now time.Time)) {
	p := s.p
	st, _, err := p.server.c.streams.openStream(true)
	if err != nil || st == nil {
		s.t.Fatalf("openStream: %v", err)
	}
	want := sha256.New()
	for off := 0; off < size; off += 64 << 10 {
		want.Write(testPattern(0, off, min(64<<10, size-off)))
	}
	w := newPatternWriter(st, 0, size)
	got := sha256.New()
	var rs *stream
	buf := make([]byte, 64<<10)
	n, eof := 0, false
	p.run(s.t, 120*time.Second, func() bool {
		if !w.closed {
			w.step()
		}
		if rs == nil {
			if l := acceptAll(p.client.c, true); len(l) > 0 {
				rs = l[0]
			}
		}
		for rs != nil && !eof {
			k, err := simRead(rs, buf)
			got.Write(buf[:k])
			n += k
			if err == io.EOF {
				eof = true
			} else if err != nil {
				s.t.Fatalf("read: %v", err)
			}
			if k == 0 {
				break
			}
		}
		during(p.sim.Now())
		return eof
	})
	if n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		s.t.Fatalf("received %d bytes of %d, SHA-256 %x, want %x", n, size, got.Sum(nil), want.Sum(nil))
	}
	s.logf("download of %d bytes complete, SHA-256 intact", size)
}

// check verifies the invariants after an event of either endpoint.
func (s *pathScenario) check() {
	srv, cl := s.p.server.c, s.p.client.c
	if srv == nil || !srv.handshakeConfirmed || !cl.handshakeConfirmed {
		return
	}
	if a := srv.activePath(); a.addrs.remote != s.lastActive || a.validated != s.lastValidated {
		s.lastActive, s.lastValidated = a.addrs.remote, a.validated
		s.logf("  server sends to %v, validated %v", a.addrs.remote, a.validated)
	}
	for _, c := range []*connState{srv, cl} {
		if c.closeState != stateActive {
			s.t.Fatalf("%v closed: %v", c.role, c.closeErr)
		}
		p := c.activePath()
		if !p.inUse || !(p.validated || p.validating) {
			s.t.Fatalf("%v: active path %v in use %v, validated %v, validating %v", c.role, p.addrs, p.inUse, p.validated, p.validating)
		}
		n := 0
		for i := range c.paths.list {
			if c.paths.list[i].inUse {
				n++
			}
		}
		if n > maxPaths || c.peerIDs.activeCount() > int(c.peerIDs.limit) {
			s.t.Fatalf("%v: %d paths, %d peer connection IDs", c.role, n, c.peerIDs.activeCount())
		}
	}
	s.noteValidated()
}

// noteValidated records the client-side addresses the server validated.
func (s *pathScenario) noteValidated() {
	srv := s.p.server.c
	for i := range srv.paths.list {
		if p := &srv.paths.list[i]; p.inUse && p.validated && p.addrs.remote.IsValid() {
			s.validated[simAddr(p.addrs.remote)] = true
		}
	}
}

// checkAmplification checks a datagram the server just sent to a: "an
// endpoint MUST limit the amount of data it sends to the unvalidated
// address to three times the amount of data received from that address"
// (RFC 9000, Section 9.3.1).
func (s *pathScenario) checkAmplification(a netsim.Addr) {
	srv := s.p.server.c
	if srv == nil || !srv.handshakeConfirmed {
		if srv != nil && srv.addressValidated {
			s.validated[a] = true // the handshake's address (Section 8.1)
		}
		return
	}
	s.noteValidated()
	if !s.validated[a] && s.sent[a] > 3*s.recv[a] {
		s.t.Fatalf("server sent %d bytes to %v, not validated, which sent %d", s.sent[a], a, s.recv[a])
	}
}

// pathAttacker copies the client's datagrams and sends them to the server
// from its own addresses, and, while relaying, passes what the server
// sends to those addresses on to the client, spoofing the server's
// address: an off-path attacker that becomes on-path (RFC 9000,
// Section 9.3.3).
type pathAttacker struct {
	s      *pathScenario
	node   *netsim.Node
	server netsim.Addr
	// history holds recent client datagrams.
	history [][]byte
	// captureN copies of the next client datagrams go out captureDelay
	// after them, from captureFrom.
	captureN     int
	captureDelay time.Duration
	captureFrom  netsim.Addr
	relayUntil   time.Time
	relayFrom    netsim.Addr
	forwards     map[netsim.Addr]bool // addresses whose datagrams from the server go on to the client
	queue        []pathAttackSend
	sent         int
}

type pathAttackSend struct {
	at       time.Time
	from, to netsim.Addr
	d        []byte
}

func (a *pathAttacker) from() netsim.Addr {
	addrs := a.node.Addrs()
	return addrs[a.s.rng.IntN(len(addrs))]
}

func (a *pathAttacker) capture(n int, delay time.Duration) {
	a.captureN, a.captureDelay, a.captureFrom = n, delay, a.from()
}

func (a *pathAttacker) relay(now time.Time, d time.Duration) {
	a.relayUntil, a.relayFrom = now.Add(d), a.from()
	if a.forwards == nil {
		a.forwards = map[netsim.Addr]bool{}
	}
	a.forwards[a.relayFrom] = true
}

func (a *pathAttacker) replayOld(now time.Time) {
	if len(a.history) == 0 {
		return
	}
	d := a.history[a.s.rng.IntN(len(a.history))]
	a.push(now, a.from(), a.server, d)
}

// observe sees a datagram the client sends.
func (a *pathAttacker) observe(d []byte) {
	now := a.s.p.sim.Now()
	c := append([]byte(nil), d...)
	if len(a.history) < 64 {
		a.history = append(a.history, c)
	} else {
		a.history[a.s.rng.IntN(len(a.history))] = c
	}
	if a.captureN > 0 {
		a.captureN--
		a.push(now.Add(a.captureDelay), a.captureFrom, a.server, c)
	}
	if now.Before(a.relayUntil) {
		a.push(now, a.relayFrom, a.server, c)
	}
}

func (a *pathAttacker) push(at time.Time, from, to netsim.Addr, d []byte) {
	a.queue = append(a.queue, pathAttackSend{at, from, to, d})
	a.node.Wake()
}

func (a *pathAttacker) HandleDatagram(now time.Time, d *netsim.Datagram) {
	if d.Src != a.server || !a.forwards[d.Dst] {
		return
	}
	// On the path: what the server sends here goes on to the client, as
	// if from the server. An attacker that stops racing the client's
	// datagrams still forwards: one that drops them can end the
	// connection, which no endpoint can prevent ("This places the
	// attacker on-path, giving it the ability to observe or drop all
	// subsequent packets", RFC 9000, Section 9.3.3).
	_, outside := a.s.clientInside()
	a.push(now, a.server, outside, append([]byte(nil), d.Payload...))
}

func (a *pathAttacker) HandleTimeout(time.Time) {}

func (a *pathAttacker) PollTransmit(now time.Time, out *netsim.Outbox) {
	q := a.queue[:0]
	for _, x := range a.queue {
		if x.at.After(now) {
			q = append(q, x)
			continue
		}
		out.SendFrom(x.from, x.to, x.d, netsim.NotECT)
		a.sent++
	}
	a.queue = q
}

func (a *pathAttacker) NextDeadline() time.Time {
	var d time.Time
	for _, x := range a.queue {
		if d.IsZero() || x.at.Before(d) {
			d = x.at
		}
	}
	return d
}

// dump describes both ends' paths, for a failure's log.
func (s *pathScenario) dump() string {
	var b strings.Builder
	for _, c := range []*connState{s.p.server.c, s.p.client.c} {
		if c == nil {
			continue
		}
		fmt.Fprintf(&b, "%v: active %d, fallback %d, peer ID in use %d, unused %d, state %d\n", c.role, c.paths.active, c.paths.fallback,
			c.peerIDs.curSeq, c.peerIDs.activeCount(), c.closeState)
		for i := range c.paths.list {
			p := &c.paths.list[i]
			if p.inUse {
				fmt.Fprintf(&b, "  path %d %v->%v validated %v validating %v recv %d sent %d dcid %v/%d\n", i, p.addrs.local, p.addrs.remote,
					p.validated, p.validating, p.recv, p.sent, p.hasDCID, p.dcidSeq)
			}
		}
	}
	return b.String()
}

// pathTestTLS is testTLS with Ed25519 keys, made once: its signatures
// have a fixed length, so that a seed's run is the same every time (an
// ECDSA signature's length varies with its random nonce, and with it the
// timing of everything after).
var pathTestTLS = func() func(testing.TB) (*tls.Config, *tls.Config) {
	var once sync.Once
	var client, server *tls.Config
	return func(t testing.TB) (*tls.Config, *tls.Config) {
		once.Do(func() {
			pub, priv, _ := ed25519.GenerateKey(rand.Reader)
			tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
				DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
				IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
				ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
			if err != nil {
				panic(err)
			}
			cert, _ := x509.ParseCertificate(der)
			roots := x509.NewCertPool()
			roots.AddCert(cert)
			if client, err = handshake.PrepareTLSConfig(&tls.Config{RootCAs: roots, ServerName: "localhost", NextProtos: []string{"test"}}); err != nil {
				panic(err)
			}
			if server, err = handshake.PrepareTLSConfig(&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: priv}}, NextProtos: []string{"test"}}); err != nil {
				panic(err)
			}
		})
		return client.Clone(), server.Clone()
	}
}()
