package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// These tests drive the public API (Transport, Listener, Conn, Stream)
// over an in-memory PacketConn pair inside a testing/synctest bubble, so
// that timeouts of seconds or minutes take no real time and every
// goroutine the package starts must have exited when the bubble ends.

// memOneWayLatency is the one-way delay of the in-memory network.
const memOneWayLatency = 10 * time.Millisecond

// isDone reports whether ctx is done, without blocking.
func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

func TestSynctestRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx := context.Background()

		serverErr := make(chan error, 1)
		go func() {
			s, err := p.server.AcceptStream(ctx)
			if err != nil {
				serverErr <- err
				return
			}
			req, err := io.ReadAll(s)
			if err != nil {
				serverErr <- err
				return
			}
			if _, err := s.Write(bytes.ToUpper(req)); err != nil {
				serverErr <- err
				return
			}
			serverErr <- s.CloseWrite()
		}()

		s, err := p.client.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.StreamID() != 0 {
			t.Errorf("first client stream ID %d, want 0", s.StreamID())
		}
		req := bytes.Repeat([]byte("hello, quic "), 10000) // 120 kB: several flights
		if n, err := s.Write(req); n != len(req) || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
		if err := s.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write([]byte("x")); err == nil {
			t.Error("Write after CloseWrite succeeded")
		}
		resp, err := io.ReadAll(s)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if !bytes.Equal(resp, bytes.ToUpper(req)) {
			t.Fatalf("response differs: %d bytes", len(resp))
		}
		if n, err := s.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Errorf("Read after EOF: %d, %v; want 0, io.EOF", n, err)
		}
		if err := <-serverErr; err != nil {
			t.Fatalf("server: %v", err)
		}

		if err := p.client.CloseWithError(0, "bye"); err != nil {
			t.Fatal(err)
		}
		<-p.server.Context().Done()
		p.shutdown()
		synctest.Wait()
		// Any goroutine of the package still running now makes
		// synctest.Test fail with a deadlock when this function returns.
	})
}

func TestSynctestReadDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx := context.Background()
		cs, err := p.client.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		ss, err := p.server.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.ReadFull(ss, make([]byte, 1)); n != 1 || err != nil {
			t.Fatalf("read: %d, %v", n, err)
		}

		start := time.Now()
		ss.SetReadDeadline(start.Add(time.Second))
		n, err := ss.Read(make([]byte, 10))
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read = %d, %v; want os.ErrDeadlineExceeded", n, err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("error %v is not a net.Error timeout", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Read returned after %v, want 1s", d)
		}
		// A deadline in the past fails at once; clearing it makes Read
		// wait for data again.
		if _, err := ss.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read with expired deadline: %v", err)
		}
		ss.SetReadDeadline(time.Time{})
		go func() {
			time.Sleep(3 * time.Second)
			cs.Write([]byte{2})
		}()
		b := make([]byte, 1)
		if n, err := ss.Read(b); n != 1 || err != nil || b[0] != 2 {
			t.Fatalf("Read after clearing deadline: %d, %v, %v", n, err, b)
		}
		// The connection is unharmed.
		if isDone(p.client.Context()) || isDone(p.server.Context()) {
			t.Fatal("connection closed by a stream deadline")
		}
	})
}

func TestSynctestWriteDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 16 << 10
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{
			InitialStreamReceiveWindow: window, MaxStreamReceiveWindow: window,
			InitialConnectionReceiveWindow: window, MaxConnectionReceiveWindow: window,
		}})
		cs, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The server never reads: the peer's window fills, then the send
		// buffer; Write must give up at its deadline.
		data := make([]byte, 4<<20)
		start := time.Now()
		cs.SetWriteDeadline(start.Add(time.Second))
		n, err := cs.Write(data)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Write = %d, %v; want os.ErrDeadlineExceeded", n, err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("error %v is not a net.Error timeout", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Write returned after %v, want 1s", d)
		}
		if n <= 0 || n >= len(data) {
			t.Errorf("Write wrote %d of %d bytes before the deadline", n, len(data))
		}
		synctest.Wait()
		if st := p.server.Stats(); st.BytesReceived > 4*window {
			t.Errorf("server received %d bytes with a %d-byte window", st.BytesReceived, window)
		}
		if isDone(p.client.Context()) || isDone(p.server.Context()) {
			t.Fatal("connection closed by a stream deadline")
		}
	})
}

func TestSynctestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := &Config{MaxIdleTimeout: 30 * time.Second}
		p := newConnPair(t, connPairOpts{Mem: true, Client: conf, Server: conf})
		acceptErr := make(chan error, 1)
		go func() {
			_, err := p.server.AcceptStream(context.Background())
			acceptErr <- err
		}()

		time.Sleep(29 * time.Second)
		synctest.Wait()
		if isDone(p.client.Context()) || isDone(p.server.Context()) {
			t.Fatalf("closed before the idle timeout: client %v, server %v",
				context.Cause(p.client.Context()), context.Cause(p.server.Context()))
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		for _, c := range []struct {
			name string
			conn *Conn
		}{{"client", p.client}, {"server", p.server}} {
			if !isDone(c.conn.Context()) {
				t.Errorf("%s still open after 31 s idle", c.name)
				continue
			}
			var ie *IdleTimeoutError
			if err := context.Cause(c.conn.Context()); !errors.As(err, &ie) {
				t.Errorf("%s close cause %v, want *IdleTimeoutError", c.name, err)
			}
		}
		select {
		case err := <-acceptErr:
			var ie *IdleTimeoutError
			if !errors.As(err, &ie) {
				t.Errorf("AcceptStream: %v, want *IdleTimeoutError", err)
			}
		default:
			t.Error("AcceptStream still blocked after the idle timeout")
		}
		if _, err := p.client.OpenStreamSync(context.Background()); err == nil {
			t.Error("OpenStreamSync on an idle-timed-out connection succeeded")
		}
	})
}

func TestSynctestKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Client: &Config{MaxIdleTimeout: 30 * time.Second, KeepAlivePeriod: 10 * time.Second}, Server: &Config{MaxIdleTimeout: 30 * time.Second}})
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if isDone(p.client.Context()) || isDone(p.server.Context()) {
			t.Fatalf("closed despite keep-alives: client %v, server %v",
				context.Cause(p.client.Context()), context.Cause(p.server.Context()))
		}
		// And still usable.
		s, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("ping"))
		s.CloseWrite()
		ss, err := p.server.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(ss); err != nil || string(b) != "ping" {
			t.Fatalf("read %q, %v", b, err)
		}
	})
}

func TestSynctestCloseWithError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx := context.Background()
		cs, err := p.client.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cs.Write([]byte("x"))
		ss, err := p.server.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(ss, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		readErr := make(chan error, 1)
		go func() {
			_, err := ss.Read(make([]byte, 10))
			readErr <- err
		}()
		synctest.Wait() // the reader is blocked

		if err := p.client.CloseWithError(0x42, "go away"); err != nil {
			t.Fatal(err)
		}
		var ae *ApplicationError
		if err := context.Cause(p.client.Context()); !errors.As(err, &ae) || ae.Code != 0x42 || ae.Remote {
			t.Errorf("client cause %v, want local application error 0x42", err)
		}
		<-p.server.Context().Done()
		err = context.Cause(p.server.Context())
		if !errors.As(err, &ae) || ae.Code != 0x42 || !ae.Remote || ae.Reason != "go away" {
			t.Fatalf("server cause %#v, want remote application error 0x42 %q", err, "go away")
		}
		if !errors.Is(err, &ApplicationError{Code: 0x42}) {
			t.Error("errors.Is does not match the code")
		}
		err = <-readErr
		if !errors.As(err, &ae) || ae.Code != 0x42 || !ae.Remote {
			t.Errorf("blocked server Read: %v, want the remote application error", err)
		}
		if _, err := ss.Write([]byte("y")); !errors.As(err, &ae) || ae.Code != 0x42 {
			t.Errorf("server Write after close: %v", err)
		}
		if _, err := p.server.AcceptStream(ctx); !errors.As(err, &ae) || ae.Code != 0x42 {
			t.Errorf("server AcceptStream after close: %v", err)
		}
		if _, err := cs.Read(make([]byte, 1)); !errors.As(err, &ae) || ae.Code != 0x42 || ae.Remote {
			t.Errorf("client Read after close: %v", err)
		}
		// Closing again is harmless and keeps the first cause.
		p.client.CloseWithError(0x99, "again")
		if err := context.Cause(p.client.Context()); !errors.As(err, &ae) || ae.Code != 0x42 {
			t.Errorf("cause after second close %v", err)
		}
	})
}

func TestSynctestStreamLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{MaxIncomingStreams: 2}})
		ctx := context.Background()
		var cs [2]*Stream
		for i := range cs {
			s, err := p.client.OpenStreamSync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s.Write([]byte{byte(i)})
			cs[i] = s
		}
		if _, err := p.client.OpenStream(); err == nil {
			t.Fatal("OpenStream beyond the peer's limit succeeded")
		}
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		start := time.Now()
		_, err := p.client.OpenStreamSync(tctx)
		cancel()
		if err != context.DeadlineExceeded {
			t.Fatalf("OpenStreamSync at the limit: %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("OpenStreamSync gave up after %v, want 2s", d)
		}

		opened := make(chan *Stream, 1)
		go func() {
			s, err := p.client.OpenStreamSync(ctx)
			if err != nil {
				t.Error(err)
			}
			opened <- s
		}()

		var ss [2]*Stream
		for i := range ss {
			s, err := p.server.AcceptStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ss[i] = s
		}
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-opened:
			t.Fatal("OpenStreamSync proceeded while both streams were open")
		default:
		}

		// Finish stream 0 in both directions on both sides.
		cs[0].CloseWrite()
		if b, err := io.ReadAll(ss[0]); err != nil || !bytes.Equal(b, []byte{0}) {
			t.Fatalf("server read %v, %v", b, err)
		}
		ss[0].Write([]byte("ok"))
		ss[0].CloseWrite()
		if b, err := io.ReadAll(cs[0]); err != nil || string(b) != "ok" {
			t.Fatalf("client read %q, %v", b, err)
		}

		s := <-opened
		if s == nil {
			t.Fatal("no stream")
		}
		if s.StreamID() != 8 {
			t.Errorf("third stream ID %d, want 8", s.StreamID())
		}
		s.Write([]byte{2})
		s3, err := p.server.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s3.StreamID() != s.StreamID() {
			t.Errorf("server accepted stream %d, want %d", s3.StreamID(), s.StreamID())
		}
		// The limit holds again: two streams open.
		if _, err := p.client.OpenStream(); err == nil {
			t.Error("OpenStream beyond the limit succeeded after one stream closed")
		}
	})
}

func TestSynctestHandshakeStateStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Early: true, NoDial: true})
		ct, st, l := p.clientT, p.serverT, p.listener
		ctx := context.Background()
		client, err := ct.DialEarly(ctx, st.Conn.LocalAddr(), p.ctls, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.client = client
		select {
		case <-client.HandshakeComplete():
			t.Fatal("DialEarly: handshake complete before any round trip")
		default:
		}
		start := time.Now()
		server, err := l.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.server = server
		<-client.HandshakeComplete()
		<-server.HandshakeComplete()
		// The client completes after one round trip (plus the
		// server's processing, which takes no fake time).
		if d := time.Since(start); d < 2*memOneWayLatency || d > 3*memOneWayLatency {
			t.Errorf("handshake took %v with a %v RTT", d, 2*memOneWayLatency)
		}
		for _, c := range []struct {
			name string
			conn *Conn
		}{{"client", client}, {"server", server}} {
			cs := c.conn.ConnectionState()
			if !cs.TLS.HandshakeComplete || cs.TLS.NegotiatedProtocol != "test" || cs.Version.String() != "v2" { // default Versions: upgraded from v1
				t.Errorf("%s state: complete %v, ALPN %q, version %v", c.name, cs.TLS.HandshakeComplete, cs.TLS.NegotiatedProtocol, cs.Version)
			}
			if cs.Used0RTT || cs.SupportsDatagrams {
				t.Errorf("%s: Used0RTT %v, SupportsDatagrams %v", c.name, cs.Used0RTT, cs.SupportsDatagrams)
			}
		}
		if cs := client.ConnectionState(); len(cs.TLS.PeerCertificates) == 0 {
			t.Error("client sees no server certificate")
		}
		if client.RemoteAddr().String() != st.Conn.LocalAddr().String() || server.RemoteAddr().String() != ct.Conn.LocalAddr().String() {
			t.Errorf("addresses: client remote %v, server remote %v", client.RemoteAddr(), server.RemoteAddr())
		}

		const size = 200 << 10
		go func() {
			s, err := client.OpenStreamSync(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			s.Write(make([]byte, size))
			s.CloseWrite()
		}()
		s, err := server.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, s); n != size || err != nil {
			t.Fatalf("received %d, %v", n, err)
		}
		time.Sleep(time.Second) // let the last ACKs arrive
		cst, sst := client.Stats(), server.Stats()
		t.Logf("client stats %+v", cst)
		t.Logf("server stats %+v", sst)
		for _, c := range []struct {
			name string
			st   ConnectionStats
		}{{"client", cst}, {"server", sst}} {
			if c.st.BytesSent == 0 || c.st.BytesReceived == 0 || c.st.CongestionWindow == 0 || c.st.CongestionState == "" {
				t.Errorf("%s stats %+v", c.name, c.st)
			}
			if c.st.MinRTT != 2*memOneWayLatency || c.st.LatestRTT < 2*memOneWayLatency || c.st.SmoothedRTT < 2*memOneWayLatency {
				t.Errorf("%s RTT min %v latest %v smoothed %v, want >= %v", c.name, c.st.MinRTT, c.st.LatestRTT, c.st.SmoothedRTT, 2*memOneWayLatency)
			}
			if c.st.BytesInFlight != 0 {
				t.Errorf("%s has %d bytes in flight after the transfer settled", c.name, c.st.BytesInFlight)
			}
		}
		if cst.BytesSent < size || sst.BytesReceived < size {
			t.Errorf("client sent %d, server received %d bytes for a %d-byte transfer", cst.BytesSent, sst.BytesReceived, size)
		}
	})
}
