package http3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/netem"
)

// An origin served over both protocols with Alt-Svc: the first request
// goes over TCP (the client knows nothing yet), the later ones over
// HTTP/3, as the server saw them.
func TestAutoBothAltSvc(t *testing.T) {
	o := newOrigin(t, "both")
	a := newAuto(t, o.pool)
	for i := 0; i < 4; i++ {
		proto, body := autoGet(t, a, o.url+"/")
		if proto != body {
			t.Fatalf("request %d: Response.Proto %q, the server saw %q", i, proto, body)
		}
	}
	want := []string{"HTTP/2.0", "HTTP/3.0", "HTTP/3.0", "HTTP/3.0"}
	if got := o.log.list(); !equalStrings(got, want) {
		t.Fatalf("protocols seen by the server: %q; want %q", got, want)
	}
	st := a.Stats()
	t.Logf("%+v", st)
	if st.QUICAttempts != 1 || st.HTTP3Responses != 3 || st.HTTP2Responses != 1 || st.AltSvcUpdates == 0 {
		t.Fatalf("stats %+v", st)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// An origin served over TCP only: every request goes over TCP, and no
// QUIC connection is attempted.
func TestAutoTCPOnly(t *testing.T) {
	o := newOrigin(t, "tcp")
	a := newAuto(t, o.pool)
	for i := 0; i < 3; i++ {
		if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
			t.Fatalf("request %d over %s", i, proto)
		}
	}
	if st := a.Stats(); st.QUICAttempts != 0 || st.HTTP2Responses != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// An origin served over UDP only: TCP is refused, so the request tries
// HTTP/3 on the origin's own port (RFC 9114, Section 3.1), and the next
// requests use that connection.
func TestAutoUDPOnly(t *testing.T) {
	o := newOrigin(t, "udp")
	a := newAuto(t, o.pool)
	for i := 0; i < 3; i++ {
		if proto, body := autoGet(t, a, o.url+"/"); proto != "HTTP/3.0" || body != proto {
			t.Fatalf("request %d over %s (server saw %s)", i, proto, body)
		}
	}
	if st := a.Stats(); st.QUICAttempts != 1 || st.HTTP3Responses != 3 {
		t.Fatalf("stats %+v", st)
	}
	// Without anything on UDP either, the request fails with both errors.
	dead := newOrigin(t, "udp")
	dead.h3.Close()
	dead.udp.Close()
	a.QUICConfig = nil
	b := &AutoTransport{TLSClientConfig: a.TLSClientConfig, RaceDelay: time.Millisecond,
		QUICConfig: &quic.Config{HandshakeIdleTimeout: 200 * time.Millisecond}}
	defer b.Close()
	req, _ := http.NewRequest("GET", dead.url+"/", nil)
	if _, err := b.RoundTrip(req); err == nil || !isTCPDialError(err) {
		t.Fatalf("dead origin: %v", err)
	}
}

// Policy and WithProtocolPolicy force or forbid HTTP/3.
func TestAutoPolicy(t *testing.T) {
	o := newOrigin(t, "both")
	a := newAuto(t, o.pool)
	a.Policy = ForbidHTTP3
	for i := 0; i < 2; i++ {
		if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
			t.Fatalf("ForbidHTTP3: request %d over %s", i, proto)
		}
	}
	req, _ := http.NewRequest("GET", o.url+"/", nil)
	req = req.WithContext(WithProtocolPolicy(req.Context(), AutoProtocol))
	if proto, _ := autoDo(t, a, req); proto != "HTTP/3.0" {
		t.Fatalf("AutoProtocol for one request (alternative known): %s", proto)
	}
	if a.Stats().QUICAttempts != 1 {
		t.Fatal("no QUIC attempt")
	}
	// RequireHTTP3 on a fresh transport: at the origin itself at once.
	b := newAuto(t, o.pool)
	b.Policy = RequireHTTP3
	if proto, _ := autoGet(t, b, o.url+"/"); proto != "HTTP/3.0" {
		t.Fatalf("RequireHTTP3: %s", proto)
	}
	req, _ = http.NewRequest("GET", o.url+"/", nil)
	req = req.WithContext(WithProtocolPolicy(req.Context(), ForbidHTTP3))
	if proto, _ := autoDo(t, b, req); proto != "HTTP/2.0" {
		t.Fatalf("ForbidHTTP3 for one request: %s", proto)
	}
	// RequireHTTP3 on an origin without UDP fails.
	tcpOnly := newOrigin(t, "tcp")
	c := &AutoTransport{TLSClientConfig: b.TLSClientConfig, Policy: RequireHTTP3,
		QUICConfig: &quic.Config{HandshakeIdleTimeout: 200 * time.Millisecond}}
	defer c.Close()
	req, _ = http.NewRequest("GET", tcpOnly.url+"/", nil)
	if resp, err := c.RoundTrip(req); err == nil {
		t.Fatalf("RequireHTTP3 on a TCP-only origin: %s", resp.Proto)
	}
	if got := tcpOnly.log.list(); len(got) != 0 {
		t.Fatalf("the TCP server saw %q", got)
	}
	// RequireHTTP3 for an "http" URL fails: HTTP/3 needs "https".
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("RequireHTTP3 sent %s %s over plain HTTP", r.Method, r.URL)
	}))
	defer plain.Close()
	req, _ = http.NewRequest("GET", plain.URL+"/", nil)
	if resp, err := c.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatalf("RequireHTTP3 on an http URL: %s", resp.Proto)
	}
	if ForbidHTTP3.String() != "tcp" || RequireHTTP3.String() != "h3" || AutoProtocol.String() != "auto" {
		t.Fatal("ProtocolPolicy names")
	}
}

// Alt-Svc is honoured only over an authenticated connection (RFC 7838,
// Section 2.1): with InsecureSkipVerify and no verifier of the
// application's, it is ignored.
func TestAutoAltSvcNeedsAuthentication(t *testing.T) {
	o := newOrigin(t, "both")
	a := newAuto(t, nil)
	a.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	for i := 0; i < 3; i++ {
		if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
			t.Fatalf("request %d over %s", i, proto)
		}
	}
	if st := a.Stats(); st.QUICAttempts != 0 || st.AltSvcIgnored != 3 || st.AltSvcUpdates != 0 {
		t.Fatalf("stats %+v", st)
	}
	// The application's own verification counts.
	b := newAuto(t, nil)
	b.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: o.pool, DNSName: "127.0.0.1"})
		return err
	}}
	autoGet(t, b, o.url+"/")
	if proto, _ := autoGet(t, b, o.url+"/"); proto != "HTTP/3.0" {
		t.Fatalf("with VerifyConnection: %s", proto)
	}
}

// An alternative must present a certificate valid for the origin's host,
// whatever its own host and port (RFC 7838, Sections 2.1 and 9.2): one
// whose certificate (trusted, but for another name) does not is marked
// broken, and the requests go over TCP.
func TestAutoAlternativeMustProveOrigin(t *testing.T) {
	t.Parallel() // seconds of handshake timeouts and closing periods
	evil, _ := testCertFor(t, "evil.example")
	o := newSplitOrigin(t, &evil)
	pool := o.pool.Clone()
	pool.AddCert(evil.Leaf)
	o.advertise()
	a := newAuto(t, pool)
	for i := 0; i < 3; i++ {
		if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
			t.Fatalf("request %d over %s", i, proto)
		}
		if i == 1 {
			start := time.Now()
			waitStats(t, a, "QUIC failure", func(s AutoStats) bool { return s.QUICFailures == 1 })
			t.Logf("failure after %v", time.Since(start))
		}
	}
	if got := o.h3Log.list(); len(got) != 0 {
		t.Fatalf("the alternative served %q", got)
	}
	if st := a.Stats(); st.BrokenMarks != 1 || st.BrokenSkips != 1 || st.QUICAttempts != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A malformed or oversized Alt-Svc field is ignored whole, and what one
// origin advertises never changes another origin's (here the same server
// under another name).
func TestAutoAltSvcMalformedAndIsolated(t *testing.T) {
	o := newSplitOrigin(t, nil)
	a := newAuto(t, o.pool)
	relay := strconv.Itoa(o.relay.port())
	for _, v := range []string{`h3=":` + relay + `", h3=`, strings.Repeat(`h3=":`+relay+`",`, 40), `h3=":` + relay + `"; ma=1; ma=2`} {
		o.altSvc.Store(v)
		autoGet(t, a, o.url+"/")
		if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
			t.Fatalf("after %q: %s", v, proto)
		}
	}
	if st := a.Stats(); st.AltSvcIgnored != 6 || st.QUICAttempts != 0 {
		t.Fatalf("stats %+v", st)
	}
	// localhost's advertisement does not apply to 127.0.0.1.
	o.advertise()
	autoGet(t, a, "https://localhost:"+strconv.Itoa(o.tcpPort)+"/")
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
		t.Fatalf("127.0.0.1 used localhost's alternative: %s", proto)
	}
	if proto, _ := autoGet(t, a, "https://localhost:"+strconv.Itoa(o.tcpPort)+"/"); proto != "HTTP/3.0" {
		t.Fatalf("localhost: %s", proto)
	}
	// The requests to the alternative name it (RFC 7838, Section 5).
	if got := o.h3Log.altUsed(); len(got) != 1 || got[0] != "localhost:"+relay {
		t.Fatalf("Alt-Used %q", got)
	}
}

// A request to an alternative that answers 421 (Misdirected Request) is
// sent again to the origin, and the alternative is forgotten (RFC 7838,
// Section 6).
func TestAutoMisdirected(t *testing.T) {
	o := newSplitOrigin(t, nil)
	o.advertise()
	o.h3Status.Store(http.StatusMisdirectedRequest)
	a := newAuto(t, o.pool)
	autoGet(t, a, o.url+"/")
	o.altSvc.Store("") // so that the retry over TCP does not teach it again
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
		t.Fatalf("after 421: %s", proto)
	}
	if got := o.h3Log.list(); len(got) != 1 {
		t.Fatalf("alternative saw %q", got)
	}
	if n := len(a.cache.candidates(originKey("127.0.0.1", o.tcpPort), "127.0.0.1")); n != 0 {
		t.Fatalf("%d alternatives left", n)
	}
}

func testCertFor(t *testing.T, name string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	cert, pool, err := certs.SelfSigned(name)
	if err != nil {
		t.Fatal(err)
	}
	return cert, pool
}

// An alternative whose UDP is silently dropped: the request races TCP
// after RaceDelay and TCP wins; while the handshake goes on, requests go
// over TCP without waiting; once it times out the alternative is broken
// for 5 minutes (no attempt, no wait), then tried again at once (raced
// without delay), and broken for 10 minutes after a second failure.
func TestAutoBlackholedAlternative(t *testing.T) {
	t.Parallel() // seconds of handshake timeouts and closing periods
	o := newSplitOrigin(t, nil)
	o.advertise()
	o.relay.drop.Store(true)
	a := newAuto(t, o.pool)
	a.RaceDelay = 20 * time.Millisecond
	a.QUICConfig = &quic.Config{HandshakeIdleTimeout: time.Second}
	a.init()
	clk := &testClock{t: time.Now()}
	a.cache.now = clk.now
	get := func(what string) AutoStats {
		t.Helper()
		if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
			t.Fatalf("%s: %s", what, proto)
		}
		return a.Stats()
	}
	get("first request")
	st := get("second request: TCP wins the race")
	if st.QUICAttempts != 1 || st.Races != 1 || st.TCPWins != 1 || st.QUICFailures != 0 {
		t.Fatalf("after the race: %+v", st)
	}
	// The handshake lost but goes on: the next request goes over TCP at
	// once. (QUICFailures 0 shows it came before the handshake timed out.)
	st = get("third request")
	if st.QUICAttempts != 1 || st.TCPWins != 2 {
		t.Fatalf("third request: %+v", st)
	}
	st = waitStats(t, a, "handshake timeout", func(s AutoStats) bool { return s.QUICFailures == 1 })
	if st.BrokenMarks != 1 {
		t.Fatalf("after the timeout: %+v", st)
	}
	st = get("while broken")
	if st.QUICAttempts != 1 || st.BrokenSkips != 1 || st.Races != 2 {
		t.Fatalf("while broken: %+v", st)
	}
	clk.advance(5*time.Minute - time.Second)
	if st = get("a second before the mark expires"); st.QUICAttempts != 1 || st.BrokenSkips != 2 {
		t.Fatalf("a second before expiry: %+v", st)
	}
	clk.advance(time.Second)
	st = get("after the mark")
	if st.QUICAttempts != 2 || st.Races != 3 || st.TCPWins != 3 {
		t.Fatalf("after expiry: %+v", st)
	}
	waitStats(t, a, "second timeout", func(s AutoStats) bool { return s.QUICFailures == 2 })
	clk.advance(10*time.Minute - time.Second)
	if st = get("9:59 after the second failure"); st.QUICAttempts != 2 {
		t.Fatalf("second mark shorter than 10 minutes: %+v", st)
	}
	clk.advance(time.Second)
	if st = get("10:00 after"); st.QUICAttempts != 3 {
		t.Fatalf("second mark longer than 10 minutes: %+v", st)
	}
}

// An HTTP/3 connection whose path dies (UDP blocked after it worked): a
// GET on it is sent again over TCP once nothing came back, and the
// alternative is broken; a POST without GetBody is not sent again.
func TestAutoStalledConnection(t *testing.T) {
	t.Parallel() // seconds of handshake timeouts and closing periods
	o := newSplitOrigin(t, nil)
	o.advertise()
	a := newAuto(t, o.pool)
	a.RaceDelay = 50 * time.Millisecond
	a.QUICConfig = &quic.Config{HandshakeIdleTimeout: 20 * time.Second, MaxIdleTimeout: 2 * time.Second}
	autoGet(t, a, o.url+"/")
	untilH3(t, a, o.url+"/")
	o.relay.drop.Store(true)
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
		t.Fatalf("after the block: %s", proto)
	}
	st := a.Stats()
	if st.Stalls != 1 || st.Fallbacks != 1 || st.BrokenMarks != 1 {
		t.Fatalf("stats %+v", st)
	}
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" || a.Stats().BrokenSkips != 1 {
		t.Fatalf("next request: %s, %+v", proto, a.Stats())
	}
	got := o.h3Log.list()
	if len(got) != 1 {
		t.Fatalf("the HTTP/3 server saw %q", got)
	}
	// A POST whose body cannot be had again is not sent twice: it fails
	// when the connection gives up.
	o.relay.drop.Store(false)
	b := newAuto(t, o.pool)
	b.QUICConfig = a.QUICConfig
	autoGet(t, b, o.url+"/")
	untilH3(t, b, o.url+"/")
	o.relay.drop.Store(true)
	tcpSeen := len(o.tcpLog.list())
	req, _ := http.NewRequest(http.MethodPost, o.url+"/", io.NopCloser(strings.NewReader("once")))
	if resp, err := b.RoundTrip(req); err == nil {
		t.Fatalf("POST on a dead path answered over %s", resp.Proto)
	}
	if n := len(o.tcpLog.list()); n != tcpSeen {
		t.Fatalf("TCP server saw %d requests; want %d (no POST)", n, tcpSeen)
	}
}

// An HTTP/3 connection whose path dies and that reaches its idle timeout
// before the stall watchdog looks (here RaceDelay, the watchdog's period,
// is longer than the idle timeout): a GET waiting on it is sent again over
// TCP, as after a stall, and the alternative is broken.
func TestAutoIdleTimeoutFallback(t *testing.T) {
	t.Parallel() // a second of idle timeout
	o := newSplitOrigin(t, nil)
	o.advertise()
	a := newAuto(t, o.pool) // RaceDelay 10 s
	a.QUICConfig = &quic.Config{HandshakeIdleTimeout: 20 * time.Second, MaxIdleTimeout: time.Second}
	autoGet(t, a, o.url+"/")
	untilH3(t, a, o.url+"/")
	o.relay.drop.Store(true)
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
		t.Fatalf("after the block: %s", proto)
	}
	if st := a.Stats(); st.Stalls != 1 || st.Fallbacks != 1 || st.BrokenMarks != 1 {
		t.Fatalf("stats %+v", st)
	}
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" || a.Stats().BrokenSkips != 1 {
		t.Fatalf("next request: %s, %+v", proto, a.Stats())
	}
}

// The cache survives a restart through AltSvcFile: a new transport's
// first request to the origin goes over HTTP/3.
func TestAutoAltSvcFile(t *testing.T) {
	o := newOrigin(t, "both")
	file := filepath.Join(t.TempDir(), "altsvc.json")
	a := newAuto(t, o.pool)
	a.AltSvcFile = file
	autoGet(t, a, o.url+"/")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := newAuto(t, o.pool)
	b.AltSvcFile = file
	if proto, _ := autoGet(t, b, o.url+"/"); proto != "HTTP/3.0" {
		t.Fatalf("first request after the restart: %s", proto)
	}
	if got := o.log.list(); !equalStrings(got, []string{"HTTP/2.0", "HTTP/3.0"}) {
		t.Fatalf("server saw %q", got)
	}
	// A corrupt file is a cold cache.
	os.WriteFile(file, []byte("{garbage"), 0o600)
	c := newAuto(t, o.pool)
	c.AltSvcFile = file
	if proto, _ := autoGet(t, c, o.url+"/"); proto != "HTTP/2.0" {
		t.Fatalf("with a corrupt file: %s", proto)
	}
	if err := c.SaveAltSvc(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), `"version": 1`) {
		t.Fatalf("file not replaced: %s", b)
	}
}

// DNS HTTPS records are a second source: the first request to an origin
// goes to the HTTP/3 endpoint its records name (here on another port,
// through an AliasMode record), not over TCP.
func TestAutoHTTPSRecords(t *testing.T) {
	o := newSplitOrigin(t, nil)
	var mu sync.Mutex
	var asked []string
	a := newAuto(t, o.pool)
	a.LookupHTTPS = func(ctx context.Context, name string) ([]HTTPSRecord, error) {
		mu.Lock()
		asked = append(asked, name)
		mu.Unlock()
		switch name {
		case "_" + strconv.Itoa(o.tcpPort) + "._https.localhost":
			return []HTTPSRecord{{Name: name, Priority: 0, Target: "svc.example", TTL: time.Hour}}, nil
		case "svc.example":
			return []HTTPSRecord{
				{Name: name, Priority: 2, Target: "localhost", ALPN: []string{"h2"}, TTL: time.Hour},
				{Name: name, Priority: 1, Target: "localhost", ALPN: []string{"h3"}, Port: o.relay.port(), TTL: time.Hour},
			}, nil
		}
		return nil, nil
	}
	url := "https://localhost:" + strconv.Itoa(o.tcpPort) + "/"
	for i := 0; i < 2; i++ {
		if proto, _ := autoGet(t, a, url); proto != "HTTP/3.0" {
			t.Fatalf("request %d: %s", i, proto)
		}
	}
	if got := o.tcpLog.list(); len(got) != 0 {
		t.Fatalf("TCP server saw %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !equalStrings(asked, []string{"_" + strconv.Itoa(o.tcpPort) + "._https.localhost", "svc.example"}) {
		t.Fatalf("lookups %q", asked)
	}
	if st := a.Stats(); st.HTTPSLookups != 1 || st.HTTPSLookupErrors != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A QUIC connection that resumes a session sends GET in 0-RTT, at once,
// where the server allows it.
func TestAuto0RTT(t *testing.T) {
	cert, pool := testCert(t)
	var mu sync.Mutex
	var early []bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		early = append(early, r.ProtoMajor == 3 && !r.TLS.HandshakeComplete)
		mu.Unlock()
		io.WriteString(w, r.Proto)
	})
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	s := &DualServer{H3: &Server{Handler: h, TLSConfig: tc, QUICConfig: &quic.Config{Allow0RTT: true}},
		HTTP: &http.Server{Addr: "127.0.0.1:0"}}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	url := "https://127.0.0.1:" + strconv.Itoa(s.TCPAddr().(*net.TCPAddr).Port) + "/"
	a := newAuto(t, pool)
	autoGet(t, a, url)
	if proto, _ := autoGet(t, a, url); proto != "HTTP/3.0" {
		t.Fatalf("second request: %s", proto)
	}
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
	if proto, _ := autoGet(t, a, url); proto != "HTTP/3.0" {
		t.Fatalf("resumed: %s", proto)
	}
	a.mu.Lock()
	var second *quicAttempt
	for _, x := range a.attempts {
		second = x
	}
	a.mu.Unlock()
	<-second.cc.qc.HandshakeComplete()
	if second == first || !second.cc.qc.ConnectionState().Used0RTT {
		t.Fatal("the resumed connection did not use 0-RTT")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) != 3 || early[1] {
		t.Fatalf("requests in 0-RTT: %v", early)
	}
}

// A GET sent in 0-RTT on a resumed connection whose UDP is dropped goes
// over TCP after RaceDelay (the stall watchdog, without waiting for the
// handshake timeout), and the alternative is broken once.
func TestAuto0RTTBlackholed(t *testing.T) {
	o := newSplitOrigin(t, nil)
	o.advertise()
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
	o.relay.drop.Store(true)
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
		t.Fatalf("blackholed 0-RTT: %s", proto)
	}
	st := a.Stats()
	if st.Stalls != 1 || st.Fallbacks != 1 || st.BrokenMarks != 1 || st.QUICAttempts != 2 {
		t.Fatalf("stats %+v", st)
	}
	waitStats(t, a, "handshake failure", func(s AutoStats) bool { return s.QUICFailures == 1 })
	if st := a.Stats(); st.BrokenMarks != 1 {
		t.Fatalf("marked twice: %+v", st)
	}
}

// A race that TCP wins because UDP is slow (400 ms each way in the relay, less than the initial PTO):
// the request goes over TCP after RaceDelay instead of waiting for the
// QUIC handshake, which goes on; once it completes, the next request
// takes the QUIC connection.
func TestAutoRaceSlowUDP(t *testing.T) {
	t.Parallel() // seconds of handshake timeouts and closing periods
	o := newSplitOrigin(t, nil)
	slow, err := netem.New(netem.Config{
		Server:      &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: o.h3Port},
		Link:        [2]netem.LinkConfig{{Delay: 400 * time.Millisecond}, {Delay: 400 * time.Millisecond}},
		RecordBytes: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	o.altSvc.Store(`h3=":` + strconv.Itoa(slow.Addr().Port) + `"`)
	a := newAuto(t, o.pool)
	a.RaceDelay = 100 * time.Millisecond
	autoGet(t, a, o.url+"/")
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/2.0" {
		t.Fatalf("raced request over %s", proto)
	}
	st := a.Stats()
	if st.Races != 1 || st.TCPWins != 1 || st.QUICWins != 0 || st.QUICFailures != 0 {
		t.Fatalf("after the race: %+v", st)
	}
	// The handshake completes (800 ms of round trip later); the
	// QUIC connection is kept and takes the next requests.
	for i := 0; ; i++ {
		a.mu.Lock()
		var att *quicAttempt
		for _, x := range a.attempts {
			att = x
		}
		a.mu.Unlock()
		if done, ok := att.finished(); done {
			if !ok {
				t.Fatalf("handshake failed: %v", att.hsErr)
			}
			break
		}
		if i == 3000 {
			t.Fatal("handshake not done after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if proto, _ := autoGet(t, a, o.url+"/"); proto != "HTTP/3.0" {
		t.Fatalf("after the handshake: %s", proto)
	}
	if st := a.Stats(); st.QUICAttempts != 1 || st.HTTP3Responses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Many requests at once to an origin the client knows offers HTTP/3 (a
// slow handshake, so that they race): one QUIC connection is dialed, one
// TCP connection made ahead, every request answered; then Close in the
// middle of another burst ends them without hanging.
func TestAutoConcurrent(t *testing.T) {
	t.Parallel()
	o := newSplitOrigin(t, nil)
	slow, err := netem.New(netem.Config{
		Server:      &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: o.h3Port},
		Link:        [2]netem.LinkConfig{{Delay: 100 * time.Millisecond}, {Delay: 100 * time.Millisecond}},
		RecordBytes: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	o.altSvc.Store(`h3=":` + strconv.Itoa(slow.Addr().Port) + `"`)
	a := newAuto(t, o.pool)
	a.RaceDelay = 20 * time.Millisecond
	autoGet(t, a, o.url+"/")
	a.CloseIdleConnections() // no TCP connection left: the race dials one
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, o.url+"/", nil)
			resp, err := a.RoundTrip(req)
			if err != nil {
				errs <- err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := a.Stats(); st.QUICAttempts != 1 || st.HTTP2Responses+st.HTTP3Responses != n+1 {
		t.Fatalf("stats %+v", st)
	}
	// Close during a burst.
	b := newAuto(t, o.pool)
	b.RaceDelay = 20 * time.Millisecond
	autoGet(t, b, o.url+"/")
	for i := 0; i < n; i++ {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, o.url+"/", nil)
			if resp, err := b.RoundTrip(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	time.Sleep(10 * time.Millisecond)
	b.Close()
	wg.Wait()
	req, _ := http.NewRequest(http.MethodGet, o.url+"/", nil)
	if _, err := b.RoundTrip(req); !errors.Is(err, ErrTransportClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
