package http3

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/quicstack/quic/internal/netem"
)

// A GET in 0-RTT on a resumed connection over a working path whose round
// trip is longer than RaceDelay (satellite, a congested cellular link) is
// not a blackholed path: the previous connection to the alternative
// measured the round trip, and the stall watchdog gives the 0-RTT
// request that long before it gives up on HTTP/3 (RFC 9002, Section
// 6.2.2: "resumed connections over the same network MAY use the previous
// connection's final smoothed RTT value as the resumed connection's
// initial RTT"). Before, the alternative was marked broken (5 minutes,
// doubling at each 0-RTT attempt after) and the connection closed after
// RaceDelay without an answer, so that a client on such a path never used
// HTTP/3 once it had a session to resume.
func TestAuto0RTTSlowPathNotBroken(t *testing.T) {
	t.Parallel()
	o := newSplitOrigin(t, nil)
	slow, err := netem.New(netem.Config{
		Server:      &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: o.h3Port},
		Link:        [2]netem.LinkConfig{{Delay: 150 * time.Millisecond}, {Delay: 150 * time.Millisecond}},
		RecordBytes: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	o.altSvc.Store(`h3=":` + strconv.Itoa(slow.Addr().Port) + `"`)
	a := newAuto(t, o.pool)
	a.RaceDelay = 50 * time.Millisecond
	autoGet(t, a, o.url+"/")
	untilH3(t, a, o.url+"/")
	a.mu.Lock()
	var first *quicAttempt
	for _, x := range a.attempts {
		first = x
	}
	a.mu.Unlock()
	version := first.cc.qc.ConnectionState().Version.String()
	for i := 0; ; i++ {
		if _, ok := a.h3.sessionCache().Get("127.0.0.1|" + version); ok {
			break
		}
		if i == 1000 {
			t.Fatal("no session ticket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.CloseIdleConnections()
	waitClosed(t, first.cc.qc, "CloseIdleConnections")
	before := a.Stats()
	proto, _ := autoGet(t, a, o.url+"/")
	st := a.Stats()
	if st.BrokenMarks != before.BrokenMarks || st.Stalls != before.Stalls {
		t.Fatalf("a working path with a %v round trip was taken for a dead one (GET over %s): stats %+v", 300*time.Millisecond, proto, st)
	}
	if proto != "HTTP/3.0" {
		t.Fatalf("0-RTT GET over %s; stats %+v", proto, st)
	}
}
