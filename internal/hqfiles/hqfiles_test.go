package hqfiles

import (
	"bytes"
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
	"strings"
	"testing"
	"time"

	quic "github.com/quicstack/quic"
)

func TestReadRequest(t *testing.T) {
	for in, want := range map[string]string{
		"GET /a\r\n": "a", "GET /dir/b.bin\n": "dir/b.bin", "GET /c": "c", "GET /\r\n": "",
	} {
		got, err := ReadRequest(strings.NewReader(in))
		if err != nil || got != want {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "POST /a\r\n", "GET a\r\n", "GET /" + strings.Repeat("x", 5000)} {
		if _, err := ReadRequest(strings.NewReader(in)); err == nil {
			t.Errorf("%.20q accepted", in)
		}
	}
}

func TestGetOverOurs(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	stls := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{ALPN}}
	ctls := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{ALPN}}
	l, err := quic.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	files := map[string][]byte{}
	var paths []string
	for i := range 20 {
		p := fmt.Sprintf("f%d", i)
		files[p] = bytes.Repeat([]byte{byte(i)}, i*1000)
		paths = append(paths, p)
	}
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			Serve(ctx, Ours(c), MapFiles(files))
		}
	}()
	c, err := quic.DialAddr(ctx, l.Addr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	got, err := Get(ctx, Ours(c), append(paths, "missing"), 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if !bytes.Equal(got[p], files[p]) {
			t.Errorf("%s: %d bytes, want %d", p, len(got[p]), len(files[p]))
		}
	}
	if len(got["missing"]) != 0 {
		t.Error("a missing file got content")
	}
	// A bad request gets an empty reply.
	s, _ := c.OpenStreamSync(ctx)
	s.Write([]byte("PUT /f1\r\n"))
	s.CloseWrite()
	if b, err := io.ReadAll(s); err != nil || len(b) != 0 {
		t.Errorf("bad request: %d bytes, %v", len(b), err)
	}
}
