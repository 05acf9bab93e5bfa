// Command fleet runs one server of a QUIC fleet, and writes the nftables
// ruleset of the balancer in front of the fleet.
//
//	fleet serve -cert C -key K -secret S -server-id 01 [-sockets N] [flags]
//	fleet nft -vip 192.0.2.1:4433 -backend 01=10.0.0.1 -backend 02=10.0.0.2 [flags]
//
// A server issues QUIC-LB connection IDs (package quiclb) carrying its
// server ID in plaintext, so that the balancer routes every packet of a
// connection to it whatever the client's address; it derives its session
// ticket, address token and stateless reset keys from the fleet's master
// secret (quic.KeySchedule), so that a client resumes with 0-RTT on any
// server and a server that lost a connection's state (after a crash, or
// when the balancer moved the client) resets it at once. With -sockets N
// it reads N sockets per generation of a quic.ReusePortGroup; SIGUSR2
// then restarts it gracefully: it starts a new copy of itself with the
// group's sockets, which takes every new connection, while this one
// finishes its own and exits. SIGUSR1 starts a copy that shares the port
// and the new connections with this one. SIGINT and SIGTERM stop it
// gracefully.
//
// The protocol (ALPN "fleet") is one request per stream: "id" answers
// "<server ID> <pid>", "bytes N" N bytes of a fixed pattern, "stats" the
// Transport's statistics in JSON.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/cli"
	"github.com/quicstack/quic/quiclb"
)

// ALPN is the fleet protocol's name.
const ALPN = "fleet"

// Pattern returns byte i of a "bytes N" answer.
func Pattern(i int64) byte { return byte('a' + i%26) }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fleet serve|nft [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "nft":
		err = nft(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// lbFlags are the QUIC-LB configuration flags both commands take.
type lbFlags struct {
	configID, sidLen, nonceLen *int
}

func addLBFlags(fs *flag.FlagSet) lbFlags {
	return lbFlags{
		configID: fs.Int("config-id", 1, "QUIC-LB config rotation codepoint (0-6)"),
		sidLen:   fs.Int("sid-len", 1, "server ID length in bytes"),
		nonceLen: fs.Int("nonce-len", 6, "nonce length in bytes"),
	}
}

func (f lbFlags) config() quiclb.Config {
	return quiclb.Config{ID: uint8(*f.configID), ServerIDLen: *f.sidLen, NonceLen: *f.nonceLen}
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func nft(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("nft", flag.ContinueOnError)
	lb := addLBFlags(fs)
	vip := fs.String("vip", "", "`address:port` clients send to (IPv4)")
	extra := fs.Int("extra", 0, "bytes servers append to QUIC-LB IDs (1 with -sockets)")
	var backends multiFlag
	fs.Var(&backends, "backend", "a backend as `serverID=address` (server ID in hex); repeat for each")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ap, err := netip.ParseAddrPort(*vip)
	if err != nil {
		return fmt.Errorf("-vip: %w", err)
	}
	var bs []quiclb.Backend
	for _, b := range backends {
		sid, addr, ok := strings.Cut(b, "=")
		id, err1 := hex.DecodeString(sid)
		a, err2 := netip.ParseAddr(addr)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("-backend %q: want serverID=address", b)
		}
		bs = append(bs, quiclb.Backend{ServerID: id, Addr: a})
	}
	rs, err := quiclb.NFTablesRuleset(lb.config(), *extra, bs, quiclb.NFTablesOptions{VIP: ap})
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, rs)
	return err
}

// Environment of a successor started by a graceful restart.
const (
	envInheritGen = "FLEET_INHERIT_GEN" // the predecessor's generation
	envSockets    = "FLEET_SOCKETS"     // files 3 .. 3+2N-1 are the group's; 3+2N the predecessor's pipe, 3+2N+1 the ready pipe
	envShare      = "FLEET_SHARE"       // share the port rather than take it over
)

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	lb := addLBFlags(fs)
	listen := fs.String("listen", "0.0.0.0:4433", "UDP `address`")
	certFile := fs.String("cert", "", "PEM certificate `file`")
	keyFile := fs.String("key", "", "PEM key `file`")
	secretFile := fs.String("secret", "", "master secret `file` (hex or raw, 32 bytes or more)")
	sidHex := fs.String("server-id", "", "this server's QUIC-LB server ID in `hex`")
	sockets := fs.Int("sockets", 0, "SO_REUSEPORT sockets per generation (0: one plain socket)")
	drain := fs.Duration("drain", 30*time.Second, "how long a stopping server waits for its connections")
	common := cli.AddCommon(fs) // -cc, -qlog, -keylog
	if err := fs.Parse(args); err != nil {
		return err
	}
	conf, keyLog, err := common.Setup()
	if err != nil {
		return err
	}
	if keyLog != nil {
		defer keyLog.Close()
	}
	conf.Allow0RTT = true
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return err
	}
	keys, err := quic.LoadKeySchedule(*secretFile, 0)
	if err != nil {
		return err
	}
	sid, err := hex.DecodeString(*sidHex)
	if err != nil {
		return fmt.Errorf("-server-id: %w", err)
	}
	gen, err := quiclb.NewGenerator(lb.config(), sid)
	if err != nil {
		return err
	}

	var tr *quic.Transport
	var group *quic.ReusePortGroup
	var predecessor, ready *os.File
	switch {
	case os.Getenv(envInheritGen) != "":
		prev, _ := strconv.Atoi(os.Getenv(envInheritGen))
		n, _ := strconv.Atoi(os.Getenv(envSockets))
		var files []*os.File
		for i := range 2 * n {
			files = append(files, os.NewFile(uintptr(3+i), "socket"))
		}
		predecessor = os.NewFile(uintptr(3+2*n), "predecessor")
		ready = os.NewFile(uintptr(3+2*n+1), "ready")
		mode := quic.TakeOverMode
		if os.Getenv(envShare) != "" {
			mode = quic.ShareMode
		}
		group, err = quic.InheritReusePort(files, prev, mode, quic.ReusePortConfig{Sockets: n, ConnectionIDGenerator: gen})
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			return err
		}
		tr = group.Transport()
	case *sockets > 0:
		group, err = quic.ListenReusePort("udp4", *listen, quic.ReusePortConfig{Sockets: *sockets, ConnectionIDGenerator: gen})
		if err != nil {
			return err
		}
		tr = group.Transport()
	default:
		udp, err := net.ListenPacket("udp", *listen)
		if err != nil {
			return err
		}
		tr = &quic.Transport{Conn: udp, ConnectionIDGenerator: gen}
	}
	tr.Keys = keys
	l, err := tr.ListenEarly(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{ALPN}, KeyLogWriter: keyLog}, conf)
	if err != nil {
		return err
	}
	g := 0
	if group != nil {
		g = group.Generation()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2)
	fmt.Printf("fleet: listening %s server-id %s pid %d generation %d\n", tr.Conn.LocalAddr(), *sidHex, os.Getpid(), g)
	if ready != nil {
		ready.Write([]byte("ready\n")) // the predecessor may stop listening
		ready.Close()
	}
	if predecessor != nil {
		// The predecessor closes its end when it exits: from then on its
		// generation is ours to read.
		go func() {
			io.Copy(io.Discard, predecessor)
			group.AdoptPredecessor()
			fmt.Printf("fleet: pid %d: predecessor gone\n", os.Getpid())
		}()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { acceptLoop(ctx, l, tr, sid) })
	for sig := range sigs {
		if sig == syscall.SIGUSR1 || sig == syscall.SIGUSR2 {
			if group == nil {
				fmt.Println("fleet: SIGUSR1 and SIGUSR2 need -sockets")
				continue
			}
			share := sig == syscall.SIGUSR1
			pipe, err := startSuccessor(group, share)
			if err != nil {
				fmt.Println("fleet: restart failed:", err)
				continue
			}
			defer pipe.Close() // the successor sees us exit
			if share {
				continue
			}
		}
		break
	}
	// Stop taking connections and let the open ones finish. Connections
	// whose first packets were steered here before the successor took
	// over are still accepted for a second.
	time.Sleep(time.Second)
	l.Close()
	deadline := time.Now().Add(*drain)
	for tr.Stats().ConnectionsOpen > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	st := tr.Stats()
	fmt.Printf("fleet: pid %d stopping: %d handshakes, %d connections left\n", os.Getpid(), st.HandshakesCompleted, st.ConnectionsOpen)
	cancel()
	tr.Close()
	if group != nil {
		group.Close()
	}
	return nil
}

// startSuccessor starts a copy of this program that takes the group
// over, and returns the write end of the pipe whose closing tells it this
// process exited.
func startSuccessor(group *quic.ReusePortGroup, share bool) (*os.File, error) {
	files, err := group.Files()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer readyR.Close()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = append(files, r, readyW)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", envInheritGen, group.Generation()), fmt.Sprintf("%s=%d", envSockets, len(files)/2))
	if share {
		cmd.Env = append(cmd.Env, envShare+"=1")
	}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	go cmd.Wait()
	// Wait until the successor listens: only then do new connections
	// stop coming here.
	readyR.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := readyR.Read(make([]byte, 8)); err != nil {
		w.Close()
		return nil, fmt.Errorf("successor not ready: %w", err)
	}
	return w, nil
}

func acceptLoop(ctx context.Context, l *quic.Listener, tr *quic.Transport, sid []byte) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		go func() {
			for {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				go handle(s, tr, sid)
			}
		}()
	}
}

func handle(s *quic.Stream, tr *quic.Transport, sid []byte) {
	defer s.Close()
	line, err := bufio.NewReader(io.LimitReader(s, 256)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	req := strings.Fields(line)
	switch {
	case len(req) == 1 && req[0] == "id":
		fmt.Fprintf(s, "%x %d\n", sid, os.Getpid())
	case len(req) == 1 && req[0] == "stats":
		json.NewEncoder(s).Encode(tr.Stats())
	case len(req) == 2 && req[0] == "bytes":
		n, err := strconv.ParseInt(req[1], 10, 64)
		if err != nil || n < 0 || n > 1<<32 {
			return
		}
		buf := make([]byte, 32<<10)
		for off := int64(0); off < n; {
			m := min(int64(len(buf)), n-off)
			for i := range m {
				buf[i] = Pattern(off + i)
			}
			if _, err := s.Write(buf[:m]); err != nil {
				return
			}
			off += m
		}
	}
}
