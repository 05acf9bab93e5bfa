//go:build linux && (amd64 || arm64)

package quic

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// netnsNAT rewrites the source of the client's datagrams to the server
// with nftables SNAT in the client's namespace, as a NAT in front of it
// would; bind changes the binding. Each binding puts the flow in a new
// conntrack zone, so that the next datagram gets a new conntrack entry
// and with it the new source, while replies to the old one find no entry
// and are dropped: what a NAT that rebinds does.
type netnsNAT struct {
	t       *testing.T
	ns      string
	server  string // the server's address
	port    int    // and port
	zone    int
	current string
}

func (n *netnsNAT) bind(to string) {
	n.t.Helper()
	n.zone++
	script := []string{
		"table ip quicnat",
		"delete table ip quicnat",
		"table ip quicnat {",
		"  chain out { type filter hook output priority -300;",
		fmt.Sprintf("    ip daddr %s udp dport %d ct zone set %d", n.server, n.port, n.zone),
		"  }",
		"  chain pre { type filter hook prerouting priority -300;",
		fmt.Sprintf("    ip saddr %s udp sport %d ct zone set %d", n.server, n.port, n.zone),
		"  }",
		"  chain post { type nat hook postrouting priority 100;",
		fmt.Sprintf("    ip daddr %s udp dport %d snat to %s", n.server, n.port, to),
		"  }",
		"}",
	}
	nft(n.t, n.ns, script...)
	n.current = to
}

// The client's NAT rebinds during a download over a veth pair between two
// network namespaces, with nftables SNAT: a new port, a flap to another
// address and back a few milliseconds later, then a new address. The
// server follows each time (RFC 9000, Section 9.3: "Receiving a packet
// from a new peer address containing a non-probing frame indicates that
// the peer has migrated to that address"), validates the path, and ends
// sending to the last binding; the data arrives with its SHA-256 intact.
func TestNetnsNATRebinding(t *testing.T) {
	needNft(t)
	nsA, nsB := pathNetnsPair(t, 1500)
	vb := fmt.Sprintf("qpb%d", os.Getpid()%100000)
	ipIn(t, nsB, "addr", "add", "10.99.0.3/24", "dev", vb)
	ipIn(t, nsB, "addr", "add", "10.99.0.4/24", "dev", vb)
	ctls, stls := testTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := &Config{KeepAlivePeriod: time.Second}
	ts := &Transport{Conn: pathListenUDPIn(t, nsA, "10.99.0.1:0")}
	defer ts.Close()
	l, err := ts.Listen(stls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	port := ts.Conn.LocalAddr().(*net.UDPAddr).Port
	nat := &netnsNAT{t: t, ns: nsB, server: "10.99.0.1", port: port}
	nat.bind("10.99.0.3:40001")
	defer nft(t, nsB, "table ip quicnat", "delete table ip quicnat")

	const size = 24 << 20
	srvConn := make(chan *Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		srvConn <- c
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		var req [8]byte
		if _, err := io.ReadFull(s, req[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint64(req[:]))
		for off := 0; off < n; off += 64 << 10 {
			if _, err := s.Write(testPattern(0, off, min(64<<10, n-off))); err != nil {
				return
			}
		}
		s.CloseWrite()
	}()
	tc := &Transport{Conn: pathListenUDPIn(t, nsB, "10.99.0.2:0")}
	defer tc.Close()
	c, err := tc.Dial(ctx, ts.Conn.LocalAddr(), ctls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	srv := <-srvConn
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	var req [8]byte
	binary.BigEndian.PutUint64(req[:], size)
	s.Write(req[:])

	// The rebindings, as the download goes.
	steps := []struct {
		at   int
		to   string
		back bool // flap: back to the binding before after a moment
	}{
		{4 << 20, "10.99.0.3:40002", false},  // new port
		{10 << 20, "10.99.0.4:40003", true},  // another address, and back
		{16 << 20, "10.99.0.4:40004", false}, // new address
	}
	want, got := sha256.New(), sha256.New()
	for off := 0; off < size; off += 64 << 10 {
		want.Write(testPattern(0, off, min(64<<10, size-off)))
	}
	buf := make([]byte, 64<<10)
	n, next := 0, 0
	for {
		k, err := s.Read(buf)
		got.Write(buf[:k])
		n += k
		if next < len(steps) && n >= steps[next].at {
			st := steps[next]
			prev := nat.current
			nat.bind(st.to)
			t.Logf("%d bytes in: NAT binds the client to %s", n, st.to)
			if st.back {
				// Back as soon as the server moved there, probably
				// before it validated the path.
				pathPollUntil(t, "the server to follow the flap", func() bool { return srv.RemoteAddr().String() == st.to })
				nat.bind(prev)
				t.Logf("  and back to %s", prev)
			}
			next++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v (connection: %v)", n, err, context.Cause(c.Context()))
		}
	}
	if n != size || string(got.Sum(nil)) != string(want.Sum(nil)) {
		t.Fatalf("received %d bytes of %d, SHA-256 intact %v", n, size, string(got.Sum(nil)) == string(want.Sum(nil)))
	}
	pathPollUntil(t, "the server to send to the last binding", func() bool { return srv.RemoteAddr().String() == nat.current })
	// A port change, a flap there and back, an address change.
	st := srv.Stats()
	if st.Migrations < 4 {
		t.Errorf("server moved %d times, want at least 4", st.Migrations)
	}
	t.Logf("server: %d migrations, %d packets lost, %d bytes sent", st.Migrations, st.PacketsLost, st.BytesSent)
}
