package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	oursh3 "github.com/quicstack/quic/http3"
)

// HTTP/3 interoperability between package github.com/quicstack/quic/http3
// and github.com/quic-go/quic-go/http3, in both directions. Both servers
// run h3Handler; both clients are plain *http.Client values.

const (
	h3BodySize     = 1 << 20
	h3Concurrent   = 100
	h3BigHeaders   = 8    // headers of h3BigHeaderLen bytes each
	h3BigHeaderLen = 1024 // 8 KiB of header values in all
)

// h3Payload returns n deterministic, poorly compressible bytes.
func h3Payload(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// h3HeaderValue returns a token-character value of n bytes that QPACK's
// Huffman coding cannot shrink much.
func h3HeaderValue(i, n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!#$&'*+^`|"
	p := h3Payload(n + i)
	var sb strings.Builder
	for _, c := range p[i:] {
		sb.WriteByte(chars[int(c)%len(chars)])
	}
	return sb.String()
}

func h3Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// h3Barrier counts the requests of one group in a handler at once.
type h3Barrier struct {
	mu      sync.Mutex
	cond    *sync.Cond
	in      int
	peak    int
	arrived int
}

type h3Handler struct {
	mu     sync.Mutex
	groups map[string]*h3Barrier
}

func (h *h3Handler) barrier(group string) *h3Barrier {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.groups == nil {
		h.groups = make(map[string]*h3Barrier)
	}
	b := h.groups[group]
	if b == nil {
		b = &h3Barrier{}
		b.cond = sync.NewCond(&b.mu)
		h.groups[group] = b
	}
	return b
}

func (h *h3Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/get":
		// The body in uneven writes, with a flush in the middle.
		p := h3Payload(h3BodySize)
		w.Header().Set("X-Sum", h3Sum(p))
		for len(p) > 0 {
			n := min(len(p), 100_003)
			if _, err := w.Write(p[:n]); err != nil {
				return
			}
			p = p[n:]
			if len(p) < 500_000 && len(p)+n >= 500_000 {
				w.(http.Flusher).Flush()
			}
		}
	case "/echo":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Request-Length", strconv.Itoa(len(b)))
		w.Header().Set("X-Request-Content-Length", strconv.FormatInt(r.ContentLength, 10))
		w.Write(b)
	case "/reqtrailers":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "len=%d sum=%s trailer=%s", len(b), r.Trailer.Get("X-Req-Sum"), h3Sum(b))
	case "/trailers":
		w.Header().Set("Trailer", "X-Checksum, X-Count")
		w.WriteHeader(http.StatusOK)
		p := h3Payload(64 << 10)
		w.Write(p)
		w.Header().Set("X-Checksum", h3Sum(p))
		w.Header().Set("X-Count", strconv.Itoa(len(p)))
		w.Header().Set(http.TrailerPrefix+"X-Undeclared", "late")
	case "/concurrent":
		b := h.barrier(r.URL.Query().Get("group"))
		b.mu.Lock()
		b.in++
		b.arrived++
		b.peak = max(b.peak, b.in)
		b.cond.Broadcast()
		deadline := time.AfterFunc(3*time.Second, func() {
			b.mu.Lock()
			b.cond.Broadcast()
			b.mu.Unlock()
		})
		start := time.Now()
		for b.arrived < h3Concurrent && time.Since(start) < 3*time.Second {
			b.cond.Wait()
		}
		deadline.Stop()
		peak := b.peak
		b.in--
		b.mu.Unlock()
		w.Header().Set("X-Remote", r.RemoteAddr)
		w.Header().Set("X-Peak", strconv.Itoa(peak))
		fmt.Fprintf(w, "request %s", r.URL.Query().Get("i"))
	case "/headers":
		// Report what arrived and send the same fields back.
		var sb strings.Builder
		for i := range h3BigHeaders {
			k := fmt.Sprintf("X-Big-%d", i)
			v := r.Header.Get(k)
			fmt.Fprintf(&sb, "%s=%s\n", k, h3Sum([]byte(v)))
			w.Header().Set(k, v)
		}
		w.Header().Set("X-Single", r.Header.Get("X-Single"))
		fmt.Fprintf(&sb, "X-Single=%s\n", h3Sum([]byte(r.Header.Get("X-Single"))))
		io.WriteString(w, sb.String())
	default:
		http.NotFound(w, r)
	}
}

func h3TLS(t testing.TB) (client, server *tls.Config) {
	c, s := testTLS(t)
	c, s = c.Clone(), s.Clone()
	c.NextProtos = []string{"h3"}
	s.NextProtos = []string{"h3"}
	return c, s
}

// startQuicGoH3 runs quic-go's HTTP/3 server and returns its address.
func startQuicGoH3(t *testing.T, stls *tls.Config, h http.Handler) string {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &qgh3.Server{Handler: h, TLSConfig: stls}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(udp)
	}()
	t.Cleanup(func() {
		srv.Close()
		udp.Close()
		<-done
	})
	return udp.LocalAddr().String()
}

// startOurH3 runs our HTTP/3 server and returns its address.
func startOurH3(t *testing.T, stls *tls.Config, h http.Handler) string {
	l, err := ours.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := &oursh3.Server{Handler: h, TLSConfig: stls}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != oursh3.ErrServerClosed {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return l.Addr().String()
}

// h3Client returns a fresh client (and so a fresh connection) for one
// subtest.
type h3ClientFunc func(t *testing.T) *http.Client

func ourH3Client(ctls *tls.Config) h3ClientFunc {
	return func(t *testing.T) *http.Client {
		tr := &oursh3.Transport{TLSClientConfig: ctls}
		t.Cleanup(func() { tr.Close() })
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
}

func quicGoH3Client(ctls *tls.Config) h3ClientFunc {
	return func(t *testing.T) *http.Client {
		tr := &qgh3.Transport{TLSClientConfig: ctls}
		t.Cleanup(func() { tr.Close() })
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
}

func TestH3OurClientQuicGoServer(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	addr := startQuicGoH3(t, stls, &h3Handler{})
	runH3Matrix(t, "https://"+addr, ourH3Client(ctls))
}

func TestH3QuicGoClientOurServer(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	addr := startOurH3(t, stls, &h3Handler{})
	runH3Matrix(t, "https://"+addr, quicGoH3Client(ctls))
}

func runH3Matrix(t *testing.T, base string, newClient h3ClientFunc) {
	t.Run("Get1MB", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		resp, err := c.Get(base + "/get")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading body: %v (%d bytes read)", err, len(b))
		}
		if resp.StatusCode != 200 || resp.ProtoMajor != 3 {
			t.Fatalf("status %q proto %q", resp.Status, resp.Proto)
		}
		if want := h3Payload(h3BodySize); !bytes.Equal(b, want) {
			t.Fatalf("body: %d bytes, sum %s; want %d bytes, sum %s", len(b), h3Sum(b), len(want), h3Sum(want))
		}
		if got := resp.Header.Get("X-Sum"); got != h3Sum(b) {
			t.Fatalf("X-Sum %q", got)
		}
	})
	t.Run("PostEcho1MB", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		data := h3Payload(h3BodySize)
		resp, err := c.Post(base+"/echo", "application/octet-stream", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading body: %v (%d bytes read)", err, len(b))
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %q: %q", resp.Status, b[:min(len(b), 200)])
		}
		if got := resp.Header.Get("X-Request-Length"); got != strconv.Itoa(len(data)) {
			t.Fatalf("server read %s bytes, want %d", got, len(data))
		}
		if got := resp.Header.Get("X-Request-Content-Length"); got != strconv.Itoa(len(data)) {
			t.Fatalf("server saw Content-Length %s, want %d", got, len(data))
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("echo: %d bytes, sum %s; want %d bytes, sum %s", len(b), h3Sum(b), len(data), h3Sum(data))
		}
	})
	t.Run("PostEchoStreamed", func(t *testing.T) {
		// A body of unknown length (no Content-Length), written in pieces.
		t.Parallel()
		c := newClient(t)
		data := h3Payload(h3BodySize)
		pr, pw := io.Pipe()
		go func() {
			for p := data; len(p) > 0; {
				n := min(len(p), 77_777)
				if _, err := pw.Write(p[:n]); err != nil {
					return
				}
				p = p[n:]
			}
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, base+"/echo", pr)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading body: %v (%d bytes read)", err, len(b))
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("echo: %d bytes, sum %s; want %d bytes, sum %s", len(b), h3Sum(b), len(data), h3Sum(data))
		}
	})
	t.Run("ResponseTrailers", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		resp, err := c.Get(base + "/trailers")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading body: %v", err)
		}
		if !bytes.Equal(b, h3Payload(64<<10)) {
			t.Fatalf("body: %d bytes", len(b))
		}
		if got := resp.Trailer.Get("X-Checksum"); got != h3Sum(b) {
			t.Errorf("trailer X-Checksum = %q, want %q (trailer %v)", got, h3Sum(b), resp.Trailer)
		}
		if got := resp.Trailer.Get("X-Count"); got != strconv.Itoa(len(b)) {
			t.Errorf("trailer X-Count = %q (trailer %v)", got, resp.Trailer)
		}
		if got := resp.Trailer.Get("X-Undeclared"); got != "late" {
			t.Errorf("trailer X-Undeclared = %q (trailer %v)", got, resp.Trailer)
		}
		if got := resp.Header.Get("X-Checksum"); got != "" {
			t.Errorf("trailer in header: X-Checksum %q", got)
		}
	})
	t.Run("RequestTrailers", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		data := h3Payload(200 << 10)
		pr, pw := io.Pipe()
		req, _ := http.NewRequest(http.MethodPost, base+"/reqtrailers", pr)
		req.Trailer = http.Header{"X-Req-Sum": nil}
		go func() {
			pw.Write(data)
			req.Trailer.Set("X-Req-Sum", h3Sum(data))
			pw.Close()
		}()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading body: %v", err)
		}
		if want := fmt.Sprintf("len=%d sum=%s trailer=%s", len(data), h3Sum(data), h3Sum(data)); string(b) != want {
			t.Fatalf("server saw %q, want %q", b, want)
		}
	})
	t.Run("Concurrent100", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		group := fmt.Sprintf("%p", c)
		var wg sync.WaitGroup
		errs := make(chan error, h3Concurrent)
		remotes := make([]string, h3Concurrent)
		peaks := make([]int, h3Concurrent)
		for i := range h3Concurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := c.Get(fmt.Sprintf("%s/concurrent?group=%s&i=%d", base, group, i))
				if err != nil {
					errs <- fmt.Errorf("request %d: %v", i, err)
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					errs <- fmt.Errorf("request %d body: %v", i, err)
					return
				}
				if want := fmt.Sprintf("request %d", i); string(b) != want {
					errs <- fmt.Errorf("request %d: body %q", i, b)
					return
				}
				remotes[i] = resp.Header.Get("X-Remote")
				peaks[i], _ = strconv.Atoi(resp.Header.Get("X-Peak"))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			return
		}
		peak := 0
		for i, r := range remotes {
			if r != remotes[0] {
				t.Fatalf("request %d came from %s, request 0 from %s: not one connection", i, r, remotes[0])
			}
			peak = max(peak, peaks[i])
		}
		if peak != h3Concurrent {
			t.Errorf("at most %d requests were in the handler at once, want %d", peak, h3Concurrent)
		}
	})
	t.Run("LargeHeaders", func(t *testing.T) {
		t.Parallel()
		c := newClient(t)
		req, _ := http.NewRequest(http.MethodGet, base+"/headers", nil)
		var want strings.Builder
		for i := range h3BigHeaders {
			k := fmt.Sprintf("X-Big-%d", i)
			v := h3HeaderValue(i, h3BigHeaderLen)
			req.Header.Set(k, v)
			fmt.Fprintf(&want, "%s=%s\n", k, h3Sum([]byte(v)))
		}
		single := h3HeaderValue(99, 8<<10)
		req.Header.Set("X-Single", single)
		fmt.Fprintf(&want, "X-Single=%s\n", h3Sum([]byte(single)))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading body: %v", err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %q", resp.Status)
		}
		if string(b) != want.String() {
			t.Fatalf("server saw\n%s\nwant\n%s", b, want.String())
		}
		for k, vs := range req.Header {
			if got := resp.Header.Values(k); len(got) != 1 || got[0] != vs[0] {
				t.Errorf("response header %s: %d values, first %d bytes; want %d bytes", k, len(got), len(strings.Join(got, "")), len(vs[0]))
			}
		}
	})
}

// h3SlowHandler holds each request until release is closed, then sends
// a 1 MB body.
type h3SlowHandler struct {
	started chan struct{}
	release chan struct{}
}

func (h *h3SlowHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.started <- struct{}{}
	<-h.release
	w.Write(h3Payload(h3BodySize))
}

// runH3Shutdown sends a request that the handler holds, shuts the server
// down while it is in flight, and checks that the response still arrives
// whole and that shutdown then completes.
func runH3Shutdown(t *testing.T, url string, c *http.Client, h *h3SlowHandler, shutdown func(context.Context) error) {
	type result struct {
		body []byte
		err  error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := c.Get(url)
		if err != nil {
			res <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		res <- result{b, err}
	}()
	select {
	case <-h.started:
	case <-time.After(5 * time.Second):
		t.Fatal("request did not reach the handler")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- shutdown(ctx) }()
	// Shutdown must wait for the request in flight.
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(h.release)
	r := <-res
	if r.err != nil {
		t.Fatalf("request in flight during Shutdown: %v", r.err)
	}
	if !bytes.Equal(r.body, h3Payload(h3BodySize)) {
		t.Fatalf("body: %d bytes, want %d", len(r.body), h3BodySize)
	}
	start := time.Now()
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Shutdown took %v after the last response", d)
	}
}

func TestH3ShutdownOurServerQuicGoClient(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	l, err := ours.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &h3SlowHandler{started: make(chan struct{}, 1), release: make(chan struct{})}
	srv := &oursh3.Server{Handler: h, TLSConfig: stls}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(l) }()
	defer func() {
		srv.Close()
		if err := <-done; err != oursh3.ErrServerClosed {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	}()
	c := quicGoH3Client(ctls)(t)
	runH3Shutdown(t, "https://"+l.Addr().String()+"/slow", c, h, srv.Shutdown)
}

func TestH3ShutdownQuicGoServerOurClient(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	h := &h3SlowHandler{started: make(chan struct{}, 1), release: make(chan struct{})}
	srv := &qgh3.Server{Handler: h, TLSConfig: stls}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(udp)
	}()
	defer func() {
		srv.Close()
		<-done
	}()
	c := ourH3Client(ctls)(t)
	runH3Shutdown(t, "https://"+udp.LocalAddr().String()+"/slow", c, h, srv.Shutdown)
}
