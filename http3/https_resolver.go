package http3

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// An HTTPSResolver looks up DNS HTTPS records (RFC 9460) by asking name
// servers directly over UDP (and TCP when an answer is truncated): Go's
// net.Resolver has no lookup for them. Its LookupHTTPS method is meant
// for AutoTransport.LookupHTTPS. The zero value asks the name servers of
// /etc/resolv.conf. An HTTPSResolver may be used by several goroutines
// at once.
//
// The answers are not authenticated (no DNSSEC validation): an attacker
// on the path to the name server can add or hide HTTP/3 alternatives,
// which the certificate check of the origin's name on every connection
// keeps harmless except for the choice of protocol (RFC 9460, Section
// 12).
type HTTPSResolver struct {
	// Servers are the name servers to ask, as host:port, in order, the
	// next when one does not answer. Default: the "nameserver" lines of
	// /etc/resolv.conf (port 53), or 127.0.0.1:53 without any.
	Servers []string
	// Timeout bounds each query to one server. Default 2 s.
	Timeout time.Duration
}

// defaultResolverTimeout is HTTPSResolver.Timeout's default.
const defaultResolverTimeout = 2 * time.Second

// maxDNSAnswer is the UDP payload size advertised with EDNS(0), the size
// DNS flag day 2020 recommends; larger answers come over TCP.
const maxDNSAnswer = 1232

// LookupHTTPS returns the HTTPS records of name (a host name, or
// "_port._https.host" for another port than 443, RFC 9460, Section 9.1),
// following the CNAME records of the answer; none if the name has none.
func (r *HTTPSResolver) LookupHTTPS(ctx context.Context, name string) ([]HTTPSRecord, error) {
	servers := r.Servers
	if len(servers) == 0 {
		servers = systemNameServers()
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = defaultResolverTimeout
	}
	var errs []error
	for _, s := range servers {
		qctx, cancel := context.WithTimeout(ctx, timeout)
		recs, err := queryHTTPS(qctx, s, name)
		cancel()
		if err == nil {
			return recs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// queryHTTPS asks server for name's HTTPS records over UDP, and over TCP
// if the answer is truncated.
func queryHTTPS(ctx context.Context, server, name string) ([]HTTPSRecord, error) {
	var idb [2]byte
	rand.Read(idb[:])
	id := binary.BigEndian.Uint16(idb[:])
	q, err := buildHTTPSQuery(id, name)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", server)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, maxDNSAnswer)
	for {
		// A connected UDP socket receives from the server only; a
		// datagram that is not the answer (another ID, a malformed
		// one) is skipped, as an off-path attacker's would be.
		n, err := c.Read(buf)
		if err != nil {
			return nil, err
		}
		recs, err := parseHTTPSAnswer(buf[:n], id, name)
		if err == errTruncated {
			return queryHTTPSTCP(ctx, server, name)
		}
		if err == errHTTPSRecord {
			continue
		}
		return recs, err
	}
}

// queryHTTPSTCP asks server for name's HTTPS records over TCP
// (RFC 1035, Section 4.2.2: each message has a two-byte length prefix).
func queryHTTPSTCP(ctx context.Context, server, name string) ([]HTTPSRecord, error) {
	var idb [2]byte
	rand.Read(idb[:])
	id := binary.BigEndian.Uint16(idb[:])
	q, err := buildHTTPSQuery(id, name)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", server)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	msg := binary.BigEndian.AppendUint16(nil, uint16(len(q)))
	if _, err := c.Write(append(msg, q...)); err != nil {
		return nil, err
	}
	var lb [2]byte
	if _, err := io.ReadFull(c, lb[:]); err != nil {
		return nil, err
	}
	ans := make([]byte, binary.BigEndian.Uint16(lb[:]))
	if _, err := io.ReadFull(c, ans); err != nil {
		return nil, err
	}
	return parseHTTPSAnswer(ans, id, name)
}

// buildHTTPSQuery builds a recursive HTTPS query for name with EDNS(0).
func buildHTTPSQuery(id uint16, name string) ([]byte, error) {
	n, err := dnsmessage.NewName(strings.TrimSuffix(name, ".") + ".")
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(make([]byte, 0, 64+len(name)), dnsmessage.Header{ID: id, RecursionDesired: true})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(dnsmessage.Question{Name: n, Type: dnsmessage.TypeHTTPS, Class: dnsmessage.ClassINET}); err != nil {
		return nil, err
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	var opt dnsmessage.ResourceHeader
	if err := opt.SetEDNS0(maxDNSAnswer, dnsmessage.RCodeSuccess, false); err != nil {
		return nil, err
	}
	if err := b.OPTResource(opt, dnsmessage.OPTResource{}); err != nil {
		return nil, err
	}
	return b.Finish()
}

// resolvConf is the file systemNameServers reads.
var resolvConf = "/etc/resolv.conf"

// systemNameServers returns the name servers of /etc/resolv.conf.
func systemNameServers() []string {
	var out []string
	if f, err := os.Open(resolvConf); err == nil {
		defer f.Close()
		s := bufio.NewScanner(io.LimitReader(f, 64<<10))
		for s.Scan() {
			fields := strings.Fields(s.Text())
			if len(fields) >= 2 && fields[0] == "nameserver" && len(out) < 3 {
				if ip := net.ParseIP(strings.SplitN(fields[1], "%", 2)[0]); ip != nil {
					out = append(out, net.JoinHostPort(fields[1], "53"))
				}
			}
		}
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1:53"}
	}
	return out
}

// httpsQueryName returns the name to query for the HTTPS records of the
// origin host:port: "if the scheme is "https" and the port is 443, then
// the client's original QNAME is equal to the service name", else the
// name with a port prefix, "_8443._https.api.example.com" (RFC 9460,
// Section 9.1 and 2.3).
func httpsQueryName(host string, port int) string {
	if port == 443 {
		return host
	}
	return "_" + strconv.Itoa(port) + "._https." + host
}
