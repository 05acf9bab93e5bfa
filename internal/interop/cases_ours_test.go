package interop

// What the interop cases learn from our own endpoints, for the checks the
// relay's packet log cannot make without decrypting 1-RTT packets: the
// connections' statistics (key updates, migrations, the peer's address)
// and, through a Tracer, the frames they sent and received (ACK frames
// with ECN counts, PATH_CHALLENGE and PATH_RESPONSE).

import (
	"context"
	"sync"
	"testing"

	ours "github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/netem"
	"github.com/quicstack/quic/wire"
)

// ourConns collects the connections of one of our endpoints.
type ourConns struct {
	mu sync.Mutex
	cs []*ours.Conn
}

func (o *ourConns) add(c *ours.Conn) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cs = append(o.cs, c)
}

func (o *ourConns) all() []*ours.Conn {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*ours.Conn(nil), o.cs...)
}

// ourObs sums the frames our connections sent and received, from their
// Tracer.
type ourObs struct {
	mu sync.Mutex
	// ecnSent and ecnRcvd are the largest ECN counts of the ACK frames
	// sent and received (RFC 9000, Section 19.3.2).
	ecnSent, ecnRcvd wire.ECNCounts
	// PATH_CHALLENGE and PATH_RESPONSE frames sent and received.
	challengesSent, challengesRcvd, responsesSent, responsesRcvd int
}

// tracer is a Config.Tracer.
func (o *ourObs) tracer(context.Context, bool, ours.ConnectionID) *ours.Tracer {
	var f wire.Frame // one per connection: its calls come one at a time
	scan := func(payload []byte, sent bool) {
		o.mu.Lock()
		defer o.mu.Unlock()
		for len(payload) > 0 {
			n, err := wire.ParseFrame(payload, &f, 0)
			if err != nil || n <= 0 {
				return
			}
			payload = payload[n:]
			switch f.Type {
			case wire.FrameTypeAckECN:
				e := &o.ecnRcvd
				if sent {
					e = &o.ecnSent
				}
				e.ECT0, e.ECT1, e.CE = max(e.ECT0, f.Ack.ECN.ECT0), max(e.ECT1, f.Ack.ECN.ECT1), max(e.CE, f.Ack.ECN.CE)
			case wire.FrameTypePathChallenge:
				if sent {
					o.challengesSent++
				} else {
					o.challengesRcvd++
				}
			case wire.FrameTypePathResponse:
				if sent {
					o.responsesSent++
				} else {
					o.responsesRcvd++
				}
			}
		}
	}
	return &ours.Tracer{
		PacketSent:     func(p ours.PacketInfo) { scan(p.Payload, true) },
		PacketReceived: func(p ours.PacketInfo) { scan(p.Payload, false) },
	}
}

func (o *ourObs) snapshot() ourObs {
	o.mu.Lock()
	defer o.mu.Unlock()
	return ourObs{ecnSent: o.ecnSent, ecnRcvd: o.ecnRcvd, challengesSent: o.challengesSent,
		challengesRcvd: o.challengesRcvd, responsesSent: o.responsesSent, responsesRcvd: o.responsesRcvd}
}

// ourSides returns the connections of our endpoints in run r, by role.
func ourSides(r *caseRun) map[string][]*ours.Conn {
	m := map[string][]*ours.Conn{}
	if r.p.client == implOurs && r.cl != nil {
		m["client"] = r.cl.ours.all()
	}
	if r.p.server == implOurs && r.srv != nil {
		m["server"] = r.srv.ours.all()
	}
	return m
}

// caseKeyUpdateInterval makes our endpoints initiate a key update every
// 100 packets in the keyupdate case, as quic-go does for its first one.
const caseKeyUpdateInterval = 100

// checkKeyUpdate: both sides sent 1-RTT packets in key phase 1. quic-go
// tells from its qlog (it initiates an update after 100 packets and then
// receives our packets in the new phase). Our endpoints count the updates
// they initiated or followed; either flips both directions' keys, so an
// endpoint with one sends in the new phase from then on. Facing x/net/quic,
// which never initiates, our endpoint must count two: it initiates the
// second only after a packet of the peer's in the first update's phase
// arrived (RFC 9001, Section 6; handshake.OneRTTKeys.canUpdate).
func checkKeyUpdate(t *testing.T, r *caseRun) {
	if r.p.client == implQuicGo || r.p.server == implQuicGo {
		rec := r.cl.rec
		if rec == nil {
			rec = r.srv.rec
		}
		if rec == nil {
			t.Fatal("no quic-go trace")
		}
		checkQuicGoKeyUpdate(t, rec)
	}
	want := 1
	if r.p.client == implXNet || r.p.server == implXNet {
		want = 2
	}
	for role, cs := range ourSides(r) {
		if len(cs) != 1 {
			t.Errorf("our %s had %d connections, want 1", role, len(cs))
			continue
		}
		if n := cs[0].Stats().KeyUpdates; n < want {
			t.Errorf("our %s went through %d key updates, want >= %d", role, n, want)
		} else {
			t.Logf("our %s went through %d key updates", role, n)
		}
	}
}

// checkECN: in each direction at least one datagram crossed the relay
// marked ECT and none CE, and each side reported the other's marks in
// ACK frames with ECN counts (seen in our endpoint's frames: the ACKs it
// sent count the peer's marks, those it received count ours).
func checkECN(t *testing.T, r *caseRun) {
	var ect, ce [2]int
	for _, d := range r.trace {
		switch d.ECN {
		case 0b01, 0b10:
			ect[d.Dir]++
		case 0b11:
			ce[d.Dir]++
		}
	}
	for _, dir := range []netem.Direction{netem.ToServer, netem.ToClient} {
		t.Logf("%v: %d datagrams ECT-marked, %d CE", dir, ect[dir], ce[dir])
		if ect[dir] == 0 || ce[dir] != 0 {
			t.Errorf("%v: %d ECT-marked datagrams and %d CE, want > 0 and 0", dir, ect[dir], ce[dir])
		}
	}
	obs := r.cl.obs
	if obs == nil {
		obs = r.srv.obs
	}
	if obs == nil {
		t.Fatal("no trace of our endpoint")
	}
	o := obs.snapshot()
	t.Logf("our ACK ECN counts: sent %+v, received %+v", o.ecnSent, o.ecnRcvd)
	if o.ecnSent.ECT0+o.ecnSent.ECT1 == 0 {
		t.Error("our endpoint sent no ACK frame counting ECT-marked packets of the peer's")
	}
	if o.ecnRcvd.ECT0+o.ecnRcvd.ECT1 == 0 {
		t.Error("the peer sent no ACK frame counting ECT-marked packets of ours")
	}
}

// checkRebindServer: our server followed the client to a new path after
// validating it: it counts a migration, sent PATH_CHALLENGE and received
// PATH_RESPONSE (RFC 9000, Section 9.3).
func checkRebindServer(t *testing.T, r *caseRun) {
	if r.p.server != implOurs {
		return
	}
	cs := r.srv.ours.all()
	if len(cs) != 1 {
		t.Fatalf("our server had %d connections, want 1", len(cs))
	}
	o := r.srv.obs.snapshot()
	n := cs[0].Stats().Migrations
	t.Logf("our server: %d migrations, %d PATH_CHALLENGE sent, %d PATH_RESPONSE received", n, o.challengesSent, o.responsesRcvd)
	if n == 0 || o.challengesSent == 0 || o.responsesRcvd == 0 {
		t.Error("our server did not validate a new path and move there")
	}
}

// checkConnMigration: our client moved to the server's preferred address
// after validating it. The preferred address is the server's second
// socket, not behind the relay: the client's packets after the move do
// not cross it, so the relay's log holds the handshake and the start of
// the transfer only, and the new path's checks come from the endpoints.
func checkConnMigration(t *testing.T, r *caseRun) {
	if r.srv.pref == nil {
		t.Fatal("the server offered no preferred address")
	}
	cl, srv := r.cl.ours.all(), r.srv.ours.all()
	if len(cl) != 1 || len(srv) != 1 {
		t.Fatalf("%d client and %d server connections, want 1 and 1", len(cl), len(srv))
	}
	if got := cl[0].RemoteAddr().String(); got != r.srv.pref.String() {
		t.Errorf("client's peer address %s, want the preferred address %s", got, r.srv.pref)
	}
	o := r.srv.obs.snapshot()
	n := srv[0].Stats().Migrations
	t.Logf("server: %d migrations, %d PATH_CHALLENGE received, %d PATH_RESPONSE sent; client: %d migrations",
		n, o.challengesRcvd, o.responsesSent, cl[0].Stats().Migrations)
	if n == 0 || o.challengesRcvd == 0 || o.responsesSent == 0 {
		t.Error("the server did not see the client validate the preferred address and move there")
	}
	relayed := 0
	for _, d := range r.trace {
		if d.Dir == netem.ToClient {
			relayed += d.Size
		}
	}
	t.Logf("%d B from the server crossed the relay", relayed)
	if relayed >= 2*mib {
		t.Errorf("%d B from the server crossed the relay: the transfer did not move to the preferred address", relayed)
	}
}
