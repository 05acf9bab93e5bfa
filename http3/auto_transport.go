package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quicstack/quic"
)

// An AutoTransport is an http.RoundTripper that speaks to each origin the
// best protocol it offers, as browsers do: HTTP/3 (through a Transport of
// this package) where the origin advertises it, HTTP/2 or HTTP/1.1 over
// TCP and TLS (through net/http's Transport) otherwise, and again when
// UDP does not get through. The zero value is ready to use:
//
//	client := &http.Client{Transport: &http3.AutoTransport{}}
//	resp, err := client.Get("https://example.com/")
//	fmt.Println(resp.Proto) // "HTTP/2.0" first, "HTTP/3.0" once learned
//
// Discovery. The first request to an origin goes over TCP. Alt-Svc
// response fields (RFC 7838) that offer "h3" are kept per origin in a
// cache (MaxAltSvcOrigins, AltSvcFile), and, with LookupHTTPS, DNS HTTPS
// records (RFC 9460) too; later requests then use HTTP/3. Alt-Svc is
// honoured only from responses that came over a connection whose server
// certificate was verified, an alternative of any host and port must
// present a certificate valid for the origin's host name (RFC 7838,
// Sections 2.1 and 9), one origin's field never changes another origin's
// entry, and a malformed or oversized field is ignored whole.
//
// Racing. A request that would use HTTP/3 without a connection starts the
// QUIC handshake and, if it has not completed after RaceDelay (300 ms by
// default), connects over TCP too; the first to complete takes the
// request. A QUIC handshake that lost the race goes on and takes later
// requests once it completes, while those in the meantime go over TCP
// without waiting again. A TCP connection made for a race that QUIC won
// is kept for 5 s for a request that falls back to TCP; one the server
// has closed in the meantime is not handed to a request (checked without
// reading from it, on Linux), which gets a new connection instead; and
// a request that fails as the first on such a connection (the server gave
// up on it just then) is sent once more if its body can be had again and
// none of it was written or it is idempotent.
//
// Fallback. A QUIC handshake that fails or times out (HandshakeIdleTimeout
// of QUICConfig, 5 s by default, without an answer) marks the
// alternative broken for the origin for BrokenDelay (5 minutes, doubled
// at each failure in a row, at most 48 hours, as Chromium does): requests
// go over TCP meanwhile at no extra cost, and after the mark expires the
// next attempt is raced against TCP at once. A request whose HTTP/3
// attempt failed before any of it was sent is sent over TCP
// transparently, as is an idempotent request (GET, HEAD, OPTIONS, TRACE,
// PUT, DELETE, with a body that can be sent again) waiting for its
// response on an HTTP/3 connection whose path stopped answering (two
// probe timeouts in a row without an acknowledgment, three with
// FollowNetwork, whose move to a new socket comes first; looked at every
// RaceDelay; for a request in 0-RTT, nothing at all back within
// RaceDelay or two probe timeouts of the last connection to the
// alternative, whichever is longer; or the connection's idle timeout):
// the path died (for
// example UDP became blocked), the alternative is marked broken and the
// connection closed.
// When an origin's TCP connection cannot be made at all and no
// alternative is known, the request tries HTTP/3 on the origin's own
// host and port (RFC 9114, Section 3.1).
//
// Control. Policy sets what all requests may use, and WithProtocolPolicy
// what one request may; Response.Proto tells which protocol answered.
// Stats reports the attempts, wins, fallbacks and broken marks. A
// request routed through a proxy (TCP's Proxy) goes through the proxy
// over TCP: "A client configured to use a proxy for a given request
// SHOULD NOT directly connect to an alternative service for this request"
// (RFC 7838, Section 2.4).
//
// Configuration fields must be set before the first request. Multiple
// goroutines may use an AutoTransport at once.
type AutoTransport struct {
	// TLSClientConfig is the TLS configuration of both protocols;
	// ServerName defaults to each request's host and NextProtos is set
	// per protocol ("h3"; "h2" and "http/1.1"). Nil means the
	// defaults, or the TLS configurations of H3 and TCP if they have
	// them.
	TLSClientConfig *tls.Config

	// QUICConfig configures the QUIC connections. Nil means the defaults
	// of quic.Config, except KeepAlivePeriod, 15 s, which keeps NAT
	// bindings (some expire after 30 s of silence) and lets a dead
	// path be noticed, and FollowNetwork (see DisableFollowNetwork).
	QUICConfig *quic.Config

	// DisableFollowNetwork turns off quic.Config.FollowNetwork, which is
	// on by default: a QUIC connection moves to a new local socket by
	// itself when the device changes networks (Wi-Fi to cellular and
	// back) or its path stops answering, with its requests in progress.
	DisableFollowNetwork bool

	// H3 is the HTTP/3 transport, for its other settings
	// (MaxResponseHeaderBytes, DisableCompression, IdleConnTimeout,
	// Allow0RTT, Dial, ...). Nil means a Transport with
	// IdleConnTimeout 90 s, as http.DefaultTransport, and Allow0RTT:
	// GET and HEAD requests go in 0-RTT on connections that resume a
	// session with a server that allows it (RFC 9001, Section 4.6). Its
	// TLSClientConfig and QUICConfig are replaced by the fields above
	// when those are set. It must not be used by anything else.
	H3 *Transport

	// TCP is a template of the HTTP/1.1 and HTTP/2 transport: the
	// AutoTransport uses a clone of it whose DialTLSContext it sets
	// (unless TCP has one) to race connections. Nil means the settings
	// of http.DefaultTransport (proxy from the environment, HTTP/2,
	// 90 s idle timeout).
	TCP *http.Transport

	// Policy chooses the protocols of every request, unless the
	// request's context says otherwise (WithProtocolPolicy). Default
	// AutoProtocol.
	Policy ProtocolPolicy

	// RaceDelay is how long a request waits for a QUIC handshake before
	// it connects over TCP too. Default 300 ms; negative starts both at
	// once. The wait is skipped when the last attempt of the
	// alternative failed.
	RaceDelay time.Duration

	// BrokenDelay is how long an alternative whose QUIC handshake
	// failed is not tried again: Default 5 minutes, doubled for each
	// failure in a row, at most 48 hours.
	BrokenDelay time.Duration

	// MaxAltSvcOrigins bounds the origins the alternative-service cache
	// remembers; the least recently used goes first. Default 1000.
	MaxAltSvcOrigins int

	// AltSvcFile, if not empty, is a file the alternative-service cache
	// (alternatives and broken marks) is loaded from before the first
	// request and saved to (atomically, readable by its owner only) by
	// Close and SaveAltSvc, so that a restarted program knows which
	// origins offer HTTP/3. A missing file, or one that cannot be read
	// or parsed, is an empty cache (replaced at the next save).
	AltSvcFile string

	// LookupHTTPS, if not nil, looks up the DNS HTTPS records (RFC 9460)
	// of a name: the first request to an origin whose host is a DNS
	// name waits for its records, and those in ServiceMode that offer
	// "h3" are HTTP/3 alternatives of the origin, like Alt-Svc's, until
	// their TTL (at least 1 minute, at most 1 day). AliasMode records
	// are followed (at most 4). (&HTTPSResolver{}).LookupHTTPS asks the
	// system's name servers; any function can replace it. Default nil:
	// no lookups.
	LookupHTTPS func(ctx context.Context, name string) ([]HTTPSRecord, error)

	initOnce sync.Once
	initErr  error
	cache    *altSvcCache
	h3       *Transport
	tcp      *http.Transport
	tcpTLS   *tls.Config
	pool     tcpPool
	bg       context.Context // background work: QUIC dials, lookups
	stopBg   context.CancelFunc
	stats    autoCounters

	mu       sync.Mutex
	attempts map[attemptKey]*quicAttempt
	// lastPTO is the probe timeout the last connection to each
	// alternative measured (at most maxRememberedPTOs), which a
	// resumed connection's stall watchdog starts from.
	lastPTO map[attemptKey]time.Duration
	lookups map[string]chan struct{} // DNS lookups in progress, by origin
	closed  bool
}

var _ http.RoundTripper = (*AutoTransport)(nil)

// ProtocolPolicy says which protocols a request may use.
type ProtocolPolicy int

const (
	// AutoProtocol uses HTTP/3 where the origin offers it and UDP gets
	// through, HTTP/2 or HTTP/1.1 over TCP otherwise.
	AutoProtocol ProtocolPolicy = iota
	// RequireHTTP3 uses HTTP/3 only: at an alternative the origin
	// advertised, or else at the origin's own host and port. A request
	// that cannot be sent so fails, as does one for an "http" URL.
	RequireHTTP3
	// ForbidHTTP3 uses HTTP/2 or HTTP/1.1 over TCP only.
	ForbidHTTP3
)

func (p ProtocolPolicy) String() string {
	switch p {
	case AutoProtocol:
		return "auto"
	case RequireHTTP3:
		return "h3"
	case ForbidHTTP3:
		return "tcp"
	}
	return "ProtocolPolicy(" + strconv.Itoa(int(p)) + ")"
}

type policyKey struct{}

// WithProtocolPolicy returns a copy of ctx that makes an AutoTransport
// use policy p for the requests made with it, whatever its Policy field.
func WithProtocolPolicy(ctx context.Context, p ProtocolPolicy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// policyOf returns the policy of req.
func (t *AutoTransport) policyOf(req *http.Request) ProtocolPolicy {
	if p, ok := req.Context().Value(policyKey{}).(ProtocolPolicy); ok {
		return p
	}
	return t.Policy
}

// Defaults of AutoTransport.
const (
	defaultRaceDelay       = 300 * time.Millisecond
	defaultAutoKeepAlive   = 15 * time.Second
	defaultAutoIdleTimeout = 90 * time.Second
)

func (t *AutoTransport) init() error {
	t.initOnce.Do(func() {
		t.cache = newAltSvcCache(t.MaxAltSvcOrigins, t.BrokenDelay)
		if t.AltSvcFile != "" {
			// A cache that cannot be loaded is a cold one, as in
			// browsers: the requests learn it again.
			t.cache.loadFile(t.AltSvcFile)
		}
		t.bg, t.stopBg = context.WithCancel(context.Background())
		t.attempts = make(map[attemptKey]*quicAttempt)
		t.h3 = t.H3
		if t.h3 == nil {
			t.h3 = &Transport{IdleConnTimeout: defaultAutoIdleTimeout, Allow0RTT: true}
		}
		if t.TLSClientConfig != nil {
			t.h3.TLSClientConfig = t.TLSClientConfig
		}
		qc := t.QUICConfig
		if qc == nil {
			qc = t.h3.QUICConfig
		}
		c := &quic.Config{}
		if qc != nil {
			*c = *qc
		}
		if c.KeepAlivePeriod == 0 {
			c.KeepAlivePeriod = defaultAutoKeepAlive
		}
		if !t.DisableFollowNetwork {
			c.FollowNetwork = true
		}
		t.h3.QUICConfig = c
		t.initTCP()
	})
	return t.initErr
}

// RoundTrip sends req with the protocol its policy and the origin allow
// (see AutoTransport) and returns the response, whose Proto names the
// protocol. "http" URLs go over TCP as with net/http.
func (t *AutoTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.init(); err != nil {
		closeBody(req)
		return nil, err
	}
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("http3: nil Request.URL")
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		closeBody(req)
		return nil, ErrTransportClosed
	}
	policy := t.policyOf(req)
	if req.URL.Scheme != "https" {
		if policy == RequireHTTP3 {
			// "Because HTTP/3 does not use TCP, HTTP/3 cannot be
			// used for direct access to the authoritative server for
			// a resource identified by an "http" URI." (RFC 9114,
			// Section 3.1.2)
			closeBody(req)
			return nil, fmt.Errorf("http3: RequireHTTP3 for a %q URL: HTTP/3 needs https", req.URL.Scheme)
		}
		return t.tcp.RoundTrip(req)
	}
	o := originOf(req)
	if policy != RequireHTTP3 && t.proxied(req) {
		policy = ForbidHTTP3
	}
	var resp *http.Response
	var err error
	switch policy {
	case ForbidHTTP3:
		resp, err = t.viaTCP(req)
	case RequireHTTP3:
		resp, err = t.requireH3(req, o)
	default:
		resp, err = t.auto(req, o)
	}
	if err != nil {
		return nil, err
	}
	t.stats.countResponse(resp)
	return resp, nil
}

// origin is the origin of an https request: the URL's host and port.
type origin struct {
	key  string // originKey
	host string // as in the URL, without brackets
	port int
}

func originOf(req *http.Request) origin {
	host := strings.Trim(req.URL.Hostname(), "[]")
	port := 443
	if p := req.URL.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			port = n
		}
	}
	return origin{key: originKey(host, port), host: host, port: port}
}

// authority returns the origin's own host:port.
func (o origin) authority() string { return net.JoinHostPort(o.host, strconv.Itoa(o.port)) }

// proxied reports whether TCP's Proxy routes req through a proxy.
func (t *AutoTransport) proxied(req *http.Request) bool {
	if t.tcp.Proxy == nil {
		return false
	}
	u, err := t.tcp.Proxy(req)
	return err != nil || u != nil
}

// learn applies the Alt-Svc fields of a response from origin o, if it
// came over a connection whose server was authenticated: "Clients MUST
// have reasonable assurances that the alternative service is under
// control of and valid for the whole origin." (RFC 7838, Section 2.1).
// "An Alt-Svc header field in a 421 (Misdirected Request) response MUST
// be ignored." (Section 6).
func (t *AutoTransport) learn(o origin, resp *http.Response) {
	vals := resp.Header.Values("Alt-Svc")
	if len(vals) == 0 || resp.StatusCode == http.StatusMisdirectedRequest {
		return
	}
	if !t.authenticated(resp.TLS) {
		t.stats.altSvcIgnored.Add(1)
		return
	}
	var age time.Duration
	if a := resp.Header.Get("Age"); a != "" {
		age, _ = parseDeltaSeconds(a)
	}
	if t.cache.setAltSvc(o.key, strings.Join(vals, ","), age) {
		t.stats.altSvcUpdates.Add(1)
	} else {
		t.stats.altSvcIgnored.Add(1)
	}
}

// authenticated reports whether a connection's server certificate was
// checked for the origin: by crypto/tls (VerifiedChains), or by the
// application's own VerifyPeerCertificate or VerifyConnection when it
// skips crypto/tls's checks.
func (t *AutoTransport) authenticated(cs *tls.ConnectionState) bool {
	if cs == nil || !cs.HandshakeComplete {
		return false
	}
	if len(cs.VerifiedChains) > 0 {
		return true
	}
	tc := t.TLSClientConfig
	if tc == nil {
		tc = t.h3.TLSClientConfig
	}
	return tc != nil && tc.InsecureSkipVerify && (tc.VerifyPeerCertificate != nil || tc.VerifyConnection != nil)
}

// SaveAltSvc saves the alternative-service cache to AltSvcFile now.
func (t *AutoTransport) SaveAltSvc() error {
	if err := t.init(); err != nil {
		return err
	}
	if t.AltSvcFile == "" {
		return errors.New("http3: no AltSvcFile")
	}
	return t.cache.saveFile(t.AltSvcFile)
}

// NetworkChanged tells the transport that the device moved to another
// network: as RFC 7838, Section 2.2 asks, the alternatives without
// "persist=1" are forgotten, and so are the broken marks and the DNS
// answers, which may not hold on the new network.
func (t *AutoTransport) NetworkChanged() {
	if t.init() == nil {
		t.cache.networkChanged()
	}
}

// CloseIdleConnections closes the connections of both protocols that have
// no request in progress.
func (t *AutoTransport) CloseIdleConnections() {
	if t.init() != nil {
		return
	}
	t.h3.CloseIdleConnections()
	t.tcp.CloseIdleConnections()
	t.pool.closeAll()
}

// Close closes every connection, stops the QUIC handshakes in progress,
// and saves the alternative-service cache to AltSvcFile if set. Later
// requests fail with ErrTransportClosed.
func (t *AutoTransport) Close() error {
	if err := t.init(); err != nil {
		return err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.stopBg()
	t.h3.Close()
	t.tcp.CloseIdleConnections()
	t.pool.closeAll()
	if t.AltSvcFile != "" {
		return t.cache.saveFile(t.AltSvcFile)
	}
	return nil
}
