//go:build linux

// Command linkem joins two network namespaces by an emulated link that
// kernel TCP, UDP and everything else over IP cross alike
// (internal/linkem): per direction a delay with jitter, random and bursty
// (Gilbert-Elliott) loss, a rate limit with a byte queue, reordering and
// duplication.
//
// Usage:
//
//	linkem [flags]                      keep the link until interrupted
//	linkem [flags] -- command [args]    run command, then tear down
//
// For example, a 4G link whose uplink loses 1% in bursts of 2 packets:
//
//	linkem -profile 4g -up 'burst=1%/2'
//	ip netns exec linkem1234-1-a ping 10.77.0.2
//
// or an iperf3 transfer through 100 Mbit/s with 20 ms each way:
//
//	linkem -both 'rate=100mbit delay=20ms' -- sh -c \
//	  'ip netns exec $LINKEM_NS_B iperf3 -s -1 & sleep 1; ip netns exec $LINKEM_NS_A iperf3 -c $LINKEM_ADDR_B'
//
// Flags -both, -up (A to B) and -down (B to A) take settings in the syntax
// of linkem.ParseParams ("delay=20ms jitter=5ms loss=1% burst=2%/3
// rate=10mbit queue=50ms reorder=1% dup=0.5%"), applied on top of the
// -profile (a built-in one, see -list, or a profile file). Side A plays
// the user's device, side B the server.
//
// It needs root. It prints the namespaces and addresses, then, with
// -stats, the counters of both directions every interval, and always when
// it ends. The command runs on the host, or inside namespace A or B with
// -in, with LINKEM_NS_A, LINKEM_NS_B, LINKEM_ADDR_A and LINKEM_ADDR_B in
// its environment; linkem exits with its status. Without a command, with
// -control, lines on standard input change the link while it runs:
// "up SETTINGS", "down SETTINGS", "both SETTINGS", "stats".
//
// Exit status: the command's, 0 after an interrupt, 1 on failure, 2 on a
// usage error.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/quicstack/quic/internal/linkem"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A closed standard output (linkem ... | head) must not kill linkem
	// before it removes its namespaces.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, stop))
}

// options is the parsed command line.
type options struct {
	cfg     linkem.Config
	profile string
	stats   time.Duration
	in      string
	control bool
	list    bool
	command []string
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("linkem", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.cfg.Name, "name", "", "namespaces NAME-a and NAME-b (default linkem<pid>-1)")
	addrA := fs.String("addr-a", "10.77.0.1/24", "address of side A")
	addrB := fs.String("addr-b", "10.77.0.2/24", "address of side B")
	fs.IntVar(&o.cfg.MTU, "mtu", 1500, "MTU of the link")
	fs.StringVar(&o.profile, "profile", "", "built-in profile (see -list) or profile file to start from")
	both := fs.String("both", "", "settings for both directions, on top of the profile")
	up := fs.String("up", "", "settings from A to B, on top of -both")
	down := fs.String("down", "", "settings from B to A, on top of -both")
	fs.Uint64Var(&o.cfg.Seed, "seed", 1, "seed of the random decisions")
	fs.DurationVar(&o.stats, "stats", 0, "print the counters at this interval (0: only at the end)")
	fs.StringVar(&o.in, "in", "", "run the command inside namespace a or b instead of on the host")
	fs.BoolVar(&o.control, "control", false, "read changes of the settings from standard input")
	fs.BoolVar(&o.cfg.InProcess, "in-process", false, "forward in this process rather than in a process of its own")
	fs.BoolVar(&o.list, "list", false, "list the built-in profiles and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: linkem [flags] [-- command [args...]]\n\n"+
			"linkem joins two network namespaces by an emulated link (delay, jitter,\n"+
			"loss, bursty loss, rate and queue, reordering, duplication).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.command = fs.Args()
	if o.list {
		return o, nil
	}
	var err error
	if o.cfg.AddrA, err = netip.ParsePrefix(*addrA); err != nil {
		return o, fmt.Errorf("-addr-a: %v", err)
	}
	if o.cfg.AddrB, err = netip.ParsePrefix(*addrB); err != nil {
		return o, fmt.Errorf("-addr-b: %v", err)
	}
	if o.profile != "" {
		p, err := linkem.LoadProfile(o.profile)
		if err != nil {
			return o, err
		}
		o.cfg.AB, o.cfg.BA = p.AB, p.BA
	}
	for _, s := range []struct {
		flag, text string
		dirs       []*linkem.Params
	}{
		{"-both", *both, []*linkem.Params{&o.cfg.AB, &o.cfg.BA}},
		{"-up", *up, []*linkem.Params{&o.cfg.AB}},
		{"-down", *down, []*linkem.Params{&o.cfg.BA}},
	} {
		for _, d := range s.dirs {
			if *d, err = linkem.ParseParams(*d, s.text); err != nil {
				return o, fmt.Errorf("%s: %s", s.flag, strings.TrimPrefix(err.Error(), "linkem: "))
			}
		}
	}
	if o.in != "" && o.in != "a" && o.in != "b" {
		return o, fmt.Errorf("-in %q: want a or b", o.in)
	}
	if o.in != "" && len(o.command) == 0 {
		return o, errors.New("-in needs a command")
	}
	if o.control && len(o.command) > 0 {
		return o, errors.New("-control reads standard input, which a command would share: give one or the other")
	}
	return o, nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	o, err := parseArgs(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "linkem:", err)
		return 2
	}
	if o.list {
		for _, p := range linkem.Profiles() {
			fmt.Fprintf(stdout, "%s\n  up:   %s\n  down: %s\n  %s\n\n", p.Name, p.AB, p.BA, p.Doc)
		}
		return 0
	}
	p, err := linkem.New(o.cfg)
	if err != nil {
		fmt.Fprintln(stderr, "linkem:", err)
		return 1
	}
	defer func() {
		printStats(stdout, p)
		if err := p.Close(); err != nil {
			fmt.Fprintln(stderr, "linkem:", err)
		}
	}()
	fmt.Fprintf(stdout, "linkem: %s (%v) <-> %s (%v)\n  up   (A to B): %s\n  down (B to A): %s\n",
		p.Namespace(linkem.A), p.Addr(linkem.A), p.Namespace(linkem.B), p.Addr(linkem.B),
		orNone(p.Params(linkem.AB).String()), orNone(p.Params(linkem.BA).String()))

	var tick <-chan time.Time
	if o.stats > 0 {
		t := time.NewTicker(o.stats)
		defer t.Stop()
		tick = t.C
	}
	done := make(chan int, 1)
	if len(o.command) > 0 {
		cmd := command(p, o)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(stderr, "linkem:", err)
			return 1
		}
		go func() {
			err := cmd.Wait()
			var ee *exec.ExitError
			switch {
			case err == nil:
				done <- 0
			case errors.As(err, &ee):
				done <- ee.ExitCode()
			default:
				fmt.Fprintln(stderr, "linkem:", err)
				done <- 1
			}
		}()
	} else if o.control {
		go control(p, stdin, stdout, stderr)
	}
	for {
		select {
		case code := <-done:
			return code
		case <-stop:
			return 0
		case <-tick:
			printStats(stdout, p)
		}
	}
}

// command returns the command to run, on the host or inside a namespace.
func command(p *linkem.Pair, o options) *exec.Cmd {
	var cmd *exec.Cmd
	switch o.in {
	case "a":
		cmd = exec.Command("ip", append([]string{"netns", "exec", p.Namespace(linkem.A)}, o.command...)...)
	case "b":
		cmd = exec.Command("ip", append([]string{"netns", "exec", p.Namespace(linkem.B)}, o.command...)...)
	default:
		cmd = exec.Command(o.command[0], o.command[1:]...)
	}
	cmd.Env = append(os.Environ(),
		"LINKEM_NS_A="+p.Namespace(linkem.A), "LINKEM_NS_B="+p.Namespace(linkem.B),
		"LINKEM_ADDR_A="+p.Addr(linkem.A).String(), "LINKEM_ADDR_B="+p.Addr(linkem.B).String())
	return cmd
}

// control applies the lines of r: "up|down|both SETTINGS" or "stats".
func control(p *linkem.Pair, r io.Reader, stdout, stderr io.Writer) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		verb, rest, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		var dirs []linkem.Dir
		switch verb {
		case "":
			continue
		case "stats":
			printStats(stdout, p)
			continue
		case "up", "ab":
			dirs = []linkem.Dir{linkem.AB}
		case "down", "ba":
			dirs = []linkem.Dir{linkem.BA}
		case "both":
			dirs = []linkem.Dir{linkem.AB, linkem.BA}
		default:
			fmt.Fprintf(stderr, "linkem: %q: want up, down or both SETTINGS, or stats\n", sc.Text())
			continue
		}
		for _, d := range dirs {
			prm, err := linkem.ParseParams(p.Params(d), rest)
			if err == nil {
				err = p.SetParams(d, prm)
			}
			if err != nil {
				fmt.Fprintln(stderr, "linkem:", err)
				break
			}
			fmt.Fprintf(stdout, "linkem: %v now %s\n", d, orNone(prm.String()))
		}
	}
}

func printStats(w io.Writer, p *linkem.Pair) {
	for _, d := range []linkem.Dir{linkem.AB, linkem.BA} {
		s, err := p.Stats(d)
		if err != nil {
			fmt.Fprintf(w, "%v: %v\n", d, err)
			continue
		}
		fmt.Fprintf(w, "%v: %d packets (%d bytes) in, %d delivered; dropped %d at the queue, %d lost, %d in bursts, %d over the limit; %d duplicated, %d reordered; late p50 %v p99 %v max %v\n",
			d, s.Arrived, s.ArrivedBytes, s.Delivered, s.DroppedQueue, s.DroppedLoss, s.DroppedBurst, s.DroppedLimit,
			s.Duplicated, s.Reordered, s.Late.P50, s.Late.P99, s.Late.Max)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(a perfect wire)"
	}
	return s
}
