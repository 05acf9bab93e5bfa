package quic

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/handshake"
	"github.com/quicstack/quic/internal/netsim"
	"github.com/quicstack/quic/wire"
)

// recordingController records what reaches it.
type recordingController struct {
	congestion.Controller
	events []congestion.CongestionEvent
	acked  int
}

func (r *recordingController) OnCongestionEvent(now time.Time, ev *congestion.CongestionEvent) {
	e := *ev
	e.Lost = append([]congestion.LostPacket(nil), ev.Lost...)
	r.events = append(r.events, e)
}
func (r *recordingController) OnAck(now time.Time, ev *congestion.AckEvent) { r.acked += len(ev.Acked) }

// "Loss of a QUIC packet that is carried in a PMTU probe is therefore not
// a reliable indication of congestion and SHOULD NOT trigger a congestion
// control reaction" (RFC 9000, Section 14.4): the wrapper drops ignored
// packets from loss events, and the whole event if nothing else was lost.
func TestPathControllerIgnoresProbes(t *testing.T) {
	rec := &recordingController{}
	w := newPathController(rec)
	var lost []int64
	w.onLost = func(pn int64, _ int) { lost = append(lost, pn) }
	now := time.Unix(1, 0)
	w.ignorePacket(7)
	w.OnCongestionEvent(now, &congestion.CongestionEvent{Lost: []congestion.LostPacket{{PacketNumber: 7, Bytes: 1400, SentTime: now}}, LostBytes: 1400})
	if len(rec.events) != 0 || len(lost) != 0 {
		t.Fatalf("a lost probe reached the controller: %+v, black-hole detection saw %v", rec.events, lost)
	}
	w.ignorePacket(9)
	w.OnCongestionEvent(now, &congestion.CongestionEvent{Lost: []congestion.LostPacket{
		{PacketNumber: 8, Bytes: 1200, SentTime: now}, {PacketNumber: 9, Bytes: 1400, SentTime: now.Add(time.Millisecond)},
	}, LostBytes: 2600, SentTime: now.Add(time.Millisecond)})
	if len(rec.events) != 1 {
		t.Fatalf("%d events, want 1", len(rec.events))
	}
	if e := rec.events[0]; len(e.Lost) != 1 || e.Lost[0].PacketNumber != 8 || e.LostBytes != 1200 || !e.SentTime.Equal(now) {
		t.Errorf("event %+v, want packet 8 alone, sent at %v", e, now)
	}
	// Acknowledged probes free their slot; an ECN event always passes.
	w.ignorePacket(10)
	w.OnAck(now, &congestion.AckEvent{Acked: []congestion.AckedPacket{{PacketNumber: 10, Bytes: 1400}}})
	if w.take(10) {
		t.Error("acknowledged probe still ignored")
	}
	w.OnCongestionEvent(now, &congestion.CongestionEvent{ECN: true, SentTime: now})
	if len(rec.events) != 2 || !rec.events[1].ECN {
		t.Errorf("ECN event not passed: %+v", rec.events)
	}
}

// A path keeps its own connection ID of the peer's (RFC 9000, Section 9.5):
// reserve hands out unused IDs, and a path's ID is retired when the path
// goes.
func TestPeerConnIDsForPaths(t *testing.T) {
	s := newTestPeerConnIDs(4)
	if _, _, ok := s.reserve(); ok {
		t.Fatal("reserved an ID the peer never gave")
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if err := s.onNewConnectionID(connIDTestNCID(seq, 0)); err != nil {
			t.Fatal(err)
		}
	}
	seq, cid, ok := s.reserve()
	if !ok || seq != 1 || cid != connIDTestCID(1) {
		t.Fatalf("reserve: %d %v %v", seq, cid, ok)
	}
	if seq, _, _ := s.reserve(); seq != 2 {
		t.Fatalf("second reserve gave %d, want 2", seq)
	}
	if !s.setCurrent(2) || s.active() != connIDTestCID(2) {
		t.Fatal("setCurrent(2)")
	}
	if s.retire(2) {
		t.Fatal("retired the ID in use")
	}
	if !s.retire(0) || !s.retire(1) {
		t.Fatal("retire")
	}
	if _, ok := s.bySeq(1); ok {
		t.Error("retired ID still active")
	}
	if f, ok := s.nextFrame(); !ok || f.SequenceNumber != 0 {
		t.Errorf("RETIRE_CONNECTION_ID %v %v, want sequence 0", f, ok)
	}
	// A retired ID coming again is retired again, not reused.
	if err := s.onNewConnectionID(connIDTestNCID(1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.bySeq(1); ok {
		t.Error("a retired ID became active again")
	}
}

// The path table never holds more than maxPaths paths, and a flood of new
// addresses never evicts the active path or the fallback.
func TestPathTableBounded(t *testing.T) {
	var ps paths
	ps.init(true)
	ps.list[0].addrs = pathAddrs{remote: netip.MustParseAddrPort("192.0.2.1:1000")}
	ps.fallback = ps.add(netPath{addrs: pathAddrs{remote: netip.MustParseAddrPort("192.0.2.1:1001")}, validated: true})
	for i := 0; i < 100; i++ {
		a := pathAddrs{remote: netip.AddrPortFrom(netip.MustParseAddr("198.51.100.7"), uint16(2000+i))}
		if ps.add(netPath{addrs: a, lastRecv: time.Unix(int64(i), 0)}) < 0 {
			t.Fatal("no room for a new path")
		}
	}
	if ps.find(ps.list[0].addrs) != 0 || ps.find(pathAddrs{remote: netip.MustParseAddrPort("192.0.2.1:1001")}) != ps.fallback {
		t.Fatal("the active path or the fallback was evicted")
	}
	n := 0
	for i := range ps.list {
		if ps.list[i].inUse {
			n++
		}
	}
	if n != maxPaths {
		t.Errorf("%d paths", n)
	}
	// The most recent ones are kept.
	if ps.find(pathAddrs{remote: netip.AddrPortFrom(netip.MustParseAddr("198.51.100.7"), 2099)}) < 0 {
		t.Error("latest path evicted")
	}
}

func TestLocalMatches(t *testing.T) {
	ap := netip.MustParseAddrPort
	for _, tt := range []struct {
		a, b netip.AddrPort
		want bool
	}{
		{ap("10.0.0.1:443"), ap("10.0.0.1:443"), true},
		{ap("10.0.0.1:443"), ap("10.0.0.2:443"), false},
		{ap("10.0.0.1:443"), ap("10.0.0.1:444"), false},
		{ap("0.0.0.0:443"), ap("10.0.0.2:443"), true}, // wildcard socket
		{ap("[::]:443"), ap("10.0.0.2:443"), true},    // dual-stack wildcard
		{ap("[::ffff:10.0.0.1]:443"), ap("10.0.0.1:443"), true},
		{netip.AddrPort{}, ap("10.0.0.1:443"), true}, // unknown
	} {
		if got := localMatches(tt.a, tt.b); got != tt.want {
			t.Errorf("localMatches(%v, %v) = %v", tt.a, tt.b, got)
		}
	}
}

// "After verifying a new client address, the server SHOULD send new
// address validation tokens (Section 8) to the client." (RFC 9000,
// Section 9.3) The rule is the core's (connState.newTokenAfterMigration),
// so the simulator sees it: after the client's NAT moves it to a new
// address and the server validated that address, the client gets a
// NEW_TOKEN token bound to it.
func TestSimNewTokenAfterMigration(t *testing.T) {
	p := newSimPair(t, testLink, nil, 93)
	caddr := p.cnode.Addr()
	p.net.SetNAT(caddr, netsim.Addr{Host: 1, Port: 40000})
	var tokens [][]byte
	p.client.c.onFrame = func(_ ackhandler.Space, f *wire.Frame) {
		if f.Type == wire.FrameTypeNewToken {
			tokens = append(tokens, bytes.Clone(f.NewToken.Token))
		}
	}
	p.connect(t)
	p.run(t, time.Second, func() bool { return len(tokens) > 0 }) // the token after the handshake
	before := len(tokens)
	moved := netsim.Addr{Host: 3, Port: 40002}
	p.net.SetNAT(caddr, moved)
	s, _, err := p.client.c.streams.openStream(true)
	if err != nil || s == nil {
		t.Fatal(err)
	}
	simWrite(s, []byte("moved"))
	p.run(t, 5*time.Second, func() bool { return len(tokens) > before })
	if got := p.server.c.activePath(); got.addrs.remote != moved.AddrPort() || !got.validated {
		t.Fatalf("server's active path %v (validated %v), want %v validated", got.addrs.remote, got.validated, moved.AddrPort())
	}
	tp, err := handshake.NewTokenProtector(simTokenKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tp.Open(tokens[len(tokens)-1], moved.AddrPort(), p.sim.Now(), time.Minute, time.Hour); err != nil {
		t.Errorf("the token sent after the migration is not for the new address: %v", err)
	}
}
