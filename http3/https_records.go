package http3

import (
	"errors"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// An HTTPSRecord is a DNS HTTPS resource record (RFC 9460, Section 9):
// an alternative endpoint of an "https" origin, and the protocols it
// offers. AutoTransport uses the ServiceMode records that offer "h3" as
// HTTP/3 alternatives of the origin, as it uses Alt-Svc.
type HTTPSRecord struct {
	// Name is the record's owner name, without the final dot.
	Name string
	// Priority is the SvcPriority: 0 is AliasMode (Target names another
	// name to look up), others are ServiceMode, lower preferred.
	Priority uint16
	// Target is the TargetName without the final dot; "." is the owner
	// name in ServiceMode and "the service is not available" in
	// AliasMode (RFC 9460, Section 2.5).
	Target string
	// ALPN lists the "alpn" SvcParam's protocols.
	ALPN []string
	// NoDefaultALPN is set by "no-default-alpn": the endpoint does not
	// offer HTTP/1.1 ("http/1.1", the default set of HTTPS RRs).
	NoDefaultALPN bool
	// Port is the "port" SvcParam, or 0 if absent (or 0): the origin's
	// port.
	Port int
	// Mandatory lists the keys of the "mandatory" SvcParam.
	Mandatory []uint16
	// TTL is how long the record may be cached.
	TTL time.Duration
}

// SvcParamKeys (RFC 9460, Section 14.3.2).
const (
	svcKeyMandatory     = 0
	svcKeyALPN          = 1
	svcKeyNoDefaultALPN = 2
	svcKeyPort          = 3
	svcKeyIPv4Hint      = 4
	svcKeyIPv6Hint      = 6
)

// Limits of the HTTPS record parser.
const (
	// maxHTTPSRecords bounds the records of one answer that are kept.
	maxHTTPSRecords = 32
	// maxCNAMEChain bounds the CNAME records followed within one answer.
	maxCNAMEChain = 8
	// maxALPNs bounds the protocols of one "alpn" SvcParam.
	maxALPNs = 16
)

var errHTTPSRecord = errors.New("http3: malformed DNS HTTPS record")

// compatible reports whether a ServiceMode record can be used: "A
// ServiceMode RR is considered "compatible" by a client if the client
// recognizes all the mandatory keys" (RFC 9460, Section 8). The keys
// understood are alpn, no-default-alpn and port, and the address hints,
// which may be ignored ("clients MAY use"); "port" and "no-default-alpn"
// are "automatically mandatory" (Section 9) and understood.
func (r HTTPSRecord) compatible() bool {
	for _, k := range r.Mandatory {
		switch k {
		case svcKeyALPN, svcKeyNoDefaultALPN, svcKeyPort, svcKeyIPv4Hint, svcKeyIPv6Hint:
		default:
			return false
		}
	}
	return true
}

// offersH3 reports whether the record's SVCB ALPN set holds "h3".
func (r HTTPSRecord) offersH3() bool {
	for _, p := range r.ALPN {
		if p == NextProtoH3 {
			return true
		}
	}
	return false
}

// parseHTTPSAnswer parses a DNS response to an HTTPS query for qname
// (without the final dot) with message ID id. It returns the HTTPS
// records of qname or, through the CNAME records of the answer, of the
// name it is an alias of; an empty list when the name has none
// (including NXDOMAIN). "If any RRs are malformed, the client MUST reject
// the entire RRSet" (RFC 9460, Section 2.2): an error then, and for a
// response that is not the answer to the query (ID, question, flags) or
// reports a server failure.
func parseHTTPSAnswer(msg []byte, id uint16, qname string) ([]HTTPSRecord, error) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, errHTTPSRecord
	}
	if !h.Response || h.ID != id || h.OpCode != 0 {
		return nil, errHTTPSRecord
	}
	q, err := p.Question()
	if err != nil || q.Type != dnsmessage.TypeHTTPS || q.Class != dnsmessage.ClassINET || !sameName(q.Name.String(), qname) {
		return nil, errHTTPSRecord
	}
	if err := p.SkipAllQuestions(); err != nil {
		return nil, errHTTPSRecord
	}
	switch h.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return nil, nil
	default:
		return nil, errors.New("http3: DNS HTTPS query: " + h.RCode.String())
	}
	if h.Truncated {
		return nil, errTruncated
	}
	type rec struct {
		owner string
		r     HTTPSRecord
	}
	var recs []rec
	cnames := make(map[string]string)
	for {
		rh, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			break
		}
		if err != nil {
			return nil, errHTTPSRecord
		}
		if rh.Class != dnsmessage.ClassINET {
			if err := p.SkipAnswer(); err != nil {
				return nil, errHTTPSRecord
			}
			continue
		}
		owner := lowerName(rh.Name.String())
		switch rh.Type {
		case dnsmessage.TypeCNAME:
			c, err := p.CNAMEResource()
			if err != nil {
				return nil, errHTTPSRecord
			}
			if len(cnames) < maxCNAMEChain {
				cnames[owner] = lowerName(c.CNAME.String())
			}
		case dnsmessage.TypeHTTPS:
			r, err := p.HTTPSResource()
			if err != nil {
				return nil, errHTTPSRecord
			}
			hr, err := httpsRecordOf(owner, r.SVCBResource, rh.TTL)
			if err != nil {
				return nil, err
			}
			if len(recs) < maxHTTPSRecords {
				recs = append(recs, rec{owner, hr})
			}
		default:
			if err := p.SkipAnswer(); err != nil {
				return nil, errHTTPSRecord
			}
		}
	}
	// The records of qname, or of the end of its CNAME chain: "Clients
	// and recursive resolvers MUST follow CNAMEs as normal" (RFC 9460,
	// Section 2.4.2).
	name := lowerName(qname)
	for i := 0; i < maxCNAMEChain; i++ {
		next, ok := cnames[name]
		if !ok {
			break
		}
		name = next
	}
	var out []HTTPSRecord
	for _, r := range recs {
		if r.owner == name {
			out = append(out, r.r)
		}
	}
	return out, nil
}

var errTruncated = errors.New("http3: DNS answer truncated")

// httpsRecordOf converts an HTTPS RR, checking its SvcParams: "Clients
// MUST consider an RR malformed if: the end of the RDATA occurs within a
// SvcParam. SvcParamKeys are not in strictly increasing numeric order.
// the SvcParamValue for an SvcParamKey does not have the expected format."
// (RFC 9460, Section 2.2; dnsmessage checked the first two).
func httpsRecordOf(owner string, s dnsmessage.SVCBResource, ttl uint32) (HTTPSRecord, error) {
	r := HTTPSRecord{Name: owner, Priority: s.Priority, Target: lowerName(s.Target.String()), TTL: time.Duration(ttl) * time.Second}
	if r.Target == "" {
		r.Target = "."
	}
	if r.Priority == 0 {
		// "In AliasMode, recipients MUST ignore any SvcParams that
		// are present." (Section 2.4.2)
		return r, nil
	}
	present := make(map[uint16]bool, len(s.Params))
	for i, prm := range s.Params {
		if i > 0 && prm.Key <= s.Params[i-1].Key {
			return HTTPSRecord{}, errHTTPSRecord
		}
		k, v := uint16(prm.Key), prm.Value
		present[k] = true
		switch k {
		case svcKeyMandatory:
			// "In wire format, the keys are represented by their
			// numeric values in network byte order, concatenated in
			// strictly increasing numeric order." "This SvcParamKey
			// ... MUST NOT appear in its own value-list." (Section 8)
			if len(v) == 0 || len(v)%2 != 0 {
				return HTTPSRecord{}, errHTTPSRecord
			}
			for j := 0; j < len(v); j += 2 {
				mk := uint16(v[j])<<8 | uint16(v[j+1])
				if mk == svcKeyMandatory || (j > 0 && mk <= r.Mandatory[len(r.Mandatory)-1]) {
					return HTTPSRecord{}, errHTTPSRecord
				}
				r.Mandatory = append(r.Mandatory, mk)
			}
		case svcKeyALPN:
			// "The wire format value for "alpn" consists of at least
			// one alpn-id prefixed by its length as a single octet ...
			// These pairs MUST exactly fill the SvcParamValue"
			// (Section 7.1.1); alpn-id = 1*255OCTET.
			if len(v) == 0 {
				return HTTPSRecord{}, errHTTPSRecord
			}
			for len(v) > 0 {
				n := int(v[0])
				if n == 0 || n+1 > len(v) {
					return HTTPSRecord{}, errHTTPSRecord
				}
				if len(r.ALPN) < maxALPNs {
					r.ALPN = append(r.ALPN, string(v[1:1+n]))
				}
				v = v[1+n:]
			}
		case svcKeyNoDefaultALPN:
			// "the presentation and wire format values MUST be empty"
			if len(v) != 0 {
				return HTTPSRecord{}, errHTTPSRecord
			}
			r.NoDefaultALPN = true
		case svcKeyPort:
			// "the corresponding 2 octet numeric value" (Section 7.2)
			if len(v) != 2 {
				return HTTPSRecord{}, errHTTPSRecord
			}
			r.Port = int(v[0])<<8 | int(v[1])
		case svcKeyIPv4Hint, svcKeyIPv6Hint:
			// "a sequence of IP addresses"; "An empty list of addresses
			// is invalid." (Section 7.3)
			size := 4
			if k == svcKeyIPv6Hint {
				size = 16
			}
			if len(v) == 0 || len(v)%size != 0 {
				return HTTPSRecord{}, errHTTPSRecord
			}
		}
	}
	// "For self-consistency (Section 2.4.3), listed keys MUST also
	// appear in the SvcParams." "When "no-default-alpn" is specified in
	// an RR, "alpn" must also be specified in order for the RR to be
	// "self-consistent"" (Sections 8 and 7.1.1). "Clients MUST reject any
	// RR whose recognized SvcParams are not self-consistent" (Section
	// 2.4.3).
	for _, k := range r.Mandatory {
		if !present[k] {
			return HTTPSRecord{}, errHTTPSRecord
		}
	}
	if r.NoDefaultALPN && !present[svcKeyALPN] {
		return HTTPSRecord{}, errHTTPSRecord
	}
	return r, nil
}

// lowerName returns a DNS name in lower case without its final dot ("."
// stays ".").
func lowerName(n string) string {
	if len(n) > 1 {
		n = strings.TrimSuffix(n, ".")
	}
	return strings.ToLower(n)
}

// sameName compares two DNS names case-insensitively, ignoring a final
// dot.
func sameName(a, b string) bool { return lowerName(a) == lowerName(b) }
