package quic

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// TestClosedConnsCloseStormLoopback: many connections of one Transport
// pair close at the same moment from both ends, over loopback, while the
// closed-connection reaper runs; every closed-connection record must be
// reaped once its closing or draining period ends (RFC 9000, Section
// 10.2): none stuck in the pending list, no route left behind, the
// Transports' connection counts back to zero.
func TestClosedConnsCloseStormLoopback(t *testing.T) {
	ctls, stls := testTLS(t)
	udp := func() *net.UDPConn {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	st := &Transport{Conn: udp()}
	ct := &Transport{Conn: udp()}
	defer ct.Close()
	defer st.Close()
	conf := &Config{MaxIdleTimeout: 20 * time.Second}
	l, err := st.Listen(stls, conf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const rounds, n = 4, 48
	for r := range rounds {
		var clients, servers []*Conn
		for range n {
			c, err := ct.Dial(ctx, l.Addr(), ctls, conf)
			if err != nil {
				t.Fatal(err)
			}
			s, err := l.Accept(ctx)
			if err != nil {
				t.Fatal(err)
			}
			clients, servers = append(clients, c), append(servers, s)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				switch i % 3 {
				case 0:
					clients[i].CloseWithError(1, "client")
				case 1:
					servers[i].CloseWithError(2, "server")
				default: // both ends at once
					go clients[i].CloseWithError(1, "client")
					servers[i].CloseWithError(2, "server")
				}
			})
		}
		close(start)
		wg.Wait()
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, sc := routeCounts(st)
			_, cc := routeCounts(ct)
			sn, cn := st.conns.Load(), ct.conns.Load()
			st.closed.mu.Lock()
			sh, sp := len(st.closed.heap), st.closed.pending.Load() != nil
			st.closed.mu.Unlock()
			ct.closed.mu.Lock()
			ch, cp := len(ct.closed.heap), ct.closed.pending.Load() != nil
			ct.closed.mu.Unlock()
			if sc == 0 && cc == 0 && sn == 0 && cn == 0 && sh+ch == 0 && !sp && !cp {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: 30 s after the closes: closed routes server %d client %d, connections counted %d/%d, heap %d/%d, pending %v/%v",
					r, sc, cc, sn, cn, sh, ch, sp, cp)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
