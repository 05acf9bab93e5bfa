package http3

import (
	"context"
	"encoding/binary"
	"net"
	"reflect"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// testHTTPSRR is an HTTPS RR of a test answer.
type testHTTPSRR struct {
	owner    string
	priority uint16
	target   string
	params   []dnsmessage.SVCParam
	ttl      uint32
}

// buildAnswer builds a DNS response to an HTTPS query for qname.
func buildAnswer(t testing.TB, id uint16, qname string, rcode dnsmessage.RCode, cnames [][2]string, rrs []testHTTPSRR) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, Response: true, RecursionAvailable: true, RCode: rcode})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.StartQuestions())
	must(b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(qname + "."), Type: dnsmessage.TypeHTTPS, Class: dnsmessage.ClassINET}))
	must(b.StartAnswers())
	for _, c := range cnames {
		must(b.CNAMEResource(dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName(c[0] + "."), Class: dnsmessage.ClassINET, TTL: 300},
			dnsmessage.CNAMEResource{CNAME: dnsmessage.MustNewName(c[1] + ".")}))
	}
	for _, r := range rrs {
		target := r.target
		if target != "." {
			target += "."
		}
		must(b.HTTPSResource(dnsmessage.ResourceHeader{Name: dnsmessage.MustNewName(r.owner + "."), Class: dnsmessage.ClassINET, TTL: r.ttl},
			dnsmessage.HTTPSResource{SVCBResource: dnsmessage.SVCBResource{Priority: r.priority, Target: dnsmessage.MustNewName(target), Params: r.params}}))
	}
	msg, err := b.Finish()
	must(err)
	return msg
}

func alpnParam(protos ...string) dnsmessage.SVCParam {
	var v []byte
	for _, p := range protos {
		v = append(v, byte(len(p)))
		v = append(v, p...)
	}
	return dnsmessage.SVCParam{Key: dnsmessage.SVCParamALPN, Value: v}
}

func portParam(p int) dnsmessage.SVCParam {
	return dnsmessage.SVCParam{Key: dnsmessage.SVCParamPort, Value: binary.BigEndian.AppendUint16(nil, uint16(p))}
}

func TestParseHTTPSAnswer(t *testing.T) {
	msg := buildAnswer(t, 7, "www.example.com", dnsmessage.RCodeSuccess,
		[][2]string{{"www.example.com", "cdn.example.net"}},
		[]testHTTPSRR{
			{"cdn.example.net", 1, ".", []dnsmessage.SVCParam{alpnParam("h3", "h2"), portParam(8443)}, 300},
			{"cdn.example.net", 2, "alt.example.net", []dnsmessage.SVCParam{
				{Key: dnsmessage.SVCParamMandatory, Value: []byte{0, 3}}, alpnParam("h2"),
				{Key: dnsmessage.SVCParamNoDefaultALPN}, portParam(443)}, 60},
			{"unrelated.example", 1, ".", []dnsmessage.SVCParam{alpnParam("h3")}, 60},
		})
	got, err := parseHTTPSAnswer(msg, 7, "WWW.example.com.")
	if err != nil {
		t.Fatal(err)
	}
	want := []HTTPSRecord{
		{Name: "cdn.example.net", Priority: 1, Target: ".", ALPN: []string{"h3", "h2"}, Port: 8443, TTL: 300 * time.Second},
		{Name: "cdn.example.net", Priority: 2, Target: "alt.example.net", ALPN: []string{"h2"}, NoDefaultALPN: true, Port: 443, Mandatory: []uint16{3}, TTL: time.Minute},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// Not the answer to the query.
	for _, c := range []struct {
		id    uint16
		qname string
	}{{8, "www.example.com"}, {7, "other.example.com"}} {
		if _, err := parseHTTPSAnswer(msg, c.id, c.qname); err == nil {
			t.Errorf("answer accepted for ID %d, %s", c.id, c.qname)
		}
	}
	// NXDOMAIN: no records; SERVFAIL: an error.
	if recs, err := parseHTTPSAnswer(buildAnswer(t, 1, "x.example", dnsmessage.RCodeNameError, nil, nil), 1, "x.example"); err != nil || recs != nil {
		t.Fatalf("NXDOMAIN: %v, %v", recs, err)
	}
	if _, err := parseHTTPSAnswer(buildAnswer(t, 1, "x.example", dnsmessage.RCodeServerFailure, nil, nil), 1, "x.example"); err == nil {
		t.Fatal("SERVFAIL accepted")
	}
}

// "If any RRs are malformed, the client MUST reject the entire RRSet"
// (RFC 9460, Section 2.2).
func TestParseHTTPSAnswerMalformed(t *testing.T) {
	good := testHTTPSRR{"x.example", 1, ".", []dnsmessage.SVCParam{alpnParam("h3")}, 60}
	for name, params := range map[string][]dnsmessage.SVCParam{
		"empty alpn":                {{Key: dnsmessage.SVCParamALPN}},
		"alpn zero-length id":       {{Key: dnsmessage.SVCParamALPN, Value: []byte{0}}},
		"alpn overrun":              {{Key: dnsmessage.SVCParamALPN, Value: []byte{5, 'h', '3'}}},
		"port of 3 bytes":           {{Key: dnsmessage.SVCParamPort, Value: []byte{1, 2, 3}}},
		"no-default-alpn with data": {alpnParam("h3"), {Key: dnsmessage.SVCParamNoDefaultALPN, Value: []byte{1}}},
		"no-default-alpn alone":     {{Key: dnsmessage.SVCParamNoDefaultALPN}},
		"mandatory lists itself":    {{Key: dnsmessage.SVCParamMandatory, Value: []byte{0, 0}}, alpnParam("h3")},
		"mandatory key absent":      {{Key: dnsmessage.SVCParamMandatory, Value: []byte{0, 3}}, alpnParam("h3")},
		"mandatory out of order":    {{Key: dnsmessage.SVCParamMandatory, Value: []byte{0, 3, 0, 1}}, alpnParam("h3"), portParam(1)},
		"mandatory odd length":      {{Key: dnsmessage.SVCParamMandatory, Value: []byte{0}}, alpnParam("h3")},
		"ipv4hint of 5 bytes":       {alpnParam("h3"), {Key: dnsmessage.SVCParamIPv4Hint, Value: []byte{1, 2, 3, 4, 5}}},
		"empty ipv6hint":            {alpnParam("h3"), {Key: dnsmessage.SVCParamIPv6Hint}},
	} {
		bad := testHTTPSRR{"x.example", 2, ".", params, 60}
		if recs, err := parseHTTPSAnswer(buildAnswer(t, 1, "x.example", 0, nil, []testHTTPSRR{good, bad}), 1, "x.example"); err == nil {
			t.Errorf("%s: accepted as %+v", name, recs)
		}
	}
}

func TestHTTPSEndpoints(t *testing.T) {
	o := origin{key: originKey("example.com", 443), host: "example.com", port: 443}
	recs := []HTTPSRecord{
		{Name: "example.com", Priority: 3, Target: "c.example.net", ALPN: []string{"h3"}},
		{Name: "example.com", Priority: 1, Target: ".", ALPN: []string{"h3"}, Port: 8443},
		{Name: "example.com", Priority: 2, Target: "h2only.example.net", ALPN: []string{"h2"}},
		{Name: "example.com", Priority: 2, Target: "ech.example.net", ALPN: []string{"h3"}, Mandatory: []uint16{5}},
	}
	got := h3Endpoints(recs, o)
	want := []altEntry{{host: "", port: 8443}, {host: "c.example.net", port: 443}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v; want %+v", got, want)
	}
	if q := httpsQueryName("example.com", 8443); q != "_8443._https.example.com" {
		t.Fatalf("query name %q", q)
	}
}

// fakeDNS answers HTTPS queries on loopback, over UDP and TCP, with the
// records of answer; truncate sets the TC bit over UDP.
func fakeDNS(t *testing.T, truncate bool, answer func(id uint16, qname string) []byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		pc.Close()
		t.Skipf("no TCP port twin: %v", err)
	}
	t.Cleanup(func() { pc.Close(); l.Close() })
	query := func(q []byte) (uint16, string, bool) {
		var p dnsmessage.Parser
		h, err := p.Start(q)
		if err != nil {
			return 0, "", false
		}
		qq, err := p.Question()
		if err != nil {
			return 0, "", false
		}
		return h.ID, qq.Name.String(), true
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			id, name, ok := query(buf[:n])
			if !ok {
				continue
			}
			// An off-path answer first, which must be ignored.
			pc.WriteTo(answer(id+1, name[:len(name)-1]), addr)
			a := answer(id, name[:len(name)-1])
			if truncate {
				a[2] |= 0x02 // TC
			}
			pc.WriteTo(a, addr)
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var lb [2]byte
				if _, err := c.Read(lb[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(lb[:]))
				if _, err := c.Read(q); err != nil {
					return
				}
				id, name, ok := query(q)
				if !ok {
					return
				}
				a := answer(id, name[:len(name)-1])
				c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(a))), a...))
			}()
		}
	}()
	return pc.LocalAddr().String()
}

func TestHTTPSResolver(t *testing.T) {
	for _, truncate := range []bool{false, true} {
		srv := fakeDNS(t, truncate, func(id uint16, qname string) []byte {
			return buildAnswer(t, id, qname, 0, nil, []testHTTPSRR{{qname, 1, ".", []dnsmessage.SVCParam{alpnParam("h3"), portParam(4433)}, 120}})
		})
		r := &HTTPSResolver{Servers: []string{"127.0.0.1:1", srv}, Timeout: 2 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		recs, err := r.LookupHTTPS(ctx, "_4433._https.example.com")
		cancel()
		if err != nil {
			t.Fatalf("truncate=%v: %v", truncate, err)
		}
		want := []HTTPSRecord{{Name: "_4433._https.example.com", Priority: 1, Target: ".", ALPN: []string{"h3"}, Port: 4433, TTL: 2 * time.Minute}}
		if !reflect.DeepEqual(recs, want) {
			t.Fatalf("truncate=%v: %+v", truncate, recs)
		}
	}
}

// FuzzParseHTTPSAnswer checks that the parser of DNS answers never
// panics, that what it accepts is within its bounds and self-consistent,
// and that records built into a message parse back as they were.
func FuzzParseHTTPSAnswer(f *testing.F) {
	add := func(msg []byte) { f.Add(msg, uint16(1), "x.example") }
	add(buildAnswer(f, 1, "x.example", 0, nil, []testHTTPSRR{{"x.example", 1, ".", []dnsmessage.SVCParam{alpnParam("h3", "h2"), portParam(443)}, 60}}))
	add(buildAnswer(f, 1, "x.example", 0, [][2]string{{"x.example", "y.example"}}, []testHTTPSRR{{"y.example", 0, "z.example", nil, 60}}))
	add(buildAnswer(f, 1, "x.example", 0, nil, []testHTTPSRR{{"x.example", 2, "a.example", []dnsmessage.SVCParam{
		{Key: dnsmessage.SVCParamMandatory, Value: []byte{0, 1}}, alpnParam("h3"), {Key: dnsmessage.SVCParamNoDefaultALPN},
		{Key: dnsmessage.SVCParamIPv4Hint, Value: []byte{192, 0, 2, 1}}}, 60}}))
	add(buildAnswer(f, 1, "x.example", dnsmessage.RCodeNameError, nil, nil))
	f.Fuzz(func(t *testing.T, msg []byte, id uint16, qname string) {
		recs, err := parseHTTPSAnswer(msg, id, qname)
		if err != nil {
			return
		}
		if len(recs) > maxHTTPSRecords {
			t.Fatalf("%d records", len(recs))
		}
		for _, r := range recs {
			if len(r.ALPN) > maxALPNs || r.Port < 0 || r.Port > 65535 {
				t.Fatalf("out of bounds: %+v", r)
			}
			for _, p := range r.ALPN {
				if p == "" || len(p) > 255 {
					t.Fatalf("ALPN %q", p)
				}
			}
			if r.NoDefaultALPN && len(r.ALPN) == 0 {
				t.Fatalf("no-default-alpn without alpn: %+v", r)
			}
			// Round trip: the record built into a message parses back.
			var params []dnsmessage.SVCParam
			if len(r.Mandatory) > 0 {
				var v []byte
				for _, k := range r.Mandatory {
					v = binary.BigEndian.AppendUint16(v, k)
				}
				params = append(params, dnsmessage.SVCParam{Key: dnsmessage.SVCParamMandatory, Value: v})
			}
			if r.Priority > 0 {
				if len(r.ALPN) > 0 {
					params = append(params, alpnParam(r.ALPN...))
				}
				if r.NoDefaultALPN {
					params = append(params, dnsmessage.SVCParam{Key: dnsmessage.SVCParamNoDefaultALPN})
				}
				if r.Port > 0 {
					params = append(params, portParam(r.Port))
				}
				for _, k := range r.Mandatory {
					if k > svcKeyPort {
						params = append(params, dnsmessage.SVCParam{Key: dnsmessage.SVCParamKey(k), Value: make([]byte, 16)})
					}
				}
			}
			n, err := dnsmessage.NewName(r.Name + ".")
			if err != nil || r.Name == "." {
				continue
			}
			again, err := parseHTTPSAnswer(buildAnswer(t, 9, n.String()[:len(n.String())-1], 0, nil,
				[]testHTTPSRR{{r.Name, r.Priority, r.Target, params, uint32(r.TTL / time.Second)}}), 9, r.Name)
			if err != nil || len(again) != 1 || !reflect.DeepEqual(again[0].ALPN, r.ALPN) || again[0].Port != r.Port ||
				again[0].Target != r.Target || again[0].Priority != r.Priority || again[0].NoDefaultALPN != r.NoDefaultALPN {
				t.Fatalf("round trip of %+v: %+v, %v", r, again, err)
			}
		}
	})
}
