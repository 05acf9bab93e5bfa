package http3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/internal/certs"
	"github.com/quicstack/quic/internal/linkem"
	"github.com/quicstack/quic/internal/twolink"
)

// pattern writes size deterministic bytes, in 64 KiB writes about 2.5 ms
// apart if paced (a download that lasts seconds).
func pattern(w io.Writer, size int, pace bool) error {
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 64<<10)
	tick := time.NewTicker(2500 * time.Microsecond)
	defer tick.Stop()
	for sent := 0; sent < size; {
		for i := 0; i+8 <= len(buf); i += 8 {
			v := rng.Uint64()
			for j := 0; j < 8; j++ {
				buf[i+j] = byte(v >> (8 * j))
			}
		}
		n := min(len(buf), size-sent)
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		sent += n
		if pace {
			<-tick.C
		}
	}
	return nil
}

// An HTTP/3 download through AutoTransport (FollowNetwork on by default)
// on a device with Wi-Fi and cellular: the Wi-Fi address goes in the
// middle of the response body; the QUIC connection moves to cellular by
// itself and the body arrives whole, over HTTP/3, without a fallback.
func TestNetnsAutoFollowNetwork(t *testing.T) {
	const size = 50 << 20
	n, err := twolink.New(false)
	if errors.Is(err, twolink.ErrUnsupported) {
		t.Skipf("no network namespaces here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	cert, pool, err := certs.SelfSigned(twolink.Server.String())
	if err != nil {
		t.Fatal(err)
	}
	var log protoLog
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { log.add(r); io.WriteString(w, r.Proto) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		pattern(w, size, true)
	})
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	addr := netip.AddrPortFrom(twolink.Server, 443).String()
	srv := &DualServer{H3: &Server{Handler: mux, TLSConfig: tc}, HTTP: &http.Server{Addr: addr, Handler: mux}}
	if err := linkem.Do(n.ServerNS, srv.Listen); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()

	dialer := &net.Dialer{Timeout: 30 * time.Second}
	a := &AutoTransport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		TCP: &http.Transport{ForceAttemptHTTP2: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := linkem.Do(n.Client, func() (err error) { c, err = dialer.DialContext(ctx, network, addr); return err })
			return c, err
		}},
		H3: &Transport{Dial: func(ctx context.Context, addr string, tc *tls.Config, conf *quic.Config) (*quic.Conn, error) {
			pc, err := twolink.ListenUDP(n.Client, netip.AddrPortFrom(netip.IPv4Unspecified(), 0))
			if err != nil {
				return nil, err
			}
			tr := &quic.Transport{Conn: pc}
			c, err := tr.Dial(ctx, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)), tc, conf)
			if err != nil {
				tr.Close()
				pc.Close()
				return nil, err
			}
			go func() { <-c.Context().Done(); tr.Close(); pc.Close() }()
			return c, nil
		}},
	}
	defer a.Close()
	url := "https://" + addr
	autoGet(t, a, url+"/")
	for i := 0; ; i++ {
		if proto, _ := autoGet(t, a, url+"/"); proto == "HTTP/3.0" {
			break
		}
		if i == 50 {
			t.Fatal("never over HTTP/3")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(WithProtocolPolicy(context.Background(), RequireHTTP3), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/big", nil)
	resp, err := a.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := sha256.New()
	pattern(want, size, false)
	got := sha256.New()
	buf := make([]byte, 64<<10)
	total := 0
	var changed, last time.Time
	var gap time.Duration
	for {
		k, err := resp.Body.Read(buf)
		if k > 0 {
			now := time.Now()
			if !changed.IsZero() {
				gap = max(gap, now.Sub(last))
			}
			last = now
			got.Write(buf[:k])
			total += k
			if changed.IsZero() && total >= size/5 {
				changed, last = now, now
				if err := n.RemoveWifi(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", total, err)
		}
	}
	if total != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) || resp.Proto != "HTTP/3.0" {
		t.Fatalf("%s: %d bytes, SHA-256 %x; want %d bytes, %x", resp.Proto, total, got.Sum(nil), size, want.Sum(nil))
	}
	a.mu.Lock()
	var migrations int
	for _, x := range a.attempts {
		if done, ok := x.finished(); done && ok {
			migrations += x.cc.qc.Stats().Migrations
		}
	}
	a.mu.Unlock()
	if st := a.Stats(); migrations < 1 || st.Fallbacks != 0 || st.Stalls != 0 {
		t.Fatalf("%d migrations, stats %+v", migrations, st)
	}
	t.Logf("wifi removed during an HTTP/3 response: longest time without data %v", gap.Round(time.Millisecond))
}
