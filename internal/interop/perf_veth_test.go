//go:build linux

package interop

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	ours "github.com/quicstack/quic"
)

// The veth rows' evidence of what crosses the kernel: UDP GSO runs leave
// the sender as one kernel packet and, with UDP_GRO on the receiving
// socket, reach it whole (the kernel would split them otherwise), so the
// kernel's UDP counters of each namespace count runs, not datagrams. The
// rows give the stream bytes per run each way and the drops, from the
// namespaces' /proc/net/snmp around each of our runs.

// udpMIB is a namespace's UDP counters (the Udp: line of /proc/net/snmp).
type udpMIB struct{ in, out, rcvbufErrors, inErrors uint64 }

// udpCounters reads the UDP counters of the server's or the client's
// namespace.
func (p *netnsPair) udpCounters(server bool) (udpMIB, error) {
	var m udpMIB
	err := p.in(server, func() error {
		b, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		var names []string
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) == 0 || f[0] != "Udp:" {
				continue
			}
			if names == nil {
				names = f
				continue
			}
			get := func(name string) uint64 {
				if i := slices.Index(names, name); i > 0 && i < len(f) {
					v, _ := strconv.ParseUint(f[i], 10, 64)
					return v
				}
				return 0
			}
			m = udpMIB{get("InDatagrams"), get("OutDatagrams"), get("RcvbufErrors"), get("InErrors")}
			return nil
		}
		return fmt.Errorf("no Udp: counters in /proc/net/snmp")
	})
	return m, err
}

// vethCounts sums the kernel's UDP counters over our runs on the veth
// pair: kernel packets the sender sent and the receiver read, the
// receiver's drops, and the bytes moved.
type vethCounts struct {
	sent, read, drops uint64
	bytes             int64
	acks              float64 // receiver's ACK packets, summed per run as per GB
	runs              int
}

// bulkOursVeth is bulkOnce for our stack with default settings on the
// veth pair p, adding what the kernel counted to vc.
func bulkOursVeth(p *netnsPair, vc *vethCounts, download bool, n int64) (bulkResult, error) {
	snap := func() (s, c udpMIB, err error) {
		if s, err = p.udpCounters(true); err == nil {
			c, err = p.udpCounters(false)
		}
		return
	}
	s0, c0, err := snap()
	if err != nil {
		return bulkResult{}, err
	}
	r, err := bulkOursCfg(ours.Config{}, download, n)
	if err != nil {
		return bulkResult{}, err
	}
	s1, c1, err := snap()
	if err != nil {
		return bulkResult{}, err
	}
	snd0, snd1, rcv0, rcv1 := c0, c1, s0, s1
	if download {
		snd0, snd1, rcv0, rcv1 = s0, s1, c0, c1
	}
	vc.sent += snd1.out - snd0.out
	vc.read += rcv1.in - rcv0.in
	vc.drops += rcv1.rcvbufErrors - rcv0.rcvbufErrors + rcv1.inErrors - rcv0.inErrors
	vc.bytes += n
	vc.acks += r.acksPerGB
	vc.runs++
	return r.bulkResult, nil
}

// vethCountRows adds the rows of vc for the transfers in direction dir.
func vethCountRows(add func(perfRow), dir string, vc *vethCounts) {
	if vc.runs == 0 {
		return
	}
	perRun := func(k uint64) string {
		if k == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f", float64(vc.bytes)/float64(k)/1000)
	}
	add(row6(fmt.Sprintf("Stream KB per kernel UDP packet, %s veth MTU 1500: sender's GSO runs / receiver's GRO reads (TLS/TCP: —)", dir),
		perRun(vc.sent)+" / "+perRun(vc.read), "—", "—", "—", "—"))
	add(row6(fmt.Sprintf("Receiver's ACK packets per GB, %s veth MTU 1500; receive buffer drops", dir),
		fmt.Sprintf("%.0f; %d", vc.acks/float64(vc.runs), vc.drops), "—", "—", "—", "—"))
}
