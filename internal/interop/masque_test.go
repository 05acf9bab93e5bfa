package interop

// CONNECT-UDP (RFC 9298) between our package masque and the current
// quic-go's HTTP/3, in both roles: a minimal UDP proxy and client written
// on quic-go's http3 in this file, making masque-go's wire choices (the
// default URI Template, "Capsule-Protocol: ?1" on the request and the
// response, UDP payloads in HTTP Datagrams with Context ID 0). masque-go
// itself, which pins an older quic-go, is tested against in the module
// internal/interop/masque.

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	oursh3 "github.com/quicstack/quic/http3"
	"github.com/quicstack/quic/masque"
)

// udpEcho answers each datagram on 127.0.0.1 with "echo:" before it.
func udpEcho(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			c.WriteToUDP(append([]byte("echo:"), buf[:n]...), from)
		}
	}()
	return c
}

// quicGoProxy serves CONNECT-UDP with quic-go's http3 on 127.0.0.1 for
// the default template, and returns its address.
func quicGoProxy(t *testing.T, stls *tls.Config) string {
	t.Helper()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &qgh3.Server{TLSConfig: stls, EnableDatagrams: true, QUICConfig: &quicgo.Config{EnableDatagrams: true, InitialPacketSize: 1350},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/.well-known/masque/udp/"), "/")
			if r.Method != http.MethodConnect || r.Proto != "connect-udp" || len(parts) != 3 {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			port, _ := strconv.Atoi(parts[1])
			ip, err := netip.ParseAddr(parts[0])
			if err != nil || port == 0 {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(port))))
			if err != nil {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			w.Header().Set("Capsule-Protocol", "?1")
			w.WriteHeader(http.StatusOK)
			str, err := w.(qgh3.HTTPStreamer).HTTPStream()
			if err != nil {
				conn.Close()
				return
			}
			go func() {
				defer conn.Close()
				for {
					d, err := str.ReceiveDatagram(context.Background())
					if err != nil {
						return
					}
					if len(d) > 0 && d[0] == 0 {
						conn.Write(d[1:])
					}
				}
			}()
			go func() {
				buf := make([]byte, 1+65536)
				for {
					n, err := conn.Read(buf[1:])
					if err != nil {
						return
					}
					buf[0] = 0
					str.SendDatagram(buf[:1+n])
				}
			}()
			go func() {
				io.Copy(io.Discard, str) // until the client ends the stream
				conn.Close()
				str.Close()
			}()
		})}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(udp) }()
	t.Cleanup(func() { srv.Close(); udp.Close(); <-done })
	return udp.LocalAddr().String()
}

// masqueRoundTrip sends q through c until an answer comes.
func masqueRoundTrip(t *testing.T, ctx context.Context, c net.PacketConn, q []byte) []byte {
	t.Helper()
	buf := make([]byte, 65536)
	for ctx.Err() == nil {
		if _, err := c.WriteTo(q, nil); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if n, _, err := c.ReadFrom(buf); err == nil {
			return buf[:n]
		}
	}
	t.Fatal("no answer through the proxy")
	return nil
}

func TestMasqueOurClientQuicGoProxy(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	proxy := quicGoProxy(t, stls)
	echo := udpEcho(t)
	c := &masque.Client{Template: "https://" + proxy + masque.DefaultTemplate, TLSClientConfig: ctls}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tunnel, err := c.DialUDP(ctx, echo.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tunnel.Close()
	if got := masqueRoundTrip(t, ctx, tunnel, []byte("from our client")); string(got) != "echo:from our client" {
		t.Fatalf("answer %q", got)
	}

	// QUIC inside MASQUE through quic-go's proxy: our HTTP/3 client gets
	// a page from our HTTP/3 server.
	origin := &oursh3.Server{TLSConfig: stls, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin says hi")
	})}
	ol, err := ours.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	go origin.ServeListener(ol)
	defer origin.Close()
	tun2, err := c.DialUDP(ctx, ol.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	qt := &ours.Transport{Conn: tun2}
	defer qt.Close()
	tr := &oursh3.Transport{TLSClientConfig: ctls, QUICConfig: &ours.Config{InitialPacketSize: 1200},
		Dial: func(ctx context.Context, _ string, tc *tls.Config, qc *ours.Config) (*ours.Conn, error) {
			return qt.Dial(ctx, tun2.RemoteAddr(), tc, qc)
		}}
	defer tr.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+ol.Addr().String()+"/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "origin says hi" {
		t.Fatalf("page through quic-go's proxy: %q", body)
	}
}

func TestMasqueQuicGoClientOurProxy(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	echo := udpEcho(t)
	p := &masque.Proxy{Policy: func(r *http.Request, target netip.AddrPort) error {
		if target.Addr().IsLoopback() {
			return nil
		}
		return masque.ErrTargetProhibited
	}}
	srv := &oursh3.Server{TLSConfig: stls, Handler: p}
	masque.ConfigureServer(srv)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(udp)
	t.Cleanup(func() { srv.Close(); udp.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	qc, err := quicgo.DialAddr(ctx, udp.LocalAddr().String(), ctls, &quicgo.Config{EnableDatagrams: true, InitialPacketSize: 1350})
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	cc := (&qgh3.Transport{EnableDatagrams: true}).NewClientConn(qc)
	select {
	case <-cc.ReceivedSettings():
	case <-ctx.Done():
		t.Fatal("no SETTINGS")
	}
	if s := cc.Settings(); !s.EnableExtendedConnect || !s.EnableDatagrams {
		t.Fatalf("our proxy's SETTINGS as quic-go saw them: %+v", s)
	}
	open := func(target string) (*qgh3.RequestStream, *http.Response) {
		str, err := cc.OpenRequestStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(target)
		req, _ := http.NewRequestWithContext(ctx, http.MethodConnect, "https://"+udp.LocalAddr().String()+"/.well-known/masque/udp/"+host+"/"+port+"/", nil)
		req.Proto = "connect-udp"
		req.Header.Set("Capsule-Protocol", "?1")
		if err := str.SendRequestHeader(req); err != nil {
			t.Fatal(err)
		}
		resp, err := str.ReadResponse()
		if err != nil {
			t.Fatal(err)
		}
		return str, resp
	}
	str, resp := open(echo.LocalAddr().String())
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Capsule-Protocol") != "?1" {
		t.Fatalf("response %d %v", resp.StatusCode, resp.Header)
	}
	got := make(chan []byte, 1)
	go func() {
		for {
			d, err := str.ReceiveDatagram(ctx)
			if err != nil {
				return
			}
			got <- d
		}
	}()
	for {
		// A datagram of an unknown Context ID is dropped by the proxy
		// (RFC 9298, Section 5); Context ID 0 carries the payload.
		str.SendDatagram([]byte{0x05, 'x'})
		str.SendDatagram(append([]byte{0}, "from quic-go"...))
		select {
		case d := <-got:
			if !bytes.Equal(d, append([]byte{0}, "echo:from quic-go"...)) {
				t.Fatalf("datagram %q", d)
			}
			goto refused
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("no datagram back through our proxy")
		}
	}
refused:
	str.Close()
	// Our proxy's policy refuses a target, with Proxy-Status.
	_, resp = open("10.0.0.1:53")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("Proxy-Status"), "destination_ip_prohibited") {
		t.Fatalf("refusal %d %v", resp.StatusCode, resp.Header)
	}
}
