package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// The HTTP/3 lifecycle stress suite: clients send GET and POST requests,
// some cancelled, some held by the handler, while idle timeouts on both
// sides, CloseIdleConnections, Server.Shutdown, Server.Close and
// Transport.Close come at random moments. What must hold:
//   - nothing panics;
//   - a request the server did not process never fails because of an
//     idle close, a GOAWAY or a refused connection while the server is up
//     (it is retried); a request the server processed in a graceful round
//     reaches its client whole;
//   - every RoundTrip and body read blocked when a close came returns
//     within stressBound with a documented error;
//   - once everything is closed, no goroutine the rounds started is left.
//
// `make test` runs it for stressDefault; LIFECYCLE_DURATION (a
// time.Duration, as `make lifecycle-soak` sets it) runs it longer.

const (
	stressDefault = 3 * time.Second
	stressBound   = 30 * time.Second
	stressWorkers = 3
)

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

// documentedErr reports whether err is one the API documents for a
// request interrupted by a close or a cancellation.
func documentedErr(err error) bool {
	var (
		he *Error
		ae *quic.ApplicationError
		te *quic.TransportError
		se *quic.StreamError
		it *quic.IdleTimeoutError
		ht *quic.HandshakeTimeoutError
		sr *quic.StatelessResetError
		oe *net.OpError
	)
	switch {
	case err == nil,
		errors.Is(err, ErrTransportClosed), errors.Is(err, net.ErrClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &he), errors.As(err, &ae), errors.As(err, &te), errors.As(err, &se),
		errors.As(err, &it), errors.As(err, &ht), errors.As(err, &sr),
		errors.As(err, &oe): // a dial to a server that is gone (ICMP unreachable)
		return true
	}
	return false
}

type stressStats struct {
	mu     sync.Mutex
	counts map[string]int
	errs   []string
}

func (s *stressStats) count(k string) {
	s.mu.Lock()
	if s.counts == nil {
		s.counts = make(map[string]int)
	}
	s.counts[k]++
	s.mu.Unlock()
}

func (s *stressStats) fail(format string, args ...any) {
	s.mu.Lock()
	if len(s.errs) < 20 {
		s.errs = append(s.errs, fmt.Sprintf(format, args...))
	}
	s.mu.Unlock()
}

func TestLifecycleStressHTTP3(t *testing.T) {
	before := goroutineIDs()
	cert, pool := testCert(t)
	dur := stressDuration(t)
	start := time.Now()
	var st stressStats
	var rounds atomic.Int64
	var wg sync.WaitGroup
	for w := range stressWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n == 0 || time.Since(start) < dur; n++ {
				rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())+uint64(n)))
				if !stressRoundHTTP3(t, &st, cert, pool, rng) {
					return
				}
				rounds.Add(1)
			}
		}()
	}
	wg.Wait()
	st.mu.Lock()
	for _, e := range st.errs {
		t.Error(e)
	}
	keys := make([]string, 0, len(st.counts))
	for k, n := range st.counts {
		keys = append(keys, k+"="+strconv.Itoa(n))
	}
	st.mu.Unlock()
	sort.Strings(keys)
	t.Logf("%d rounds in %v: %s", rounds.Load(), time.Since(start).Round(time.Millisecond), strings.Join(keys, " "))
	checkNoGoroutineLeft(t, before, stressBound)
}

// stressRoundHTTP3 runs one round and reports false if the test should
// stop.
func stressRoundHTTP3(t *testing.T, st *stressStats, cert tls.Certificate, pool *x509.CertPool, rng *rand.Rand) bool {
	graceful := rng.IntN(2) == 0
	var processed sync.Map // request ID -> true once a handler ran
	release := make(chan struct{})
	srv := &Server{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		// Longer than a loaded machine stalls: an idle timeout is no
		// lifecycle event here.
		QUICConfig: &quic.Config{MaxIdleTimeout: 10 * time.Second},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			processed.Store(r.Header.Get("X-Id"), true)
			switch r.URL.Path {
			case "/post":
				n, _ := io.Copy(io.Discard, r.Body)
				fmt.Fprintf(w, "%d", n)
			case "/stream":
				for i := range 5 {
					fmt.Fprintf(w, "chunk %d;", i)
					w.(http.Flusher).Flush()
					time.Sleep(time.Millisecond)
				}
			case "/hold":
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				case <-time.After(time.Duration(rng2(r)) * time.Millisecond):
				}
				io.WriteString(w, "held")
			default:
				io.WriteString(w, "ok")
			}
		}),
	}
	if rng.IntN(2) == 0 {
		srv.IdleTimeout = time.Duration(10+rng.IntN(50)) * time.Millisecond
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Error(err)
		return false
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(pc) }()
	url := "https://" + pc.LocalAddr().String()
	var trs []*Transport
	for range 1 + rng.IntN(2) {
		tr := &Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"},
			// After Shutdown, dials find no server: give up sooner
			// than the default 5 s, though not so soon that a loaded
			// machine misses a live server.
			QUICConfig: &quic.Config{HandshakeIdleTimeout: 2 * time.Second},
		}
		if rng.IntN(2) == 0 {
			tr.IdleConnTimeout = time.Duration(1+rng.IntN(20)) * time.Millisecond
		}
		trs = append(trs, tr)
	}
	var serverUp atomic.Bool // false once a Shutdown or Close started
	serverUp.Store(true)
	var clientsUp atomic.Bool
	clientsUp.Store(true)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var oks atomic.Int64 // requests that succeeded
	// Pauses between requests let the idle timers fire between them.
	pause := 2 * max(srv.IdleTimeout, trs[0].IdleConnTimeout)
	for g := range 1 + rng.IntN(8) {
		wg.Add(1)
		crng := rand.New(rand.NewPCG(rng.Uint64(), uint64(g)))
		tr := trs[g%len(trs)]
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if pause > 0 {
					time.Sleep(time.Duration(crng.Int64N(int64(pause))))
				}
				if stressRequest(st, tr, url, crng, stressIDs.Add(1), graceful, &processed, &serverUp, &clientsUp) {
					oks.Add(1)
				}
				if !serverUp.Load() || !clientsUp.Load() {
					// One request after the close is enough.
					stressRequest(st, tr, url, crng, stressIDs.Add(1), graceful, &processed, &serverUp, &clientsUp)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // CloseIdleConnections at random moments
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rng2n(20)) * time.Millisecond):
			}
			trs[0].CloseIdleConnections()
		}
	}()
	// The close comes once the round has got going (a loaded machine
	// may take a while), at a random moment after.
	deadline := time.Now().Add(5 * time.Second)
	for oks.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
	done := watchdog(t, stressBound, "HTTP/3 round: closes and the requests they interrupt")
	defer done()
	if graceful {
		serverUp.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), stressBound/2)
		err := srv.Shutdown(ctx)
		cancel()
		if err != nil {
			st.fail("Shutdown: %v", err)
		}
		st.count("shutdown")
	} else {
		// Server.Close, a client Transport.Close, or both at once.
		switch rng.IntN(3) {
		case 0:
			serverUp.Store(false)
			srv.Close()
			st.count("server close")
		case 1:
			clientsUp.Store(false)
			for _, tr := range trs {
				tr.Close()
			}
			st.count("client close")
		default:
			serverUp.Store(false)
			clientsUp.Store(false)
			var cwg sync.WaitGroup
			cwg.Add(2)
			go func() { defer cwg.Done(); srv.Close() }()
			go func() {
				defer cwg.Done()
				for _, tr := range trs {
					tr.Close()
				}
			}()
			cwg.Wait()
			st.count("both close")
		}
	}
	close(stop)
	close(release)
	clientsUp.Store(false)
	for _, tr := range trs {
		tr.Close()
	}
	wg.Wait()
	srv.Close()
	if err := <-served; err != ErrServerClosed {
		st.fail("Serve: %v, want ErrServerClosed", err)
	}
	pc.Close()
	return !t.Failed()
}

// rng2 picks a hold time for a request from its ID, without sharing a
// random source across goroutines.
func rng2(r *http.Request) int {
	id, _ := strconv.Atoi(r.Header.Get("X-Id"))
	return 10 + id*7919%200
}

func rng2n(n int) int { return rand.N(n) + 1 }

// stressIDs numbers the requests of all rounds.
var stressIDs atomic.Int64

// stressRequest sends one request, checks how it ended and reports
// whether it succeeded.
func stressRequest(st *stressStats, tr *Transport, url string, rng *rand.Rand, id int64, graceful bool, processed *sync.Map, serverUp, clientsUp *atomic.Bool) bool {
	ctx := context.Background()
	cancelled := false
	if rng.IntN(6) == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(20))*time.Millisecond)
		defer cancel()
		cancelled = true
	}
	var req *http.Request
	var want string
	switch rng.IntN(4) {
	case 0:
		body := bytes.Repeat([]byte("x"), rng.IntN(100<<10))
		req, _ = http.NewRequestWithContext(ctx, "POST", url+"/post", bytes.NewReader(body)) // GetBody set
		want = strconv.Itoa(len(body))
	case 1:
		req, _ = http.NewRequestWithContext(ctx, "GET", url+"/stream", nil)
		want = "chunk 0;chunk 1;chunk 2;chunk 3;chunk 4;"
	case 2:
		req, _ = http.NewRequestWithContext(ctx, "GET", url+"/hold", nil)
		want = "held"
	default:
		req, _ = http.NewRequestWithContext(ctx, "GET", url+"/", nil)
		want = "ok"
	}
	key := strconv.FormatInt(id, 10)
	req.Header.Set("X-Id", key)
	upBefore := serverUp.Load() && clientsUp.Load()
	resp, err := tr.RoundTrip(req)
	var b []byte
	if err == nil {
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && string(b) != want {
			st.fail("request %s: body %q, want %q", key, b, want)
		}
	}
	if !documentedErr(err) {
		st.fail("request %s: undocumented error %T %v", key, err, err)
	}
	upAfter := serverUp.Load() && clientsUp.Load()
	_, wasProcessed := processed.Load(key)
	switch {
	case err == nil:
		st.count("ok")
		return true
	case cancelled && ctx.Err() != nil:
		st.count("cancelled")
	case upBefore && upAfter:
		// Nothing closed the server or the client: an idle close, a
		// GOAWAY or CloseIdleConnections must not lose a request.
		st.fail("request %s failed with nothing closed (processed %v): %v", key, wasProcessed, err)
	case graceful && clientsUp.Load() && wasProcessed:
		// Shutdown lets the requests it accepted finish.
		st.fail("request %s processed, then lost to Shutdown: %v", key, err)
	default:
		st.count("failed by a close")
	}
	return false
}

// goroutineIDs, goroutineStacks and checkNoGoroutineLeft: as in package
// quic's lifecycle tests.
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

// watchdog panics if done is not called within d: a hang is a defect,
// and the test binary's own timeout would hide which call hung.
func watchdog(t *testing.T, d time.Duration, what string) (done func()) {
	ch := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-time.After(d):
			panic(what + ": did not return within " + d.String())
		}
	}()
	return sync.OnceFunc(func() { close(ch) })
}
