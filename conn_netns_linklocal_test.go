//go:build linux && (amd64 || arm64)

package quic

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// IPv6 link-local addresses over a veth pair between two network
// namespaces: a server on the wildcard address [::] answers a client at a
// link-local address (its replies name their source with IPV6_PKTINFO,
// which needs the interface), and a client dials the server's
// fe80::1%iface, its replies matching the address it dialed. Both with
// batched system calls (recvmmsg, sendmmsg) and one datagram per call.
func TestNetnsIPv6LinkLocal(t *testing.T) {
	for _, batch := range []bool{true, false} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			nsA, nsB := pathNetnsPair(t, 1500)
			id := os.Getpid() % 100000
			vb := fmt.Sprintf("qpb%d", id)
			ipIn(t, nsA, "addr", "add", "fe80::1/64", "dev", fmt.Sprintf("qpa%d", id), "nodad")
			ipIn(t, nsB, "addr", "add", "fe80::2/64", "dev", vb, "nodad")
			ctls, stls := testTLS(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var su, cu *net.UDPConn
			inNetns(t, nsA, func() (err error) {
				su, err = net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6unspecified})
				return err
			})
			inNetns(t, nsB, func() (err error) {
				cu, err = net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6unspecified})
				return err
			})
			ts := &Transport{Conn: su, DisableBatchIO: !batch}
			defer ts.Close()
			l, err := ts.Listen(stls, nil)
			if err != nil {
				t.Fatal(err)
			}
			conns := make(chan *Conn, 1)
			go pathEchoServer(ctx, l, conns)
			tc := &Transport{Conn: cu, DisableBatchIO: !batch}
			defer tc.Close()
			// The zone names an interface of the client's namespace:
			// the dialing goroutine runs there, as a program would.
			to := &net.UDPAddr{IP: net.ParseIP("fe80::1"), Port: su.LocalAddr().(*net.UDPAddr).Port, Zone: vb}
			var c *Conn
			inNetns(t, nsB, func() (err error) {
				c, err = tc.Dial(ctx, to, ctls, nil)
				if err != nil {
					return fmt.Errorf("dialing %v: %v", to, err)
				}
				return nil
			})
			defer c.CloseWithError(0, "")
			pathEcho(t, c, []byte("link-local"))
		})
	}
}
