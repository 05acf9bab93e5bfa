// Command netem is a UDP impairment relay for QUIC tests on loopback: it
// forwards datagrams between clients and one server through an emulated
// link and the interop runner's network scenarios (internal/netem).
//
// Usage:
//
//	go run ./example/netem -server 127.0.0.1:4433 [-listen 127.0.0.1:4434] [flags]
//
// The defaults are the runner's simple-p2p link: 10 Mbit/s, 15 ms one-way
// delay, a 25-datagram queue. Scenario flags mirror the simulator's:
//
//	-drops-to-server 2,3,4,5,6,7      droplist
//	-drop-rate 2 -drop-burst 3        drop-rate, both directions
//	-corrupt-rate 30 -corrupt-burst 3 corrupt-rate (-corrupt-drops: drop them)
//	-blackhole-on 5s -blackhole-off 2s
//	-rebind-first 1s -rebind-every 5s [-rebind-addr]
//	-duplicate-rate 1 -reorder-rate 1 -reorder-delay 5ms -jitter 1ms
//
// It logs every decision other than plain delivery with -v, prints the
// counters on SIGINT/SIGTERM, and exits with status 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quicstack/quic/internal/netem"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, stop))
}

// parseConfig turns the command line into a proxy configuration.
func parseConfig(args []string, stderr io.Writer) (netem.Config, bool, error) {
	fs := flag.NewFlagSet("netem", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "server address (required)")
	listen := fs.String("listen", "", "client-facing address (default 127.0.0.1:0, or [::1]:0 for an IPv6 server)")
	bw := fs.Float64("bandwidth", 10, "link bandwidth in Mbit/s per direction; 0 = unlimited")
	delay := fs.Duration("delay", 15*time.Millisecond, "one-way delay")
	jitter := fs.Duration("jitter", 0, "uniform random extra delay in [0, jitter)")
	queue := fs.Int("queue", 25, "queue length in datagrams (tail drop); 0 = unlimited")
	dropsToServer := fs.String("drops-to-server", "", "droplist: comma-separated 1-based datagram indices to drop towards the server")
	dropsToClient := fs.String("drops-to-client", "", "droplist: indices to drop towards the client")
	dropRate := fs.Int("drop-rate", 0, "drop-rate: percent of datagrams dropped in each direction")
	dropBurst := fs.Int("drop-burst", 0, "drop-rate: maximum consecutive drops (0 = no cap)")
	corruptRate := fs.Int("corrupt-rate", 0, "corrupt-rate: percent of datagrams corrupted in each direction")
	corruptBurst := fs.Int("corrupt-burst", 0, "corrupt-rate: maximum consecutive corruptions")
	corruptDrops := fs.Bool("corrupt-drops", false, "drop the datagrams corrupt-rate selects instead of delivering them mutated")
	bhOn := fs.Duration("blackhole-on", 0, "blackhole: time the link works before each outage")
	bhOff := fs.Duration("blackhole-off", 0, "blackhole: duration of each outage")
	bhRepeat := fs.Int("blackhole-repeat", 1, "blackhole: number of outages")
	rebindFirst := fs.Duration("rebind-first", 0, "rebind: time of the first NAT rebinding")
	rebindEvery := fs.Duration("rebind-every", 5*time.Second, "rebind: period of the following rebindings")
	rebindAddr := fs.Bool("rebind-addr", false, "rebind: also change the source address (127.0.0.x)")
	dupRate := fs.Int("duplicate-rate", 0, "percent of datagrams duplicated")
	reorderRate := fs.Int("reorder-rate", 0, "percent of datagrams delayed by -reorder-delay")
	reorderDelay := fs.Duration("reorder-delay", 5*time.Millisecond, "extra delay of reordered datagrams")
	seed := fs.Uint64("seed", 1, "seed of every random decision")
	verbose := fs.Bool("v", false, "log every decision other than plain delivery")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: netem -server host:port [flags]\n\n"+
			"netem relays UDP datagrams between clients and a server through an emulated\n"+
			"link (bandwidth, queue, delay) and the QUIC interop runner's scenarios.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return netem.Config{}, false, err
	}
	if fs.NArg() > 0 {
		return netem.Config{}, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *server == "" {
		return netem.Config{}, false, fmt.Errorf("-server is required")
	}
	sa, err := net.ResolveUDPAddr("udp", *server)
	if err != nil {
		return netem.Config{}, false, err
	}
	var sc netem.Scenario
	for dir, s := range map[netem.Direction]string{netem.ToServer: *dropsToServer, netem.ToClient: *dropsToClient} {
		if sc.DropList[dir], err = parseList(s); err != nil {
			return netem.Config{}, false, err
		}
	}
	for _, pc := range []int{*dropRate, *corruptRate, *dupRate, *reorderRate} {
		if pc < 0 || pc > 100 {
			return netem.Config{}, false, fmt.Errorf("rate %d%% out of 0..100", pc)
		}
	}
	both := func(r netem.Rate) [2]netem.Rate { return [2]netem.Rate{r, r} }
	sc.Drop = both(netem.Rate{Percent: *dropRate, Burst: *dropBurst})
	sc.Corrupt = both(netem.Rate{Percent: *corruptRate, Burst: *corruptBurst})
	sc.CorruptDrops = *corruptDrops
	sc.Duplicate = both(netem.Rate{Percent: *dupRate})
	sc.Reorder = both(netem.Rate{Percent: *reorderRate})
	sc.ReorderDelay = *reorderDelay
	sc.Blackhole = netem.Blackhole{On: *bhOn, Off: *bhOff, Repeat: *bhRepeat}
	sc.Rebind = netem.Rebind{First: *rebindFirst, Every: *rebindEvery, Addr: *rebindAddr}
	link := netem.SimpleP2P(int64(*bw*1e6), *delay, *queue)
	link[0].Jitter, link[1].Jitter = *jitter, *jitter
	return netem.Config{Server: sa, Listen: *listen, Link: link, Scenario: sc, Seed: *seed}, *verbose, nil
}

func parseList(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad datagram index %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	cfg, verbose, err := parseConfig(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "netem:", err)
		return 2
	}
	if verbose {
		cfg.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	cfg.RecordBytes = -1 // a long-running relay keeps no packet log
	p, err := netem.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "netem:", err)
		return 1
	}
	fmt.Fprintf(stdout, "netem: relaying %v -> %v\n", p.Addr(), cfg.Server)
	<-stop
	p.Close()
	s := p.Stats()
	fmt.Fprintf(stdout, "to-server: %d received, %d delivered, %d dropped, %d corrupted, %d duplicated\n",
		s.Received[0], s.Delivered[0], s.Dropped[0], s.Corrupted[0], s.Duplicated[0])
	fmt.Fprintf(stdout, "to-client: %d received, %d delivered, %d dropped, %d corrupted, %d duplicated\n",
		s.Received[1], s.Delivered[1], s.Dropped[1], s.Corrupted[1], s.Duplicated[1])
	fmt.Fprintf(stdout, "rebinds: %d\n", s.Rebinds)
	return 0
}
