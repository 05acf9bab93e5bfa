//go:build linux && (amd64 || arm64)

package quic

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// A client Transport on a connected UDP socket (net.DialUDP, as users
// commonly hand one over) survives ICMP port unreachable messages: an
// nftables rule in the server's namespace rejects the client's datagrams
// for a while, the kernel reports ECONNREFUSED on the socket's next
// reads, and the connection goes on once the rule is gone. Errors of a
// datagram (ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ENOBUFS, EMSGSIZE)
// are not the socket's: loss recovery copes with what was lost.
func TestNetnsConnectedSocketICMPUnreachable(t *testing.T) {
	needNft(t)
	nsA, nsB := pathNetnsPair(t, 1500)
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts := &Transport{Conn: pathListenUDPIn(t, nsA, "10.99.0.1:0")}
	defer ts.Close()
	l, err := ts.Listen(stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *Conn, 1)
	go pathEchoServer(ctx, l, conns)
	var cu *net.UDPConn
	inNetns(t, nsB, func() (err error) {
		cu, err = net.DialUDP("udp4", nil, ts.Conn.LocalAddr().(*net.UDPAddr))
		return err
	})
	defer cu.Close()
	tc := &Transport{Conn: cu}
	defer tc.Close()
	c, err := tc.Dial(ctx, cu.RemoteAddr(), ctls, &Config{MaxIdleTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	pathEcho(t, c, []byte("before"))
	port := ts.Conn.LocalAddr().(*net.UDPAddr).Port
	nft(t, nsA,
		"table inet quictest {",
		"  chain in { type filter hook input priority 0; policy accept;",
		fmt.Sprintf("    udp dport %d reject with icmp type port-unreachable", port),
		"  }",
		"}")
	// Datagrams go out while the rule stands: each gets an ICMP error.
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		s.Write(bytes.Repeat([]byte("during "), 1000))
		s.CloseWrite()
	}()
	time.Sleep(time.Second)
	nft(t, nsA, "delete table inet quictest")
	got := make(chan error, 1)
	go func() {
		b := make([]byte, 7000)
		_, err := io.ReadFull(s, b)
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the stream sent while the server rejected datagrams: %v (transport: %v)", err, context.Cause(c.Context()))
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no echo 15 s after the rule went; connection: %v", context.Cause(c.Context()))
	}
	pathEcho(t, c, []byte("after"))
	if n := tc.Stats().ReadErrorsIgnored; n == 0 {
		t.Error("no ICMP error reached the socket: the test did not test")
	}
}
