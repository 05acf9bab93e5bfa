package interop

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	oursh3 "github.com/quicstack/quic/http3"
	hq "github.com/quicstack/quic/internal/hqfiles"
	"github.com/quicstack/quic/wire"
)

// startCaseServer starts the server of pairing p for case c and returns
// its address.
func startCaseServer(t *testing.T, ctx context.Context, c *interopCase, p pairing, stls *tls.Config, files map[string][]byte, r *caseRun) *net.UDPAddr {
	t.Helper()
	if !c.h3 {
		r.srv = startHQServer(t, ctx, p.server, stls, c.serverOpts(p), hq.MapFiles(files))
		return r.srv.addr
	}
	r.srv = &hqServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, ok := files[strings.TrimPrefix(req.URL.Path, "/")]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Write(b)
	})
	udp := listenUDP(t, false)
	switch p.server {
	case implOurs:
		tr := &ours.Transport{Conn: udp}
		l, err := tr.Listen(stls, &ours.Config{Versions: []wire.Version{wire.Version1}})
		if err != nil {
			t.Fatal(err)
		}
		srv := &oursh3.Server{Handler: h, TLSConfig: stls}
		done := make(chan error, 1)
		go func() { done <- srv.ServeListener(l) }()
		t.Cleanup(func() {
			srv.Close()
			<-done
			tr.Close()
		})
	case implQuicGo:
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
	default:
		t.Fatalf("no HTTP/3 server for %s", p.server)
	}
	return udp.LocalAddr().(*net.UDPAddr)
}

// fetchH3 gets the files in parallel over one HTTP/3 connection.
func fetchH3(t *testing.T, ctx context.Context, impl string, ctls *tls.Config, addr *net.UDPAddr, paths []string) map[string][]byte {
	var rt http.RoundTripper
	switch impl {
	case implOurs:
		tr := &oursh3.Transport{TLSClientConfig: ctls, QUICConfig: &ours.Config{Versions: []wire.Version{wire.Version1}}}
		defer tr.Close()
		rt = tr
	case implQuicGo:
		tr := &qgh3.Transport{TLSClientConfig: ctls}
		defer tr.Close()
		rt = tr
	default:
		t.Fatalf("no HTTP/3 client for %s", impl)
	}
	client := &http.Client{Transport: rt}
	got := map[string][]byte{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://%s/%s", addr, p), nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("GET %s: %v", p, err)
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("GET %s: status %d, %v", p, resp.StatusCode, err)
				return
			}
			mu.Lock()
			got[p] = b
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

// bigChain returns leaf's certificate followed by eight more, each with
// four random-looking 250-character DNS names, like the runner's
// amplificationlimit chain: the server's Certificate message grows past
// 10 kB, far more than three times the client's first Initial. Clients
// ignore the extra certificates when they build the path to the root.
func bigChain(t *testing.T, leaf tls.Certificate) tls.Certificate {
	t.Helper()
	out := tls.Certificate{PrivateKey: leaf.PrivateKey, Certificate: [][]byte{leaf.Certificate[0]}}
	for i := range 8 {
		var names []string
		for n := range 4 {
			var labels []string
			for j := range 4 {
				labels = append(labels, fmt.Sprintf("%c%c%s", 'a'+i, 'a'+n, strings.Repeat(string(rune('a'+j)), 60)))
			}
			names = append(names, strings.Join(labels, "."))
		}
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		pt := &x509.Certificate{SerialNumber: big.NewInt(int64(100 + i)), Subject: pkix.Name{CommonName: fmt.Sprintf("pad%d", i)},
			DNSNames: names, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, pt, pt, &k.PublicKey, k)
		if err != nil {
			t.Fatal(err)
		}
		out.Certificate = append(out.Certificate, der)
	}
	return out
}
