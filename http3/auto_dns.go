package http3

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"
)

// Bounds of what AutoTransport takes from DNS HTTPS records.
const (
	// maxAliasChain bounds the AliasMode records followed per lookup:
	// "clients and recursive resolvers MUST impose a limit on the total
	// number of SVCB aliases they will follow for each resolution
	// request. This limit MUST NOT be zero" (RFC 9460, Section 2.4.2).
	maxAliasChain = 4
	// minHTTPSTTL and maxHTTPSTTL bound how long an answer is kept.
	minHTTPSTTL = time.Minute
	maxHTTPSTTL = 24 * time.Hour
	// httpsFailureTTL is how long a failed lookup is not repeated.
	httpsFailureTTL = time.Minute
)

// candidatesFor returns the HTTP/3 alternatives of origin o that may be
// tried now, looking up its DNS HTTPS records first if LookupHTTPS is set
// and they are not known.
func (t *AutoTransport) candidatesFor(ctx context.Context, o origin) []candidate {
	if t.LookupHTTPS != nil && !t.cache.dnsFresh(o.key) {
		if _, err := netip.ParseAddr(o.host); err != nil {
			t.lookupHTTPS(ctx, o)
		}
	}
	return t.cache.candidates(o.key, o.host)
}

// lookupHTTPS resolves the HTTPS records of origin o (RFC 9460,
// Section 3, with the query name of Section 9.1) into HTTP/3 endpoints in
// the cache. Concurrent requests for one origin share one lookup.
func (t *AutoTransport) lookupHTTPS(ctx context.Context, o origin) {
	t.mu.Lock()
	if t.lookups == nil {
		t.lookups = make(map[string]chan struct{})
	}
	done, busy := t.lookups[o.key]
	if !busy {
		done = make(chan struct{})
		t.lookups[o.key] = done
	}
	t.mu.Unlock()
	if busy {
		select {
		case <-done:
		case <-ctx.Done():
		}
		return
	}
	defer func() {
		t.mu.Lock()
		delete(t.lookups, o.key)
		t.mu.Unlock()
		close(done)
	}()
	t.stats.httpsLookups.Add(1)
	alts, ttl, err := t.resolveHTTPS(ctx, o)
	now := t.cache.now()
	if err != nil {
		t.stats.httpsLookupErrors.Add(1)
		if ctx.Err() == nil {
			t.cache.setDNS(o.key, nil, now.Add(httpsFailureTTL))
		}
		return
	}
	ttl = min(max(ttl, minHTTPSTTL), maxHTTPSTTL)
	for i := range alts {
		alts[i].expires = now.Add(ttl)
	}
	t.cache.setDNS(o.key, alts, now.Add(ttl))
}

// resolveHTTPS runs SVCB resolution (RFC 9460, Section 3) for origin o
// and returns the endpoints that offer HTTP/3, in priority order, and the
// smallest TTL seen.
func (t *AutoTransport) resolveHTTPS(ctx context.Context, o origin) ([]altEntry, time.Duration, error) {
	name := httpsQueryName(o.host, o.port)
	ttl := maxHTTPSTTL
	for hop := 0; ; hop++ {
		recs, err := t.LookupHTTPS(ctx, name)
		if err != nil {
			return nil, 0, err
		}
		for _, r := range recs {
			ttl = min(ttl, r.TTL)
		}
		// "If an RRSet contains a record in AliasMode, the recipient
		// MUST ignore any ServiceMode records in the set." (Section
		// 2.4.1)
		if i := slices.IndexFunc(recs, func(r HTTPSRecord) bool { return r.Priority == 0 }); i >= 0 {
			target := recs[i].Target
			// "a TargetName of "." indicates that the service is not
			// available or does not exist" (Section 2.5.1).
			if target == "." || hop == maxAliasChain || !validHostName(target) {
				return nil, ttl, nil
			}
			name = target
			continue
		}
		return h3Endpoints(recs, o), ttl, nil
	}
}

// h3Endpoints returns the HTTP/3 endpoints of ServiceMode records, by
// priority, shuffled within a priority ("clients SHOULD apply a random
// shuffle within a priority level", RFC 9460, Section 2.4.1).
func h3Endpoints(recs []HTTPSRecord, o origin) []altEntry {
	var svc []HTTPSRecord
	for _, r := range recs {
		// Clients "MUST ignore" records they are not compatible with
		// (Section 8), and "SHOULD NOT attempt connection to a service
		// endpoint whose SVCB ALPN set does not contain any supported
		// protocols" (Section 7.1.2).
		if r.Priority > 0 && r.compatible() && r.offersH3() {
			svc = append(svc, r)
		}
	}
	rand.Shuffle(len(svc), func(i, j int) { svc[i], svc[j] = svc[j], svc[i] })
	slices.SortStableFunc(svc, func(a, b HTTPSRecord) int { return int(a.Priority) - int(b.Priority) })
	var out []altEntry
	for _, r := range svc {
		if len(out) == maxAltsPerOrigin {
			break
		}
		host := r.Target
		if host == "." {
			// "if TargetName has the value ".", then the owner name of
			// this record MUST be used as the effective TargetName"
			// (Section 2.5.2).
			host = r.Name
		}
		if !validAltHost(host) {
			continue
		}
		if sameName(host, o.host) {
			host = ""
		}
		port := r.Port
		if port == 0 {
			// "If this key is not present, clients SHALL use the
			// authority endpoint's port number." (Section 7.2)
			port = o.port
		}
		out = append(out, altEntry{host: host, port: port})
	}
	return out
}
