package http3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/linkem"
)

// nsOrigin is an origin served from namespace B of a linkem pair to
// clients in namespace A: the situation of a device (A) and a site (B),
// with the link's delay, and nftables rules in B to block UDP the ways
// networks do.
type nsOrigin struct {
	p        *linkem.Pair
	dual     *DualServer
	log      protoLog
	pool     *x509.CertPool
	url      string
	noAltSvc atomic.Bool // the TCP responses do not advertise HTTP/3
	// hold, if set, is waited for by requests to /hold before they are
	// answered.
	hold atomic.Pointer[chan struct{}]
}

// newNsOrigin makes the pair and serves both protocols on B's port 443.
// It skips the test where namespaces or nftables are missing.
func newNsOrigin(t testing.TB, link linkem.Params) *nsOrigin {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nftables (nft) is missing: `make nftables` installs it")
	}
	p, err := linkem.New(linkem.Config{AB: link, BA: link})
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no network namespaces here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	addr := p.Addr(linkem.B).String()
	cert, pool, err := certs.SelfSigned(addr)
	if err != nil {
		t.Fatal(err)
	}
	o := &nsOrigin{p: p, pool: pool, url: "https://" + addr}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.noAltSvc.Load() {
			w.Header().Del("Alt-Svc")
		}
		o.log.add(r)
		io.Copy(io.Discard, r.Body)
		if h := o.hold.Load(); h != nil && r.URL.Path == "/hold" {
			<-*h
		}
		io.WriteString(w, r.Proto)
	})
	o.dual = &DualServer{H3: &Server{Handler: h, TLSConfig: tc}, HTTP: &http.Server{Addr: addr + ":443", Handler: h}}
	if err := p.Do(linkem.B, o.dual.Listen); err != nil {
		t.Fatal(err)
	}
	go o.dual.Serve()
	t.Cleanup(func() { o.dual.Close() })
	return o
}

// nft applies an nftables ruleset in namespace B.
func (o *nsOrigin) nft(t testing.TB, ruleset string) {
	t.Helper()
	cmd := o.p.Command(context.Background(), linkem.B, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v: %s", err, out)
	}
}

// blockUDP makes the site's firewall drop the UDP datagrams to port 443
// ("drop"), or answer them with an ICMP port unreachable ("reject").
func (o *nsOrigin) blockUDP(t testing.TB, verdict string) {
	o.nft(t, "table inet h3block {\n chain input {\n  type filter hook input priority 0; policy accept;\n  udp dport 443 "+verdict+"\n }\n}\n")
}

// auto returns an AutoTransport whose sockets, TCP and UDP, are opened in
// namespace A.
func (o *nsOrigin) auto(t testing.TB) *AutoTransport {
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	a := &AutoTransport{
		TLSClientConfig: &tls.Config{RootCAs: o.pool},
		TCP: &http.Transport{
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: 10 * time.Second,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return o.p.Dial(ctx, linkem.A, dialer, network, addr)
			},
		},
		H3: &Transport{
			IdleConnTimeout: time.Minute,
			Dial: func(ctx context.Context, addr string, tc *tls.Config, conf *quic.Config) (*quic.Conn, error) {
				return dialQUICIn(ctx, o.p, linkem.A, addr, tc, conf)
			},
		},
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// dialQUICIn dials addr from a UDP socket of its own opened in side s's
// namespace, closed with the connection.
func dialQUICIn(ctx context.Context, p *linkem.Pair, s linkem.Side, addr string, tc *tls.Config, conf *quic.Config) (*quic.Conn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	pc, err := p.ListenPacket(s, "udp4", ":0")
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: pc}
	c, err := tr.Dial(ctx, ua, tc, conf)
	if err != nil {
		go func() { tr.Close(); pc.Close() }()
		return nil, err
	}
	go func() {
		<-c.Context().Done()
		tr.Close()
		pc.Close()
	}()
	return c, nil
}

// timedGet fetches url with a and returns the response's protocol and the
// time the request took.
func timedGet(t testing.TB, a *AutoTransport, url string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	resp, err := a.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Proto, time.Since(start)
}

// UDP blocked at the site, dropped silently or rejected with ICMP: every
// request completes over TCP. A request on the HTTP/3 connection that was
// open goes over TCP once the path is found dead; a client that knew the
// origin offers HTTP/3 (a restart with AltSvcFile) pays one race on its
// first request, and the next requests pay nothing (no QUIC attempt, no
// wait) until the broken mark expires, when one more race happens.
func TestNetnsAutoUDPBlocked(t *testing.T) {
	for _, verdict := range []string{"drop", "reject"} {
		t.Run(verdict, func(t *testing.T) {
			o := newNsOrigin(t, linkem.Params{Delay: 5 * time.Millisecond})
			file := filepath.Join(t.TempDir(), "altsvc.json")
			a := o.auto(t)
			a.AltSvcFile = file
			// Both available: TCP first, then HTTP/3 (at the latest once
			// a handshake that lost a race on a loaded machine is done).
			if proto, _ := timedGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
				t.Fatalf("first request: %s", proto)
			}
			for i := 0; ; i++ {
				proto, _ := timedGet(t, a, o.url+"/")
				if proto == "HTTP/3.0" {
					break
				}
				if i == 50 {
					t.Fatal("never over HTTP/3")
				}
				time.Sleep(20 * time.Millisecond)
			}
			_, h3Time := timedGet(t, a, o.url+"/")
			if err := a.SaveAltSvc(); err != nil {
				t.Fatal(err)
			}
			served := len(o.log.list())

			o.blockUDP(t, verdict)
			// The open HTTP/3 connection: the request goes over TCP
			// when nothing comes back.
			proto, stallTime := timedGet(t, a, o.url+"/")
			if proto != "HTTP/2.0" || a.Stats().Stalls != 1 {
				t.Fatalf("on the open connection: %s, %+v", proto, a.Stats())
			}

			// A restarted client: it knows the alternative, not that
			// UDP is blocked.
			b := o.auto(t)
			b.AltSvcFile = file
			b.init()
			clk := &testClock{t: time.Now()}
			b.cache.now = clk.now
			proto, firstTime := timedGet(t, b, o.url+"/")
			st := b.Stats()
			// TCPWins: TCP completed before the QUIC handshake failed
			// (5 s): the request did not wait for the QUIC timeout.
			if proto != "HTTP/2.0" || st.QUICAttempts != 1 || st.Races != 1 || st.TCPWins != 1 || st.QUICFailures != 0 {
				t.Fatalf("first request after the block: %s, %+v", proto, st)
			}
			var later []time.Duration
			for i := 0; i < 3; i++ {
				proto, d := timedGet(t, b, o.url+"/")
				if proto != "HTTP/2.0" {
					t.Fatalf("later request: %s", proto)
				}
				later = append(later, d)
			}
			if st := b.Stats(); st.QUICAttempts != 1 {
				t.Fatalf("later requests attempted QUIC again: %+v", st)
			}
			st = waitStats(t, b, "QUIC failure", func(s AutoStats) bool { return s.QUICFailures == 1 })
			if st.BrokenMarks != 1 {
				t.Fatalf("after the failure: %+v", st)
			}
			proto, brokenTime := timedGet(t, b, o.url+"/")
			if st := b.Stats(); proto != "HTTP/2.0" || st.BrokenSkips != 1 || st.QUICAttempts != 1 || st.Races != 4 {
				t.Fatalf("while broken: %s, %+v", proto, st)
			}
			clk.advance(5 * time.Minute)
			proto, _ = timedGet(t, b, o.url+"/")
			if st := b.Stats(); proto != "HTTP/2.0" || st.QUICAttempts != 2 || st.Races != 5 {
				t.Fatalf("after the mark expired: %s, %+v", proto, st)
			}
			for i, p := range o.log.list()[served:] {
				if p != "HTTP/2.0" {
					t.Fatalf("request %d after the block served over %s", i, p)
				}
			}
			t.Logf("%s: HTTP/3 request %v; after the block: on the open connection %v, first request of a new client %v (race delay 300 ms), later %v, while broken %v",
				verdict, h3Time.Round(time.Millisecond), stallTime.Round(time.Millisecond), firstTime.Round(time.Millisecond),
				later, brokenTime.Round(time.Millisecond))
		})
	}
}

// A NAT forgets the client's binding while an HTTP/3 request waits for
// its response (the site's firewall drops the client's port from then
// on): the path stops answering; FollowNetwork (on by default) moves the
// connection to a new socket, whose path answers, and the request
// completes over HTTP/3. The stall watchdog must not close the
// connection and mark HTTP/3 broken while the move can still succeed.
func TestNetnsAutoBindingLost(t *testing.T) {
	o := newNsOrigin(t, linkem.Params{Delay: 40 * time.Millisecond})
	a := o.auto(t)
	timedGet(t, a, o.url+"/")
	for i := 0; ; i++ {
		if proto, _ := timedGet(t, a, o.url+"/"); proto == "HTTP/3.0" {
			break
		}
		if i == 50 {
			t.Fatal("never over HTTP/3")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.mu.Lock()
	var qc *quic.Conn
	for _, x := range a.attempts {
		if done, ok := x.finished(); done && ok {
			qc = x.cc.qc
		}
	}
	a.mu.Unlock()
	if qc == nil {
		t.Fatal("no HTTP/3 connection")
	}
	port := qc.LocalAddr().(*net.UDPAddr).Port
	release := make(chan struct{})
	o.hold.Store(&release)
	served := len(o.log.list())
	type result struct {
		proto string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, o.url+"/hold", nil)
		resp, err := a.RoundTrip(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- result{proto: resp.Proto}
	}()
	for len(o.log.list()) == served {
		time.Sleep(5 * time.Millisecond)
	}
	o.nft(t, fmt.Sprintf("table inet nat_gone {\n chain input {\n  type filter hook input priority 0; policy accept;\n  udp sport %d drop\n }\n}\n", port))
	// The connection notices (path probes, then two probe timeouts) and
	// moves; the response waits until it has.
	deadline := time.Now().Add(time.Minute)
	for qc.Stats().Migrations == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	r := <-done
	if r.err != nil || r.proto != "HTTP/3.0" {
		t.Fatalf("request across the lost binding: %s, %v; stats %+v", r.proto, r.err, a.Stats())
	}
	if st := a.Stats(); st.Stalls != 0 || st.BrokenMarks != 0 || qc.Stats().Migrations < 1 {
		t.Fatalf("%d migrations, stats %+v", qc.Stats().Migrations, st)
	}
	if l := o.log.list(); len(l) != served+1 || l[served] != "HTTP/3.0" {
		t.Fatalf("served after the binding was lost: %v", l[served:])
	}
}
