package interop

// The interop runner's goodput measurement (shared/specs/INTEROP.md,
// Section 2): one 10 MiB file over the default link (10 Mbit/s, 15 ms
// one-way delay, 25-datagram queue), goodput = 8 * file size / the time
// between the first and the last server 1-RTT packet on the link, for
// our server with each congestion controller and for quic-go. It takes
// about two minutes, so it runs only with GOODPUT=1 (make goodput);
// GOODPUT_RUNS sets the repetitions (default 3).

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/quicstack/quic/congestion"
	hq "github.com/quicstack/quic/internal/hqfiles"
	"github.com/quicstack/quic/internal/netem"
	"github.com/quicstack/quic/wire"
)

func TestGoodput(t *testing.T) {
	if os.Getenv("GOODPUT") == "" {
		t.Skip("the goodput measurement runs with GOODPUT=1 (make goodput)")
	}
	runs := 3
	if n, err := strconv.Atoi(os.Getenv("GOODPUT_RUNS")); err == nil && n > 0 {
		runs = n
	}
	size := 10 * mib
	if s := os.Getenv("GOODPUT_MIB"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			size = n * mib
		}
	}
	file := randomFiles("goodput", 1, size, 10)[0]
	type setup struct {
		name   string
		p      pairing
		cc     congestion.ControllerFactory
		ccName string
	}
	var setups []setup
	for _, cc := range []struct {
		name string
		f    congestion.ControllerFactory
	}{{"cubic", congestion.NewCubic}, {"bbr", congestion.NewBBR}, {"newreno", congestion.NewNewReno}} {
		setups = append(setups,
			setup{"ours→ours", pairing{implOurs, implOurs}, cc.f, cc.name},
			setup{"quic-go→ours", pairing{implQuicGo, implOurs}, cc.f, cc.name})
	}
	setups = append(setups,
		setup{"ours→quic-go", pairing{implOurs, implQuicGo}, nil, "quic-go (cubic)"},
		setup{"quic-go→quic-go", pairing{implQuicGo, implQuicGo}, nil, "quic-go (cubic)"})
	var table string
	for _, s := range setups {
		var kbps []float64
		for i := range runs {
			v, err := measureGoodput(t, s.p, s.cc, file, uint64(i+1))
			if err != nil {
				t.Errorf("%s %s run %d: %v", s.name, s.ccName, i+1, err)
				continue
			}
			kbps = append(kbps, v)
		}
		mean, sd := meanStd(kbps)
		line := fmt.Sprintf("| %s | %s | %.0f (± %.0f) kbps | %d |", s.name, s.ccName, mean, sd, len(kbps))
		t.Log(line)
		table += line + "\n"
	}
	fmt.Printf("\n| client→server | server congestion control | goodput | runs |\n|---|---|---:|---:|\n%s\n", table)
}

func meanStd(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)))
}

// measureGoodput downloads file once through the default link and returns
// the runner's goodput in kbit/s.
func measureGoodput(t *testing.T, p pairing, cc congestion.ControllerFactory, file caseFile, seed uint64) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctls, stls := testTLS(t)
	ctls.NextProtos, stls.NextProtos = []string{hq.ALPN}, []string{hq.ALPN}
	srv := startHQServer(t, ctx, p.server, stls, serverOpts{cc: cc}, hq.MapFiles(map[string][]byte{file.name: file.data}))
	proxy, err := netem.New(netem.Config{Server: srv.addr, Link: defaultLink(), Seed: seed})
	if err != nil {
		return 0, err
	}
	defer proxy.Close()
	cl := newHQClient(t, p.client, ctls, clientOpts{})
	hc, _, closeConn, err := cl.dial(ctx, proxy.Addr(), false)
	if err != nil {
		return 0, err
	}
	b, err := hq.GetOne(ctx, hc, file.name)
	closeConn()
	if err != nil {
		return 0, err
	}
	if len(b) != len(file.data) {
		return 0, fmt.Errorf("got %d bytes, want %d", len(b), len(file.data))
	}
	proxy.Close()
	var first, last time.Duration
	seen := false
	for _, r := range proxy.Log() {
		if r.Dir != netem.ToClient || len(r.Data) == 0 {
			continue
		}
		if pt, err := wire.PacketTypeOf(r.Data); err != nil || pt != wire.PacketType1RTT {
			continue
		}
		if !seen {
			first, seen = r.At, true
		}
		last = r.At
	}
	if !seen || last <= first {
		return 0, fmt.Errorf("no server 1-RTT packets in the log")
	}
	st := proxy.Stats()
	t.Logf("%v: %.2f s, %d server datagrams dropped by the queue", p, (last - first).Seconds(), st.Dropped[netem.ToClient])
	return 8 * float64(len(file.data)) / (last - first).Seconds() / 1000, nil
}
