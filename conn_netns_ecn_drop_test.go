//go:build linux && (amd64 || arm64)

package quic

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/quicstack/quic/ackhandler"
)

// Over a veth pair whose receiving end drops ECT(0)-marked packets (an
// nftables rule, as some middleboxes do), in either direction, the
// handshake completes within the default handshake timeout and a transfer
// runs; the sender whose marked packets were dropped stops marking, its
// ECN validation failed (RFC 9000, Section 13.4.2). Before, Initial and Handshake packets were marked and every
// handshake on such a path timed out.
func TestNetnsECTDroppingPath(t *testing.T) {
	needNft(t)
	for _, dir := range []string{"client to server", "server to client"} {
		t.Run(dir, func(t *testing.T) {
			nsA, nsB := pathNetnsPair(t, 1500)
			dropAt := nsA // the server's namespace drops what the client sends
			if dir == "server to client" {
				dropAt = nsB
			}
			nft(t, dropAt,
				"table inet quictest {",
				"  chain in { type filter hook input priority 0; policy accept;",
				"    ip ecn ect0 counter drop",
				"  }",
				"}")
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
			tc := &Transport{Conn: pathListenUDPIn(t, nsB, "10.99.0.2:0")}
			defer tc.Close()
			if !ts.SocketInfo().ECN || !tc.SocketInfo().ECN {
				t.Skip("sockets without ECN")
			}
			c, err := tc.Dial(ctx, ts.Conn.LocalAddr(), ctls, nil) // default handshake timeout
			if err != nil {
				t.Fatalf("handshake over a path dropping ECT(0) from %s: %v", dir, err)
			}
			defer c.CloseWithError(0, "")
			pathEcho(t, c, bytes.Repeat([]byte("ecn "), 50000))
			srv := <-conns
			c.CloseWithError(0, "")
			<-c.done
			<-srv.done
			sender, other := c, srv
			if dir == "server to client" {
				sender, other = srv, c
			}
			// Failed once the records of its lost marked packets expired;
			// unknown (not marking either) if the connection ended first.
			if st := sender.state.sent.ECNState(); st != ackhandler.ECNFailed && st != ackhandler.ECNUnknown {
				t.Errorf("ECN state of the side whose marked packets were dropped: %v, want failed", st)
			}
			if st := other.state.sent.ECNState(); st != ackhandler.ECNCapable {
				t.Errorf("ECN state of the other side: %v, want capable", st)
			}
		})
	}
}
