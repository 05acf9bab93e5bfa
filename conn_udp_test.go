package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/quicstack/quic/wire"
)

// waitGoroutines waits until at most n goroutines run, for leak checks.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left (want <= %d):\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestUDPLoopbackTransfer(t *testing.T) {
	before := runtime.NumGoroutine()
	ctls, stls := testTLS(t)
	l, err := ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const size = 10 << 20
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 13)
	}
	serverErr := make(chan error, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			serverErr <- err
			return
		}
		s, err := c.AcceptStream(ctx)
		if err != nil {
			serverErr <- err
			return
		}
		// Echo everything back, then FIN.
		if _, err := io.Copy(s, s); err != nil {
			serverErr <- err
			return
		}
		serverErr <- s.CloseWrite()
	}()

	c, err := DialAddr(ctx, l.Addr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.ConnectionState(); st.TLS.NegotiatedProtocol != "test" || st.Version.String() != "v2" { // default Versions: start in v1, upgraded to v2
		t.Fatalf("connection state %+v", st)
	}
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go func() {
		s.Write(data)
		s.CloseWrite()
	}()
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("echo differs: got %d bytes", len(got))
	}
	if err := <-serverErr; err != nil {
		t.Fatalf("server: %v", err)
	}
	t.Logf("10 MB echoed over loopback in %v (%.0f Mbit/s each way)", time.Since(start), float64(size*8)/time.Since(start).Seconds()/1e6)

	c.CloseWithError(0x77, "done")
	var ae *ApplicationError
	if err := context.Cause(c.Context()); !errors.As(err, &ae) || ae.Code != 0x77 || ae.Remote {
		t.Fatalf("client close cause %v", err)
	}
	l.Close()
	waitGoroutines(t, before)
}

func TestUDPDialNoServer(t *testing.T) {
	ctls, _ := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := DialAddr(ctx, "127.0.0.1:9", ctls, nil)
	if err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}

// A client offering only a version the server does not speak gets the
// server's Version Negotiation packet and gives up at once with the
// versions the server listed (RFC 9000, Section 6.2: "A client that
// supports only this version MUST abandon the current connection attempt
// if it receives a Version Negotiation packet"). The version is the one
// reserved versions are usually illustrated with, which the server must
// not list back as its own grease value.
func TestUDPDialUnsupportedVersion(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = DialAddr(ctx, l.Addr().String(), ctls, &Config{Versions: []wire.Version{0x1a2a3a4a}})
	var ve *VersionNegotiationError
	if !errors.As(err, &ve) {
		t.Fatalf("dial: %v, want *VersionNegotiationError", err)
	}
	if len(ve.Theirs) < 2 || ve.Theirs[0] != wire.Version1 || ve.Theirs[1] != wire.Version2 {
		t.Errorf("server versions %v", ve.Theirs)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("dial took %v", d)
	}
}

// Closing a Listener stops accepting but leaves accepted connections
// working; the ListenAddr-owned Transport closes after the last one ends.
func TestUDPListenerCloseKeepsConnections(t *testing.T) {
	before := runtime.NumGoroutine()
	ctls, stls := testTLS(t)
	l, err := ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err == nil {
			accepted <- c
		}
	}()
	c, err := DialAddr(ctx, l.Addr().String(), ctls, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	l.Close()
	go func() {
		s, err := srv.AcceptStream(ctx)
		if err != nil {
			return
		}
		io.Copy(s, s)
		s.CloseWrite()
	}()
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Write([]byte("still here"))
	s.CloseWrite()
	got, err := io.ReadAll(s)
	if err != nil || string(got) != "still here" {
		t.Fatalf("echo after Listener.Close: %q, %v", got, err)
	}
	// A new connection is not accepted.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	if _, err := DialAddr(short, l.Addr().String(), ctls, nil); err == nil {
		t.Fatal("a closed Listener accepted a new connection")
	}
	c.CloseWithError(0, "")
	waitGoroutines(t, before)
}
