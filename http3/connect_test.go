package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// echoProtoHandler accepts extended CONNECT for "echo-proto": it echoes
// capsules back with "echo:" before the value, answers each datagram
// with "dg:" before it, and sends one datagram "hello from server".
func echoProtoHandler(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || r.Header.Get(":protocol") != "echo-proto" {
			w.WriteHeader(http.StatusNotImplemented)
			return
		}
		if r.URL.Path != "/tunnel" || r.Proto != "HTTP/3.0" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Capsule-Protocol", "?1")
		str := w.(HTTPStreamer).HTTPStream()
		if _, err := w.Write([]byte("x")); err != http.ErrHijacked {
			t.Errorf("Write after HTTPStream: %v", err)
		}
		go func() {
			for {
				p, err := str.ReceiveDatagram(context.Background())
				if err != nil {
					return
				}
				str.SendDatagram(append([]byte("dg:"), p...))
			}
		}()
		go func() {
			defer str.Close()
			for {
				c, err := str.ReadCapsule(0)
				if err == io.EOF {
					return
				}
				if err == ErrCapsuleTruncated || err == ErrCapsuleTooLarge {
					t.Errorf("server ReadCapsule: %v", err)
				}
				if err != nil {
					return // also when the test ends and closes the server
				}
				if err := str.WriteCapsule(c.Type, append([]byte("echo:"), c.Value...)); err != nil {
					return
				}
			}
		}()
	})
}

func TestExtendedConnectCapsulesAndDatagrams(t *testing.T) {
	e := newTestEnvWith(t, echoProtoHandler(t), func(s *Server) {
		s.EnableExtendedConnect = true
		s.EnableDatagrams = true
	})
	e.tr.EnableDatagrams = true
	req, _ := http.NewRequest(http.MethodConnect, e.url+"/tunnel", nil)
	req.Header.Set(":protocol", "echo-proto")
	resp, str, err := e.tr.OpenRequestStream(req)
	if err != nil {
		t.Fatal(err)
	}
	defer str.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Capsule-Protocol") != "?1" {
		t.Fatalf("response %d %v", resp.StatusCode, resp.Header)
	}
	// Capsules, both ways, including one too large for one DATA frame
	// read and one of an unknown type.
	big := bytes.Repeat([]byte("z"), 20000)
	for _, c := range []Capsule{{Type: CapsuleTypeDatagram, Value: []byte("in-stream datagram")}, {Type: 0x2a, Value: big}, {Type: 0x17, Value: nil}} {
		if err := str.WriteCapsule(c.Type, c.Value); err != nil {
			t.Fatal(err)
		}
		got, err := str.ReadCapsule(0)
		if err != nil || got.Type != c.Type || !bytes.Equal(got.Value, append([]byte("echo:"), c.Value...)) {
			t.Fatalf("capsule %#x: got %#x, %d bytes, %v", c.Type, got.Type, len(got.Value), err)
		}
	}
	// Datagrams both ways. They are unreliable, so send until one echo
	// arrives (on loopback the first nearly always does).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan []byte, 1)
	go func() {
		p, err := str.ReceiveDatagram(ctx)
		if err == nil {
			got <- p
		}
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		if err := str.SendDatagram([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-got:
			if string(p) != "dg:ping" {
				t.Fatalf("datagram %q", p)
			}
			done = true
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("no datagram echoed")
		}
	}
	// The end of the stream: the server closes after our FIN.
	str.CloseWrite()
	if err := str.SendDatagram([]byte("late")); err == nil {
		t.Error("SendDatagram after CloseWrite succeeded")
	}
	if _, err := str.ReadCapsule(0); err != io.EOF {
		t.Fatalf("after CloseWrite: %v", err)
	}
}

func TestExtendedConnectRefused(t *testing.T) {
	// A server without EnableExtendedConnect.
	e := newTestEnv(t, echoProtoHandler(t))
	req, _ := http.NewRequest(http.MethodConnect, e.url+"/tunnel", nil)
	req.Header.Set(":protocol", "echo-proto")
	if _, _, err := e.tr.OpenRequestStream(req); err != ErrExtendedConnectNotSupported {
		t.Fatalf("without SETTINGS_ENABLE_CONNECT_PROTOCOL: %v", err)
	}
	// Datagrams not negotiated.
	e2 := newTestEnvWith(t, echoProtoHandler(t), func(s *Server) { s.EnableExtendedConnect = true })
	req, _ = http.NewRequest(http.MethodConnect, e2.url+"/tunnel", nil)
	req.Header.Set(":protocol", "echo-proto")
	resp, str, err := e2.tr.OpenRequestStream(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if err := str.SendDatagram([]byte("x")); err != ErrDatagramsNotSupported {
		t.Fatalf("SendDatagram without H3_DATAGRAM: %v", err)
	}
	str.Close()
	// An unknown protocol: 501, as RFC 9220, Section 3 recommends.
	req, _ = http.NewRequest(http.MethodConnect, e2.url+"/tunnel", nil)
	req.Header.Set(":protocol", "other")
	resp, str, err = e2.tr.OpenRequestStream(req)
	if err != nil || resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("unknown protocol: %v %v", resp, err)
	}
	str.Close()
	// Malformed uses of :protocol.
	cc := rawConn(t, e2)
	for name, fields := range map[string][]string{
		":protocol on GET":       {":method", "GET", ":protocol", "echo-proto", ":scheme", "https", ":authority", "localhost", ":path", "/"},
		"extended without :path": {":method", "CONNECT", ":protocol", "echo-proto", ":scheme", "https", ":authority", "localhost"},
	} {
		var fs []qpack.HeaderField
		for i := 0; i < len(fields); i += 2 {
			fs = append(fs, qpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		if status, code := sendRaw(t, cc, fs, nil); code != ErrCodeMessageError {
			t.Errorf("%s: status %d code %v", name, status, code)
		}
	}
	// :protocol to a server that did not enable it.
	cc = rawConn(t, e)
	fs := []qpack.HeaderField{{Name: ":method", Value: "CONNECT"}, {Name: ":protocol", Value: "echo-proto"}, {Name: ":scheme", Value: "https"}, {Name: ":authority", Value: "localhost"}, {Name: ":path", Value: "/"}}
	if status, code := sendRaw(t, cc, fs, nil); code != ErrCodeMessageError {
		t.Errorf("extended CONNECT not enabled: status %d code %v", status, code)
	}
}

func TestMalformedDatagramClosesConnection(t *testing.T) {
	e := newTestEnvWith(t, echoProtoHandler(t), func(s *Server) {
		s.EnableExtendedConnect = true
		s.EnableDatagrams = true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, e.addr, &tls.Config{RootCAs: e.pool, ServerName: "localhost", NextProtos: []string{"h3"}}, &quic.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	// A Quarter Stream ID above 2^60-1 (RFC 9297, Section 2.1).
	if err := qc.SendDatagram(appendVarint(nil, 1<<60)); err != nil {
		t.Fatal(err)
	}
	if code := closeCode(t, qc); code != ErrCodeDatagramError {
		t.Fatalf("closed with %v, want H3_DATAGRAM_ERROR", code)
	}
}

func TestRequestStreamCancel(t *testing.T) {
	got := make(chan error, 1)
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		str := w.(HTTPStreamer).HTTPStream()
		go func() {
			_, err := io.ReadAll(str)
			got <- err
		}()
	}), func(s *Server) { s.EnableExtendedConnect = true })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodConnect, e.url+"/", nil)
	req.Header.Set(":protocol", "p")
	_, str, err := e.tr.OpenRequestStream(req)
	if err != nil {
		t.Fatal(err)
	}
	str.Write([]byte("data"))
	cancel()
	var se *quic.StreamError
	if err := <-got; !errors.As(err, &se) || ErrCode(se.Code) != ErrCodeRequestCancelled {
		t.Fatalf("server read after the client's cancel: %v", err)
	}
	if _, err := str.Write([]byte("more")); err == nil {
		t.Fatalf("write after cancel: %v", err)
	}
}

// TestDatagramBeforeRequest sends an HTTP/3 datagram ahead of the request
// that it belongs to: the server keeps it until the stream shows up (RFC
// 9297, Section 2.1: "buffer it temporarily").
func TestDatagramBeforeRequest(t *testing.T) {
	e := newTestEnvWith(t, echoProtoHandler(t), func(s *Server) {
		s.EnableExtendedConnect = true
		s.EnableDatagrams = true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, e.addr, &tls.Config{RootCAs: e.pool, ServerName: "localhost", NextProtos: []string{"h3"}}, &quic.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	cc := &clientConn{connection: newConnection(qc, false, 0)}
	cc.ours.H3Datagram = true
	if err := cc.start(); err != nil {
		t.Fatal(err)
	}
	<-cc.peerSettingsDone
	str, err := qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q := cc.registerDatagrams(str)
	if err := cc.sendDatagram(str.StreamID(), []byte("early")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // let it arrive before the request
	fields := []qpack.HeaderField{{Name: ":method", Value: "CONNECT"}, {Name: ":protocol", Value: "echo-proto"},
		{Name: ":scheme", Value: "https"}, {Name: ":authority", Value: "localhost"}, {Name: ":path", Value: "/tunnel"}}
	hdr, err := cc.encodeHeaders(str.StreamID(), fields)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := str.Write(hdr); err != nil {
		t.Fatal(err)
	}
	p, err := q.pop(ctx, str.Context().Done())
	if err != nil || string(p) != "dg:early" {
		t.Fatalf("echo of the early datagram: %q %v", p, err)
	}
}
