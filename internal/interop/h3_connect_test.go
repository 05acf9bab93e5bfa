package interop

// Extended CONNECT (RFC 9220), HTTP/3 datagrams and capsules (RFC 9297)
// between our http3 and quic-go's, in both directions. Each server runs
// an "echo-proto" handler: every capsule comes back with "echo:" before
// its value, every datagram with "dg:" before it.

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	qgh3 "github.com/quic-go/quic-go/http3"
	ours "github.com/quicstack/quic"
	oursh3 "github.com/quicstack/quic/http3"
)

// connectCapsules are sent by the clients: a DATAGRAM capsule, one of an
// unregistered type, and a large one.
var connectCapsules = []struct {
	typ   uint64
	value []byte
}{
	{0x00, []byte("datagram in a capsule")},
	{0x2a2a, nil},
	{0x17, bytes.Repeat([]byte("capsule "), 2500)},
}

func TestH3ConnectOurClientQuicGoServer(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &qgh3.Server{TLSConfig: stls, EnableDatagrams: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || r.Proto != "echo-proto" {
			w.WriteHeader(http.StatusNotImplemented)
			return
		}
		w.WriteHeader(http.StatusOK)
		str, err := w.(qgh3.HTTPStreamer).HTTPStream()
		if err != nil {
			t.Errorf("HTTPStream: %v", err)
			return
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
			cp := qgh3.NewCapsuleParser(str)
			for {
				typ, cr, err := cp.Next()
				if err != nil {
					return
				}
				v, err := io.ReadAll(cr)
				if err != nil {
					t.Errorf("quic-go reading a capsule: %v", err)
					return
				}
				var buf bytes.Buffer
				qgh3.WriteCapsule(&buf, typ, append([]byte("echo:"), v...))
				if _, err := str.Write(buf.Bytes()); err != nil {
					return
				}
			}
		}()
	})}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(udp) }()
	t.Cleanup(func() { srv.Close(); udp.Close(); <-done })

	tr := &oursh3.Transport{TLSClientConfig: ctls, EnableDatagrams: true}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodConnect, "https://"+udp.LocalAddr().String()+"/tunnel", nil)
	req.Header.Set(":protocol", "echo-proto")
	resp, str, err := tr.OpenRequestStream(req)
	if err != nil {
		t.Fatal(err)
	}
	defer str.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for _, c := range connectCapsules {
		if err := str.WriteCapsule(c.typ, c.value); err != nil {
			t.Fatal(err)
		}
		got, err := str.ReadCapsule(0)
		if err != nil || got.Type != c.typ || !bytes.Equal(got.Value, append([]byte("echo:"), c.value...)) {
			t.Fatalf("capsule %#x: got %#x (%d bytes), %v", c.typ, got.Type, len(got.Value), err)
		}
	}
	pingDatagrams(t, ctx, str.SendDatagram, str.ReceiveDatagram)
}

func TestH3ConnectQuicGoClientOurServer(t *testing.T) {
	t.Parallel()
	ctls, stls := h3TLS(t)
	l, err := ours.ListenAddr("127.0.0.1:0", stls, &ours.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := &oursh3.Server{TLSConfig: stls, EnableExtendedConnect: true, EnableDatagrams: true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodConnect || r.Header.Get(":protocol") != "echo-proto" {
				w.WriteHeader(http.StatusNotImplemented)
				return
			}
			str := w.(oursh3.HTTPStreamer).HTTPStream()
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
					if err != nil {
						return
					}
					if err := str.WriteCapsule(c.Type, append([]byte("echo:"), c.Value...)); err != nil {
						return
					}
				}
			}()
		})}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(l) }()
	t.Cleanup(func() { srv.Close(); <-done })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qc, err := quicgo.DialAddr(ctx, l.Addr().String(), ctls, &quicgo.Config{EnableDatagrams: true})
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	tr := &qgh3.Transport{EnableDatagrams: true}
	cc := tr.NewClientConn(qc)
	select {
	case <-cc.ReceivedSettings():
	case <-ctx.Done():
		t.Fatal("no SETTINGS from our server")
	}
	if s := cc.Settings(); !s.EnableExtendedConnect || !s.EnableDatagrams {
		t.Fatalf("our SETTINGS as quic-go saw them: %+v", s)
	}
	str, err := cc.OpenRequestStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodConnect, "https://"+l.Addr().String()+"/tunnel", nil)
	req.Proto = "echo-proto"
	if err := str.SendRequestHeader(req); err != nil {
		t.Fatal(err)
	}
	resp, err := str.ReadResponse()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cp := qgh3.NewCapsuleParser(str)
	for _, c := range connectCapsules {
		var buf bytes.Buffer
		qgh3.WriteCapsule(&buf, qgh3.CapsuleType(c.typ), c.value)
		if _, err := str.Write(buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		typ, cr, err := cp.Next()
		if err != nil {
			t.Fatal(err)
		}
		v, err := io.ReadAll(cr)
		if err != nil || uint64(typ) != c.typ || !bytes.Equal(v, append([]byte("echo:"), c.value...)) {
			t.Fatalf("capsule %#x: got %#x (%d bytes), %v", c.typ, typ, len(v), err)
		}
	}
	pingDatagrams(t, ctx, str.SendDatagram, str.ReceiveDatagram)
	str.Close()
}

// pingDatagrams sends "ping" datagrams until a "dg:ping" comes back:
// datagrams are unreliable, though on loopback the first one nearly
// always arrives.
func pingDatagrams(t *testing.T, ctx context.Context, send func([]byte) error, receive func(context.Context) ([]byte, error)) {
	t.Helper()
	got := make(chan []byte, 1)
	go func() {
		if p, err := receive(ctx); err == nil {
			got <- p
		}
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := send([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-got:
			if string(p) != "dg:ping" {
				t.Fatalf("datagram %q", p)
			}
			return
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("no datagram came back")
		}
	}
}
