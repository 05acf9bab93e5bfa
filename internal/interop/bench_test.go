package interop

// Side-by-side benchmarks of quicstack/quic ("ours") and quic-go on
// loopback. They run only with -bench; see doc.go for the command.
//
//	BenchmarkBulkTransfer    one connection, one stream, 64 MB per iteration
//	                         to a server that discards it; reports Gbit/s.
//	BenchmarkHandshakes      fresh handshakes (dial, handshake, close), 32 at
//	                         a time, against one server; reports handshakes/s
//	                         and the CPU time of both sides per handshake.
//	BenchmarkIdleConnMemory  10,000 idle connections to one server; reports
//	                         the server's and the client's heap and goroutine
//	                         stack per connection. The client runs in a child
//	                         process (this test binary, started through
//	                         TestMain) so that the two sides' memory is
//	                         measured apart rather than estimated.
//
// Both implementations run with their default Config, except for the idle
// timeout of the idle-memory benchmark, so that no connection times out
// while the others are set up.

import (
	"bufio"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
)

var (
	idleConns       = flag.Int("idleconns", 10000, "connections of BenchmarkIdleConnMemory")
	idleHeapProfile = flag.String("idleheapprofile", "", "write the server's heap profile with the idle connections open to this file (BenchmarkIdleConnMemory)")
)

// --- the two implementations behind one face ---

type benchServer interface {
	addr() net.Addr
	accept(ctx context.Context) (peerConn, error)
	close()
}

type benchClient interface {
	dial(ctx context.Context, addr net.Addr) (peerConn, error)
	close()
}

type benchImpl struct {
	name string
	// listen starts a server on 127.0.0.1; idle 0 means the default idle
	// timeout.
	listen func(tc *tls.Config, idle time.Duration, sockBuf int) (benchServer, error)
	// client makes a client Transport on one UDP socket of its own.
	client func(tc *tls.Config, idle time.Duration, sockBuf int) (benchClient, error)
	// sockBuf, if not 0, is the size the benchmark asks the kernel for
	// the sockets' receive and send buffers.
	sockBuf int
}

// quicGoSocketBuffer is the receive and send buffer size quic-go's
// Transport asks for on its socket (7 MiB). Our Transport once left it at
// the kernel default (net.core.rmem_default, typically 208 KiB), and the
// "ours-bigbuf" variant set it from the outside to show the difference;
// now both Transports ask for 7 MiB themselves and the two variants
// measure the same thing.
const quicGoSocketBuffer = 7 << 20

var (
	ourImpl       = benchImpl{"ours", listenOurs, clientOurs, 0}
	ourBigBufImpl = benchImpl{"ours-bigbuf", listenOurs, clientOurs, quicGoSocketBuffer}
	quicGoImpl    = benchImpl{"quic-go", listenQuicGo, clientQuicGo, 0}

	// benchImpls are compared in the throughput benchmarks.
	benchImpls = []benchImpl{ourImpl, ourBigBufImpl, quicGoImpl}
)

func implByName(name string) (benchImpl, bool) {
	for _, im := range benchImpls {
		if im.name == name {
			return im, true
		}
	}
	return benchImpl{}, false
}

// loopbackSocket opens a UDP socket on 127.0.0.1 as an application would,
// with buffers of sockBuf bytes if not 0.
func loopbackSocket(sockBuf int) (*net.UDPConn, error) {
	return benchSocket(false, sockBuf)
}

// benchSocket opens the UDP socket of a benchmark's server or client: on
// loopback, or in the server's or the client's network namespace when
// TestPerf measures over a veth pair (see perf_test.go).
func benchSocket(server bool, sockBuf int) (*net.UDPConn, error) {
	var udp *net.UDPConn
	var err error
	if perfNet != nil {
		udp, err = perfNet.listenUDP(server)
	} else {
		udp, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	}
	if err != nil {
		return nil, err
	}
	if sockBuf > 0 {
		// Capped by net.core.rmem_max and wmem_max.
		udp.SetReadBuffer(sockBuf)
		udp.SetWriteBuffer(sockBuf)
	}
	return udp, nil
}

type oursServer struct {
	udp *net.UDPConn
	tr  *ours.Transport
	l   *ours.Listener
}

func listenOurs(tc *tls.Config, idle time.Duration, sockBuf int) (benchServer, error) {
	udp, err := benchSocket(true, sockBuf)
	if err != nil {
		return nil, err
	}
	tr := &ours.Transport{Conn: udp}
	l, err := tr.Listen(tc, &ours.Config{MaxIdleTimeout: idle})
	if err != nil {
		udp.Close()
		return nil, err
	}
	return &oursServer{udp, tr, l}, nil
}

func (s *oursServer) addr() net.Addr { return s.udp.LocalAddr() }
func (s *oursServer) accept(ctx context.Context) (peerConn, error) {
	c, err := s.l.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return ourConn{c}, nil
}
func (s *oursServer) close() { s.tr.Close(); s.udp.Close() }

type oursClient struct {
	udp  *net.UDPConn
	tr   *ours.Transport
	tc   *tls.Config
	conf *ours.Config
}

func clientOurs(tc *tls.Config, idle time.Duration, sockBuf int) (benchClient, error) {
	udp, err := benchSocket(false, sockBuf)
	if err != nil {
		return nil, err
	}
	return &oursClient{udp, &ours.Transport{Conn: udp}, tc, &ours.Config{MaxIdleTimeout: idle}}, nil
}

func (c *oursClient) dial(ctx context.Context, addr net.Addr) (peerConn, error) {
	conn, err := c.tr.Dial(ctx, addr, c.tc, c.conf)
	if err != nil {
		return nil, err
	}
	return ourConn{conn}, nil
}
func (c *oursClient) close() { c.tr.Close(); c.udp.Close() }

type quicGoServer struct {
	udp *net.UDPConn
	tr  *quicgo.Transport
	l   *quicgo.Listener
}

func listenQuicGo(tc *tls.Config, idle time.Duration, sockBuf int) (benchServer, error) {
	udp, err := benchSocket(true, sockBuf)
	if err != nil {
		return nil, err
	}
	tr := &quicgo.Transport{Conn: udp}
	l, err := tr.Listen(tc, &quicgo.Config{MaxIdleTimeout: idle})
	if err != nil {
		udp.Close()
		return nil, err
	}
	return &quicGoServer{udp, tr, l}, nil
}

func (s *quicGoServer) addr() net.Addr { return s.udp.LocalAddr() }
func (s *quicGoServer) accept(ctx context.Context) (peerConn, error) {
	c, err := s.l.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return quicGoConn{c}, nil
}
func (s *quicGoServer) close() { s.l.Close(); s.tr.Close(); s.udp.Close() }

type quicGoClient struct {
	udp  *net.UDPConn
	tr   *quicgo.Transport
	tc   *tls.Config
	conf *quicgo.Config
}

func clientQuicGo(tc *tls.Config, idle time.Duration, sockBuf int) (benchClient, error) {
	udp, err := benchSocket(false, sockBuf)
	if err != nil {
		return nil, err
	}
	return &quicGoClient{udp, &quicgo.Transport{Conn: udp}, tc, &quicgo.Config{MaxIdleTimeout: idle}}, nil
}

func (c *quicGoClient) dial(ctx context.Context, addr net.Addr) (peerConn, error) {
	conn, err := c.tr.Dial(ctx, addr, c.tc, c.conf)
	if err != nil {
		return nil, err
	}
	return quicGoConn{conn}, nil
}
func (c *quicGoClient) close() { c.tr.Close(); c.udp.Close() }

// connContext returns the context that ends with the connection.
func connContext(c peerConn) context.Context {
	switch c := c.(type) {
	case ourConn:
		return c.c.Context()
	case quicGoConn:
		return c.c.Context()
	}
	panic(fmt.Sprintf("unknown connection type %T", c))
}

// --- BenchmarkBulkTransfer ---

const bulkChunk = 64 << 20

func BenchmarkBulkTransfer(b *testing.B) {
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) { benchBulk(b, im) })
	}
}

func benchBulk(b *testing.B, im benchImpl) {
	ctls, stls := testTLS(b)
	srv, err := im.listen(stls, 0, im.sockBuf)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.close()
	cli, err := im.client(ctls, 0, im.sockBuf)
	if err != nil {
		b.Fatal(err)
	}
	defer cli.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The server discards and tells after each bulkChunk bytes.
	received := make(chan struct{}, 1)
	srvErr := make(chan error, 1)
	go func() {
		c, err := srv.accept(ctx)
		if err != nil {
			srvErr <- err
			return
		}
		s, err := c.acceptStream(ctx)
		if err != nil {
			srvErr <- err
			return
		}
		buf := make([]byte, 64<<10)
		var total int64
		for {
			n, err := s.Read(buf)
			before := total / bulkChunk
			total += int64(n)
			for ; before < total/bulkChunk; before++ {
				received <- struct{}{}
			}
			if err != nil {
				if err != io.EOF {
					srvErr <- err
				}
				return
			}
		}
	}()

	c, err := cli.dial(ctx, srv.addr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.closeWithError(0, "")
	s, err := c.openStream(ctx)
	if err != nil {
		b.Fatal(err)
	}
	buf := testData(64 << 10)
	b.SetBytes(bulkChunk)
	for b.Loop() {
		for sent := 0; sent < bulkChunk; sent += len(buf) {
			if _, err := s.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-received:
		case err := <-srvErr:
			b.Fatal(err)
		case <-time.After(60 * time.Second):
			b.Fatal("server did not receive the data within 60 s")
		}
	}
	b.ReportMetric(float64(b.N)*bulkChunk*8/b.Elapsed().Seconds()/1e9, "Gbit/s")
	s.CloseWrite()
}

// --- BenchmarkHandshakes ---

const handshakeParallelism = 32

func BenchmarkHandshakes(b *testing.B) {
	for _, im := range benchImpls {
		b.Run(im.name, func(b *testing.B) { benchHandshakes(b, im) })
	}
}

func benchHandshakes(b *testing.B, im benchImpl) {
	ctls, stls := testTLS(b)
	srv, err := im.listen(stls, 0, im.sockBuf)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.close()
	// One client Transport (one UDP socket) for all workers.
	cli, err := im.client(ctls, 0, im.sockBuf)
	if err != nil {
		b.Fatal(err)
	}
	defer cli.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			// The server side ends when the client's CONNECTION_CLOSE
			// arrives.
			if _, err := srv.accept(ctx); err != nil {
				return
			}
		}
	}()

	// RunParallel starts GOMAXPROCS*p goroutines.
	b.SetParallelism((handshakeParallelism + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var failures atomic.Int64
	var firstErr atomic.Value
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
			c, err := cli.dial(dctx, srv.addr())
			dcancel()
			if err != nil {
				failures.Add(1)
				firstErr.CompareAndSwap(nil, err)
				continue
			}
			c.closeWithError(0, "")
		}
	})
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d of %d handshakes failed, first: %v", n, b.N, firstErr.Load())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
	// Both sides run in this process, so this is the CPU time of a client
	// and a server handshake together (user and system), the figure that
	// bounds the rate on a busy machine; 0 where getrusage is missing.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/handshake")
}

// --- BenchmarkIdleConnMemory ---

// Environment of the child process that dials the idle connections.
const (
	idleHelperEnv      = "INTEROP_IDLE_HELPER" // implementation name
	idleHelperAddrEnv  = "INTEROP_IDLE_ADDR"
	idleHelperConnsEnv = "INTEROP_IDLE_CONNS"
)

// idleTimeout keeps the first connections alive while the last ones are
// set up and measured.
const idleTimeout = 10 * time.Minute

func TestMain(m *testing.M) {
	if name := os.Getenv(idleHelperEnv); name != "" {
		os.Exit(idleClientMain(name))
	}
	if kind := os.Getenv(floodHelperEnv); kind != "" {
		os.Exit(floodMain(kind)) // flood_gen_test.go
	}
	code := m.Run()
	removePrograms() // programs_test.go
	os.Exit(code)
}

func BenchmarkIdleConnMemory(b *testing.B) {
	// Socket buffers are kernel memory, not heap: no "ours-bigbuf" here.
	for _, im := range []benchImpl{ourImpl, quicGoImpl} {
		b.Run(im.name, func(b *testing.B) { benchIdleMemory(b, im) })
	}
}

// memSnapshot reads heap and stack in use after two collections.
func memSnapshot() (heap, stack uint64) {
	heap, stack, _ = memSnapshotLive()
	return heap, stack
}

// memSnapshotLive is memSnapshot that also returns the bytes of live heap
// objects (HeapAlloc), which leaves out the free space of the spans in use.
func memSnapshotLive() (heap, stack, live uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, ms.StackInuse, ms.HeapAlloc
}

// residentBytes returns the process's resident memory (Linux; 0
// elsewhere) after returning freed memory to the system, so that what the
// garbage collector keeps but does not use is not counted.
func residentBytes() uint64 {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, rss uint64
	if _, err := fmt.Sscan(string(b), &size, &rss); err != nil {
		return 0
	}
	return rss * uint64(os.Getpagesize())
}

// writeHeapProfile writes the heap profile (after the collections of
// memSnapshot) to a file, for go tool pprof -sample_index=inuse_space.
func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func perConn(after, before uint64, n int) float64 {
	return (float64(after) - float64(before)) / float64(n)
}

func benchIdleMemory(b *testing.B, im benchImpl) {
	n := *idleConns
	_, stls := testTLS(b)
	var srvHeap, srvLive, srvStack, cliHeap, cliStack, srvRSS, establish float64
	for b.Loop() {
		r, err := idleMemoryOnce(im, stls, n)
		if err != nil {
			b.Fatal(err)
		}
		if r.open < n {
			b.Logf("the server held %d of the %d connections the client dialed; its figures are per held connection", r.open, n)
		}
		srvHeap += r.srvHeap
		srvLive += r.srvLive
		srvStack += r.srvStack
		cliHeap += r.cliHeap
		cliStack += r.cliStack
		srvRSS += r.srvRSS
		establish += r.establish.Seconds()
	}
	k := float64(b.N)
	b.ReportMetric(float64(n), "conns")
	b.ReportMetric(srvHeap/k, "srv-heap-B/conn")
	b.ReportMetric(srvLive/k, "srv-live-B/conn")
	b.ReportMetric(srvStack/k, "srv-stack-B/conn")
	b.ReportMetric(cliHeap/k, "cli-heap-B/conn")
	b.ReportMetric(cliStack/k, "cli-stack-B/conn")
	b.ReportMetric(srvRSS/k, "srv-rss-B/conn")
	b.ReportMetric(establish/k, "establish-s")
}

// idleResult is what idleMemoryOnce measured: the heap (HeapInuse) and
// goroutine stack (StackInuse) growth per connection of each side (and of
// the server's live heap objects, HeapAlloc), each
// measured after garbage collection in its own process, the server's
// resident memory growth per connection, how many connections the server
// held open when measured, and how long the client took to establish
// them.
type idleResult struct {
	srvHeap, srvStack, cliHeap, cliStack, srvRSS float64
	srvLive                                      float64
	open                                         int
	establish                                    time.Duration
}

// idleMemoryOnce starts a server, has a child process dial n connections
// to it over one UDP socket, and measures the memory of both sides.
func idleMemoryOnce(im benchImpl, stls *tls.Config, n int) (r idleResult, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	goroutines := runtime.NumGoroutine()
	srv, err := im.listen(stls, idleTimeout, im.sockBuf)
	if err != nil {
		return r, err
	}
	defer srv.close()
	var mu sync.Mutex
	var conns []peerConn
	allAccepted := make(chan struct{})
	go func() {
		for {
			c, err := srv.accept(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			if len(conns) == n {
				close(allAccepted)
			}
			mu.Unlock()
		}
	}()
	heap0, stack0, live0 := memSnapshotLive()
	rss0 := residentBytes()

	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(),
		idleHelperEnv+"="+im.name,
		idleHelperAddrEnv+"="+srv.addr().String(),
		idleHelperConnsEnv+"="+strconv.Itoa(n),
		"QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING=true")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer cmd.Wait()
	defer stdin.Close() // the child exits when its stdin closes
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return r, fmt.Errorf("client process: %v", err)
	}
	var establishSec float64
	if _, err := fmt.Sscanf(line, "ready %g %g %g", &r.cliHeap, &r.cliStack, &establishSec); err != nil {
		return r, fmt.Errorf("client process said %q", line)
	}
	// Under load a handshake the client saw complete may still fail on
	// the server (quic-go refuses a connection whose handshake completes
	// while its accept queue of 32 is full, and the client may miss the
	// CONNECTION_CLOSE). Measure what the server holds, if nearly all.
	select {
	case <-allAccepted:
	case <-time.After(10 * time.Second):
	}
	time.Sleep(time.Second) // let the last handshakes' state go
	r.establish = time.Duration(establishSec * float64(time.Second))
	mu.Lock()
	open := 0
	for _, c := range conns {
		if connContext(c).Err() == nil {
			open++
		}
	}
	mu.Unlock()
	r.open = open
	if open < n*99/100 {
		return r, fmt.Errorf("server holds %d open connections of %d dialed", open, n)
	}
	heap1, stack1, live1 := memSnapshotLive()
	r.srvHeap, r.srvStack = perConn(heap1, heap0, open), perConn(stack1, stack0, open)
	r.srvLive = perConn(live1, live0, open)
	if *idleHeapProfile != "" {
		if err := writeHeapProfile(*idleHeapProfile + "." + im.name); err != nil {
			return r, err
		}
	}
	r.srvRSS = perConn(residentBytes(), rss0, open)

	// Tear down: close every server connection, let the child go, and
	// wait for this process's goroutines to return to where they were.
	mu.Lock()
	closing := conns
	mu.Unlock()
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Go(func() {
			for i := w; i < len(closing); i += 16 {
				closing[i].closeWithError(0, "")
			}
		})
	}
	wg.Wait()
	stdin.Close()
	cmd.Wait()
	srv.close()
	cancel()
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > goroutines+2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	return r, nil
}

// idleClientMain is the child process of BenchmarkIdleConnMemory: it dials
// the connections from one client Transport, prints
// "ready <heap B/conn> <stack B/conn>" (per connection still open) and
// waits for stdin to close.
func idleClientMain(name string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "idle client:", err)
		return 1
	}
	im, ok := implByName(name)
	if !ok {
		return fail(fmt.Errorf("unknown implementation %q", name))
	}
	addr, err := net.ResolveUDPAddr("udp", os.Getenv(idleHelperAddrEnv))
	if err != nil {
		return fail(err)
	}
	n, err := strconv.Atoi(os.Getenv(idleHelperConnsEnv))
	if err != nil {
		return fail(err)
	}
	// The child does not have the parent's CA; the server's memory does
	// not depend on whether the client verifies its certificate.
	ctls := &tls.Config{InsecureSkipVerify: true, ServerName: "localhost", NextProtos: []string{alpn}, MinVersion: tls.VersionTLS13}
	heap0, stack0 := memSnapshot()
	start := time.Now()
	cli, err := im.client(ctls, idleTimeout, im.sockBuf)
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	conns := make([]peerConn, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < handshakeParallelism; w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				var err error
				for try := 0; try < 3; try++ { // a handshake may time out under load
					dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
					conns[i], err = cli.dial(dctx, addr)
					cancel()
					if err == nil {
						break
					}
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return fail(err)
	}
	establish := time.Since(start)
	time.Sleep(time.Second)
	// Under load the server may refuse or lose a connection whose
	// handshake the client saw complete; count the ones still open.
	open := 0
	for _, c := range conns {
		if connContext(c).Err() == nil {
			open++
		}
	}
	if open < n*99/100 {
		return fail(fmt.Errorf("%d of %d connections ended before the measurement", n-open, n))
	}
	heap1, stack1 := memSnapshot()
	fmt.Printf("ready %g %g %g\n", perConn(heap1, heap0, open), perConn(stack1, stack0, open), establish.Seconds())
	io.Copy(io.Discard, os.Stdin)
	// The server closed the connections; leave without closing them.
	return 0
}

// perfNet, when set (by TestPerf), makes benchmark sockets in network
// namespaces joined by a veth pair instead of on loopback.
var perfNet interface {
	listenUDP(server bool) (*net.UDPConn, error)
}
