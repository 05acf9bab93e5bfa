package http3

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// protoLog records the protocol of each request a test server handled:
// what the server saw, not what the client claims.
type protoLog struct {
	mu     sync.Mutex
	protos []string
	altUse []string // Alt-Used header of each request
}

func (l *protoLog) add(r *http.Request) {
	l.mu.Lock()
	l.protos = append(l.protos, r.Proto)
	l.altUse = append(l.altUse, r.Header.Get("Alt-Used"))
	l.mu.Unlock()
}

func (l *protoLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.protos...)
}

// altUsed returns the Alt-Used header of each request.
func (l *protoLog) altUsed() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.altUse...)
}

func (l *protoLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.protos) == 0 {
		return ""
	}
	return l.protos[len(l.protos)-1]
}

// originServer is a test origin on 127.0.0.1 served over TCP, UDP or
// both (a DualServer, advertising HTTP/3 with Alt-Svc).
type originServer struct {
	log  protoLog
	dual *DualServer  // both
	h3   *Server      // UDP only
	tcp  *http.Server // TCP only
	udp  net.PacketConn
	port int
	pool *x509.CertPool
	cert tls.Certificate
	url  string
}

// handler answers with the request's protocol and records it.
func (o *originServer) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.log.add(r)
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		io.WriteString(w, r.Proto)
	})
}

// newOrigin starts a test origin: "both", "tcp" or "udp".
func newOrigin(t *testing.T, mode string) *originServer {
	t.Helper()
	cert, pool := testCert(t)
	o := &originServer{pool: pool, cert: cert}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	switch mode {
	case "both":
		o.dual = &DualServer{
			H3:   &Server{Handler: o.handler(), TLSConfig: tc},
			HTTP: &http.Server{Addr: "127.0.0.1:0", Handler: o.handler(), TLSConfig: tc},
		}
		if err := o.dual.Listen(); err != nil {
			t.Fatal(err)
		}
		o.port = o.dual.UDPAddr().(*net.UDPAddr).Port
		go o.dual.Serve()
		t.Cleanup(func() { o.dual.Close() })
	case "tcp":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		o.port = l.Addr().(*net.TCPAddr).Port
		o.tcp = &http.Server{Handler: o.handler(), TLSConfig: tc}
		go o.tcp.ServeTLS(l, "", "")
		t.Cleanup(func() { o.tcp.Close() })
	case "udp":
		// A UDP port whose TCP twin is closed: connecting over TCP
		// is refused.
		for i := 0; ; i++ {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			p := pc.LocalAddr().(*net.UDPAddr).Port
			if l, err := net.Listen("tcp", pc.LocalAddr().String()); err == nil {
				l.Close()
				o.udp, o.port = pc, p
				break
			}
			pc.Close()
			if i == 20 {
				t.Fatal("no UDP port with a free TCP twin")
			}
		}
		o.h3 = &Server{Handler: o.handler(), TLSConfig: tc}
		go o.h3.Serve(o.udp)
		t.Cleanup(func() { o.h3.Close(); o.udp.Close() })
	default:
		t.Fatalf("mode %q", mode)
	}
	o.url = "https://127.0.0.1:" + strconv.Itoa(o.port)
	return o
}

// newAuto returns an AutoTransport trusting pool, closed at the end of
// the test. RaceDelay is long, so that QUIC wins whenever it works even
// on a loaded machine; tests of the race itself set their own.
func newAuto(t *testing.T, pool *x509.CertPool) *AutoTransport {
	t.Helper()
	a := &AutoTransport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		RaceDelay:       10 * time.Second,
		QUICConfig:      &quic.Config{HandshakeIdleTimeout: 20 * time.Second},
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// get fetches url with a and returns the response's protocol and body.
func autoGet(t *testing.T, a *AutoTransport, url string) (proto, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return autoDo(t, a, req)
}

// untilH3 fetches url with a until a response comes over HTTP/3: with a
// short RaceDelay, a handshake slower than that on a loaded machine loses
// the race, and its connection takes the requests once it completes.
func untilH3(t *testing.T, a *AutoTransport, url string) {
	t.Helper()
	for i := 0; ; i++ {
		if proto, _ := autoGet(t, a, url); proto == "HTTP/3.0" {
			return
		}
		if i == 500 {
			t.Fatalf("%s: never over HTTP/3; stats %+v", url, a.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func autoDo(t *testing.T, a *AutoTransport, req *http.Request) (proto, body string) {
	t.Helper()
	resp, err := a.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the body: %v", req.URL, err)
	}
	return resp.Proto, string(b)
}

// splitOrigin is a test origin whose TCP server (net/http) and HTTP/3
// server listen on different ports, the TCP responses advertising
// altSvc(), which the test may change; the HTTP/3 server is reached
// through a relay that can drop everything.
type splitOrigin struct {
	tcpLog, h3Log protoLog
	tcpPort       int
	h3Port        int // the HTTP/3 server's own port
	relay         *udpRelay
	altSvc        atomic.Value // string
	h3Status      atomic.Int64 // status of HTTP/3 responses; 0 is 200
	pool          *x509.CertPool
	url           string
}

func newSplitOrigin(t *testing.T, h3Cert *tls.Certificate) *splitOrigin {
	t.Helper()
	cert, pool := testCert(t)
	o := &splitOrigin{pool: pool}
	o.altSvc.Store("")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.tcpPort = l.Addr().(*net.TCPAddr).Port
	tcp := &http.Server{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.tcpLog.add(r)
			if v := o.altSvc.Load().(string); v != "" {
				w.Header().Set("Alt-Svc", v)
			}
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, r.Proto)
		})}
	go tcp.ServeTLS(l, "", "")
	t.Cleanup(func() { tcp.Close() })
	if h3Cert == nil {
		h3Cert = &cert
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.h3Port = pc.LocalAddr().(*net.UDPAddr).Port
	h3 := &Server{TLSConfig: &tls.Config{Certificates: []tls.Certificate{*h3Cert}}, QUICConfig: &quic.Config{Allow0RTT: true},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.h3Log.add(r)
			io.Copy(io.Discard, r.Body)
			if s := o.h3Status.Load(); s != 0 {
				w.WriteHeader(int(s))
			}
			io.WriteString(w, r.Proto)
		})}
	go h3.Serve(pc)
	t.Cleanup(func() { h3.Close(); pc.Close() })
	o.relay = newUDPRelay(t, pc.LocalAddr().(*net.UDPAddr))
	o.url = "https://127.0.0.1:" + strconv.Itoa(o.tcpPort)
	return o
}

// advertise makes the TCP responses advertise the relay's port.
func (o *splitOrigin) advertise() {
	o.altSvc.Store(`h3=":` + strconv.Itoa(o.relay.port()) + `"`)
}

// udpRelay forwards datagrams between clients and a UDP server, one
// upstream socket per client; drop makes it drop everything, both ways.
type udpRelay struct {
	pc     net.PacketConn
	server *net.UDPAddr
	drop   atomic.Bool
	mu     sync.Mutex
	flows  map[string]net.PacketConn
}

func newUDPRelay(t *testing.T, server *net.UDPAddr) *udpRelay {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &udpRelay{pc: pc, server: server, flows: make(map[string]net.PacketConn)}
	t.Cleanup(func() {
		pc.Close()
		r.mu.Lock()
		for _, up := range r.flows {
			up.Close()
		}
		r.mu.Unlock()
	})
	go func() {
		buf := make([]byte, 65536)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if r.drop.Load() {
				continue
			}
			r.mu.Lock()
			up := r.flows[addr.String()]
			if up == nil {
				up, err = net.ListenPacket("udp", "127.0.0.1:0")
				if err != nil {
					r.mu.Unlock()
					continue
				}
				r.flows[addr.String()] = up
				go func(up net.PacketConn, client net.Addr) {
					b := make([]byte, 65536)
					for {
						n, _, err := up.ReadFrom(b)
						if err != nil {
							return
						}
						if !r.drop.Load() {
							pc.WriteTo(b[:n], client)
						}
					}
				}(up, addr)
			}
			r.mu.Unlock()
			up.WriteTo(buf[:n], server)
		}
	}()
	return r
}

func (r *udpRelay) port() int { return r.pc.LocalAddr().(*net.UDPAddr).Port }

// waitStats polls a's statistics until cond holds (or fails the test
// after a minute: the events waited for take at most seconds).
func waitStats(t *testing.T, a *AutoTransport, what string, cond func(AutoStats) bool) AutoStats {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st := a.Stats()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached; stats %+v", what, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
