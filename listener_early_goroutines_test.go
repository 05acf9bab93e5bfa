package quic

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// A ListenEarly server connection hands itself to Accept from its own
// goroutine once its ClientHello is processed: while handshakes are in
// progress, accepted or not, a connection costs its one goroutine, as
// with Listen (issue 28: goroutines started per connection on the accept
// path; a goroutine per connection waited for the ClientHello before).
func TestListenEarlyGoroutinesPerConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctls, stls := testTLS(t)
		sc, cc := newMemConnPair()
		sc.latency, cc.latency = memOneWayLatency, memOneWayLatency
		ct, st := &Transport{Conn: cc}, &Transport{Conn: sc}
		l, err := st.ListenEarly(stls, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			time.Sleep(10 * time.Second) // closing and draining end
			l.Close()
			ct.Close()
			st.Close()
			cc.Close()
			sc.Close()
		}()
		ctx := context.Background()
		// One connection first, so that the Transports' own goroutines
		// are running before the count.
		warm, err := ct.Dial(ctx, sc.LocalAddr(), ctls, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer warm.CloseWithError(0, "")
		if _, err := l.Accept(ctx); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		before := runtime.NumGoroutine()

		const n = 10
		var clients, servers []*Conn
		for range n {
			c, err := ct.DialEarly(ctx, sc.LocalAddr(), ctls, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseWithError(0, "")
			clients = append(clients, c)
		}
		// The server processes the ClientHellos one way latency later,
		// and its connections reach Accept before their handshakes
		// complete: the clients' Finished is a round trip away.
		time.Sleep(memOneWayLatency + time.Millisecond)
		synctest.Wait()
		for range n {
			s, err := l.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			servers = append(servers, s)
		}
		synctest.Wait()
		for _, s := range servers {
			select {
			case <-s.HandshakeComplete():
				t.Fatal("server handshake complete before the client's Finished could arrive")
			default:
			}
		}
		// Each connection (client and server) runs its own goroutine
		// and, while its handshake is in progress, crypto/tls's
		// (QUICConn runs the TLS handshake on a goroutine of its own):
		// nothing more. A goroutine per server connection waiting for
		// the ClientHello made 5 per pair (48 for 10).
		if got, limit := runtime.NumGoroutine()-before, 4*n; got > limit {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines for %d connections in their handshakes (%d client, %d server); want at most %d\n%s",
				got, n, n, n, limit, buf[:runtime.Stack(buf, true)])
		}
		for i := range n {
			<-clients[i].HandshakeComplete()
			<-servers[i].HandshakeComplete()
			servers[i].CloseWithError(0, "")
		}
	})
}
