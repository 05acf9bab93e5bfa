package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The lifecycle stress suite: goroutines dial, accept, open streams,
// write, read, close and cancel over loopback UDP while the Listener and
// the Transports are closed at random moments, in random order. What
// must hold:
//   - nothing panics;
//   - every call blocked when the close came returns within a bound
//     (stressBound) with a documented error (documentedErr);
//   - Transport.Close returns within its bound (closeLinger, plus the
//     connections' moment to send CONNECTION_CLOSE; checked exactly in
//     fake time by TestTransportCloseBound, here against stressBound);
//   - once everything is closed, no goroutine the rounds started is left.
//
// `make test` runs it for stressDefault; LIFECYCLE_DURATION (a
// time.Duration, as `make lifecycle-soak` sets it) runs it longer.

const (
	stressDefault = 3 * time.Second
	// stressBound is how long a call may take to return after the close
	// that interrupts it, on a loaded machine under the race detector;
	// a hang is what it catches.
	stressBound = 30 * time.Second
	// stressWorkers is how many rounds run at once.
	stressWorkers = 4
)

// stressDuration returns how long the stress tests run.
func stressDuration(t *testing.T) time.Duration {
	if s := os.Getenv("LIFECYCLE_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("LIFECYCLE_DURATION: %v", err)
		}
		return d
	}
	if testing.Short() {
		return stressDefault / 3
	}
	return stressDefault
}

// documentedErr reports whether err is one the API documents for calls
// interrupted by a close or a cancellation.
func documentedErr(err error) bool {
	var (
		ae *ApplicationError
		te *TransportError
		se *StreamError
		it *IdleTimeoutError
		ht *HandshakeTimeoutError
		sr *StatelessResetError
	)
	switch {
	case err == nil,
		errors.Is(err, ErrTransportClosed), errors.Is(err, ErrListenerClosed),
		errors.Is(err, net.ErrClosed), errors.Is(err, io.EOF),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, errTooManyStreams),
		errors.As(err, &ae), errors.As(err, &te), errors.As(err, &se),
		errors.As(err, &it), errors.As(err, &ht), errors.As(err, &sr):
		return true
	}
	return false
}

// stressRecorder collects what a round's goroutines report.
type stressRecorder struct {
	mu     sync.Mutex
	errs   []string // undocumented errors
	counts map[string]int
}

func (r *stressRecorder) count(what string) {
	r.mu.Lock()
	if r.counts == nil {
		r.counts = make(map[string]int)
	}
	r.counts[what]++
	r.mu.Unlock()
}

// check records err from call if it is not documented.
func (r *stressRecorder) check(call string, err error) {
	if documentedErr(err) {
		return
	}
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf("%s: %T %v", call, err, err))
	r.mu.Unlock()
}

// blocked runs call, which is expected to block until a close, in a
// goroutine of wg, and records its error.
func (r *stressRecorder) blocked(wg *sync.WaitGroup, name string, call func() error) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := call()
		r.check(name, err)
		r.count("blocked " + name)
	}()
}

func TestLifecycleStress(t *testing.T) {
	before := goroutineIDs()
	ctls, stls := testTLS(t)
	dur := stressDuration(t)
	start := time.Now()
	var rec stressRecorder
	// Rounds run side by side: much of a round is waiting for closing
	// periods (Transport.Close lets closed connections answer for three
	// PTOs, about 3 s for a handshake cut short at the initial RTT).
	var rounds atomic.Int64
	var wg sync.WaitGroup
	for w := range stressWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n == 0 || time.Since(start) < dur; n++ {
				stressRound(t, &rec, ctls, stls, rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())+uint64(n))))
				rounds.Add(1)
				if t.Failed() {
					return
				}
			}
		}()
	}
	wg.Wait()
	rec.mu.Lock()
	for _, e := range rec.errs {
		t.Errorf("undocumented error: %s", e)
	}
	keys := make([]string, 0, len(rec.counts))
	for k, n := range rec.counts {
		keys = append(keys, k+"="+strconv.Itoa(n))
	}
	rec.mu.Unlock()
	t.Logf("%d rounds in %v: %s", rounds.Load(), time.Since(start).Round(time.Millisecond), strings.Join(sorted(keys), " "))
	checkNoGoroutineLeft(t, before, stressBound)
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// stressRound runs one round: a server Transport with a Listener, two
// client Transports, traffic and blocked calls, and closes in a random
// order at a random moment.
func stressRound(t *testing.T, rec *stressRecorder, ctls, stls *tls.Config, rng *rand.Rand) {
	var socks [3]net.PacketConn
	for i := range socks {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Error(err)
			for _, pc := range socks[:i] {
				pc.Close()
			}
			return
		}
		socks[i] = pc
	}
	serverT := &Transport{Conn: socks[0], ownConn: true}
	clientTs := []*Transport{{Conn: socks[1], ownConn: true}, {Conn: socks[2], ownConn: true}}
	conf := &Config{MaxIncomingStreams: 4, MaxIdleTimeout: time.Duration(200+rng.IntN(2000)) * time.Millisecond}
	if rng.IntN(2) == 0 {
		conf.KeepAlivePeriod = 50 * time.Millisecond
	}
	var l *Listener
	var err error
	if rng.IntN(4) == 0 {
		l, err = serverT.ListenEarly(stls, conf)
	} else {
		l, err = serverT.Listen(stls, conf)
	}
	if err != nil {
		t.Error(err)
		return
	}
	var wg sync.WaitGroup
	// Server: echo streams, hold others (neither read nor write).
	serve := func(c *Conn) {
		defer wg.Done()
		for {
			s, err := c.AcceptStream(context.Background())
			rec.check("server AcceptStream", err)
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var b [1]byte
				if _, err := io.ReadFull(s, b[:]); err != nil {
					rec.check("server Read", err)
					return
				}
				switch b[0] {
				case 'e': // echo
					_, err := io.Copy(s, s)
					rec.check("server echo", err)
					s.CloseWrite()
				case 'h': // hold until the connection ends
					<-s.Context().Done()
				case 'r': // reset
					s.CancelWrite(7)
					s.CancelRead(7)
				}
			}()
		}
	}
	for range 2 { // two concurrent Accept loops
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := l.Accept(context.Background())
				rec.check("Accept", err)
				if err != nil {
					return
				}
				rec.count("accepted")
				wg.Add(1)
				go serve(c)
			}
		}()
	}
	// Clients.
	stop := make(chan struct{})
	var dials atomic.Int64 // dials that succeeded
	for g := range 6 {
		wg.Add(1)
		crng := rand.New(rand.NewPCG(rng.Uint64(), uint64(g)))
		go func() {
			defer wg.Done()
			ct := clientTs[g%len(clientTs)]
			for {
				select {
				case <-stop:
					return
				default:
				}
				if stressClient(rec, &wg, ct, l.Addr(), ctls, crng) {
					dials.Add(1)
				}
			}
		}()
	}
	// The close, at a random moment, in a random order.
	// The close comes once the round has got going (a loaded machine
	// may take a while), at a random moment after.
	waitProgress(&dials, 2, 5*time.Second)
	time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
	closers := []func(){
		func() { l.Close() },
		func() { serverT.Close() },
		func() { clientTs[0].Close() },
		func() { clientTs[1].Close() },
	}
	rng.Shuffle(len(closers), func(i, j int) { closers[i], closers[j] = closers[j], closers[i] })
	done := watchdog(t, stressBound, "the closes and the calls they interrupt")
	var cwg sync.WaitGroup
	for i, f := range closers {
		if rng.IntN(2) == 0 { // some at once
			cwg.Add(1)
			go func() { defer cwg.Done(); f() }()
		} else {
			f()
		}
		if i == 0 {
			close(stop)
		}
	}
	cwg.Wait()
	wg.Wait()
	done()
	rec.count("rounds")
}

// stressClient dials once and uses the connection: streams echoed,
// streams whose Read, Write, Drain or OpenStreamSync block, cancellations
// and closes. The calls left blocked return when a close comes.
// It reports whether the dial succeeded.
func stressClient(rec *stressRecorder, wg *sync.WaitGroup, ct *Transport, addr net.Addr, ctls *tls.Config, rng *rand.Rand) bool {
	ctx := context.Background()
	var cancel context.CancelFunc = func() {}
	switch rng.IntN(4) {
	case 0: // a dial cancelled at a random moment
		ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(5000))*time.Microsecond)
	case 1:
		ctx, cancel = context.WithCancel(ctx)
		cancel()
	}
	defer cancel()
	var c *Conn
	var err error
	if rng.IntN(4) == 0 {
		c, err = ct.DialEarly(ctx, addr, ctls, &Config{MaxIdleTimeout: time.Second})
	} else {
		c, err = ct.Dial(ctx, addr, ctls, &Config{MaxIdleTimeout: time.Second})
	}
	rec.check("Dial", err)
	if err != nil {
		if errors.Is(err, ErrTransportClosed) {
			time.Sleep(time.Millisecond) // the round is ending
		}
		return false
	}
	rec.count("dialed")
	// Echo streams.
	for range 1 + rng.IntN(3) {
		s, err := c.OpenStreamSync(context.Background())
		rec.check("OpenStreamSync", err)
		if err != nil {
			return true
		}
		data := make([]byte, 1+rng.IntN(64<<10))
		end := rng.IntN(5)
		go func() {
			s.Write([]byte{'e'})
			s.Write(data)
			switch end {
			case 0:
				s.CancelWrite(3)
			case 1:
				s.Close()
			default:
				s.CloseWrite()
			}
		}()
		s.SetReadDeadline(time.Now().Add(time.Duration(rng.IntN(2000)) * time.Millisecond))
		n, err := io.Copy(io.Discard, s)
		rec.check("echo Read", err)
		if err == nil && n == int64(len(data)) {
			rec.count("echoed")
		}
	}
	// Calls that block until a close.
	switch rng.IntN(6) {
	case 0:
		rec.blocked(wg, "AcceptStream", func() error { _, err := c.AcceptStream(context.Background()); return err })
	case 1:
		s, err := c.OpenStream()
		if err == nil {
			s.Write([]byte{'h'})
			rec.blocked(wg, "Read", func() error { _, err := s.Read(make([]byte, 10)); return err })
		}
	case 2:
		s, err := c.OpenStream()
		if err == nil {
			s.Write([]byte{'h'})
			rec.blocked(wg, "Write", func() error { _, err := s.Write(make([]byte, 4<<20)); return err })
			rec.blocked(wg, "WaitAcked", func() error { return c.WaitAcked(context.Background()) })
			if rng.IntN(2) == 0 {
				go s.CloseWrite() // wakes the writer (or not, if first)
			}
		}
	case 3:
		for range 5 { // beyond MaxIncomingStreams: the last waits
			s, err := c.OpenStream()
			if err != nil {
				break
			}
			s.Write([]byte{'h'})
		}
		rec.blocked(wg, "OpenStreamSync", func() error { _, err := c.OpenStreamSync(context.Background()); return err })
	case 4:
		s, err := c.OpenStream()
		if err == nil {
			s.Write([]byte{'r'})
			rec.blocked(wg, "Read reset", func() error { _, err := io.Copy(io.Discard, s); return err })
		}
	case 5:
		c.CloseWithError(ApplicationErrorCode(rng.IntN(3)), "done")
	}
	return true
}

// waitProgress waits until n reaches want, or for limit.
func waitProgress(n *atomic.Int64, want int64, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for n.Load() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// goroutineIDs returns the IDs of the goroutines that run now.
func goroutineIDs() map[string]bool {
	ids := make(map[string]bool)
	for _, g := range goroutineStacks() {
		ids[g.id] = true
	}
	return ids
}

type goroutineStack struct{ id, stack string }

func goroutineStacks() []goroutineStack {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutineStack
	for _, g := range strings.Split(string(buf), "\n\n") {
		f := strings.Fields(g)
		if len(f) < 2 || f[0] != "goroutine" {
			continue
		}
		out = append(out, goroutineStack{f[1], g})
	}
	return out
}

// checkNoGoroutineLeft waits up to limit for every goroutine started
// since before and running this package's code to exit, as goleak does.
func checkNoGoroutineLeft(t *testing.T, before map[string]bool, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var left []string
		for _, g := range goroutineStacks() {
			if !before[g.id] && strings.Contains(g.stack, "github.com/quicstack/quic") &&
				!strings.Contains(g.stack, "checkNoGoroutineLeft") && !strings.Contains(g.stack, "testing.tRunner") {
				left = append(left, g.stack)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left %v after everything closed:\n%s", len(left), limit, strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
