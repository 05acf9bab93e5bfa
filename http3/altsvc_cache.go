package http3

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds and defaults of the alternative-service cache.
const (
	// defaultMaxAltSvcOrigins is AutoTransport.MaxAltSvcOrigins' default.
	defaultMaxAltSvcOrigins = 1000
	// maxAltsPerOrigin bounds the HTTP/3 alternatives kept per origin;
	// later ones in the field (the server's less preferred) are dropped.
	maxAltsPerOrigin = 8
	// maxBrokenPerOrigin bounds the broken marks kept per origin; the
	// oldest goes first.
	maxBrokenPerOrigin = 16
	// defaultBrokenDelay is how long an alternative that failed is left
	// alone the first time: Chromium's rule, 5 minutes, doubled at each
	// failure in a row.
	defaultBrokenDelay = 5 * time.Minute
	// maxBrokenDelay caps the doubling (Chromium caps it at 2 days).
	maxBrokenDelay = 48 * time.Hour
)

// altSvcCache holds, per origin, the HTTP/3 alternatives learned from
// Alt-Svc fields and DNS HTTPS records, and the alternatives that failed
// (broken marks). It is bounded: at most max origins (the least recently
// used goes first), maxAltsPerOrigin alternatives and maxBrokenPerOrigin
// marks each. An origin is an "https" URL's host and port (RFC 6454), and
// nothing one origin advertises changes another's entry (RFC 7838,
// Section 9). Its methods may be called from any goroutine.
type altSvcCache struct {
	mu      sync.Mutex
	max     int
	delay   time.Duration    // first broken delay
	now     func() time.Time // time.Now; tests move it
	origins map[string]*originState
	tick    uint64 // LRU clock
}

// originState is what the cache knows of one origin.
type originState struct {
	alts       []altEntry            // from Alt-Svc, in the server's order
	dns        []altEntry            // from DNS HTTPS records
	dnsExpires time.Time             // when to look the records up again
	broken     map[string]brokenMark // by the alternative's authority
	used       uint64                // LRU tick
}

// altEntry is one HTTP/3 alternative of an origin.
type altEntry struct {
	host    string // "" for the origin's host
	port    int
	expires time.Time
	persist bool
}

// brokenMark records the failures of an alternative: it is not tried
// again before until; count is the number of failures in a row, which
// doubles the delay each time. A mark whose time is past stays, so that
// the next attempt is raced against TCP at once and a new failure doubles
// the delay, until an attempt succeeds (Chromium's "recently broken").
type brokenMark struct {
	until time.Time
	count int
	set   uint64 // tick of the last failure, to evict the oldest
}

func newAltSvcCache(max int, delay time.Duration) *altSvcCache {
	if max <= 0 {
		max = defaultMaxAltSvcOrigins
	}
	if delay <= 0 {
		delay = defaultBrokenDelay
	}
	return &altSvcCache{max: max, delay: delay, now: time.Now, origins: make(map[string]*originState)}
}

// originKey returns the cache key of an https origin: its lower-case host
// (IPv6 in brackets) and port.
func originKey(host string, port int) string {
	return net.JoinHostPort(strings.ToLower(strings.Trim(host, "[]")), strconv.Itoa(port))
}

// authority returns the host:port to dial for alternative a of the origin
// whose host is originHost.
func (a altEntry) authority(originHost string) string {
	host := a.host
	if host == "" {
		host = originHost
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(a.port))
}

// state returns the entry of origin, made if create. c.mu held.
func (c *altSvcCache) state(origin string, create bool) *originState {
	st := c.origins[origin]
	if st == nil {
		if !create {
			return nil
		}
		if len(c.origins) >= c.max {
			c.evictOldest()
		}
		st = &originState{}
		c.origins[origin] = st
	}
	c.tick++
	st.used = c.tick
	return st
}

// evictOldest drops the least recently used origin. c.mu held.
func (c *altSvcCache) evictOldest() {
	var oldest string
	var used uint64
	for k, st := range c.origins {
		if oldest == "" || st.used < used {
			oldest, used = k, st.used
		}
	}
	delete(c.origins, oldest)
}

// setAltSvc applies an Alt-Svc field value received in a response from
// origin: "When an Alt-Svc response header field is received from an
// origin, its value invalidates and replaces all cached alternative
// services for that origin." (RFC 7838, Section 3.1). age is the
// response's Age, which the freshness lifetimes count from. Only "h3"
// alternatives are kept. It reports whether the field was used; a
// malformed one is ignored whole.
func (c *altSvcCache) setAltSvc(origin, value string, age time.Duration) bool {
	alts, clear, err := parseAltSvc(value)
	if err != nil {
		return false
	}
	now := c.now()
	_, ps, _ := net.SplitHostPort(origin)
	originPort, _ := strconv.Atoi(ps)
	var keep []altEntry
	if !clear {
		for _, a := range alts {
			if a.Protocol != NextProtoH3 || len(keep) == maxAltsPerOrigin {
				continue
			}
			// "an attacker that can inject alternative services and
			// listen at the advertised port is able to hijack an
			// origin" (RFC 7838, Section 9.1): the certificate check
			// guards the origin, and, as in Chromium, an origin on a
			// port any local user may open (1024 and up) cannot send
			// clients to a privileged one.
			if originPort >= 1024 && a.Port < 1024 {
				continue
			}
			life := a.MaxAge - age
			if life <= 0 {
				continue
			}
			keep = append(keep, altEntry{host: a.Host, port: a.Port, expires: now.Add(life), persist: a.Persist})
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(origin, len(keep) > 0)
	if st != nil {
		st.alts = keep
		c.dropIfEmpty(origin, st, now)
	}
	return true
}

// setDNS records the HTTP/3 endpoints an origin's HTTPS records gave,
// fresh until expires.
func (c *altSvcCache) setDNS(origin string, alts []altEntry, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(origin, true)
	st.dns = alts
	st.dnsExpires = expires
}

// dnsFresh reports whether origin's HTTPS records were looked up and are
// still fresh.
func (c *altSvcCache) dnsFresh(origin string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.origins[origin]
	return st != nil && c.now().Before(st.dnsExpires)
}

// dropIfEmpty removes an origin that has nothing left to remember. c.mu
// held.
func (c *altSvcCache) dropIfEmpty(origin string, st *originState, now time.Time) {
	if len(st.alts) == 0 && len(st.broken) == 0 && !now.Before(st.dnsExpires) {
		delete(c.origins, origin)
	}
}

// candidate is an alternative the transport may try.
type candidate struct {
	authority  string // host:port to dial
	fromAltSvc bool   // learned from Alt-Svc (rather than DNS)
	// failedBefore is set when the alternative failed before and its
	// mark has expired: the next attempt races TCP at once.
	failedBefore bool
}

// candidates returns origin's fresh HTTP/3 alternatives that are not
// marked broken, Alt-Svc's first (in the server's order), then those of
// DNS, without duplicates.
func (c *altSvcCache) candidates(origin, originHost string) []candidate {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.origins[origin]
	if st == nil {
		return nil
	}
	now := c.now()
	var out []candidate
	// Expired alternatives are forgotten.
	st.alts = slices.DeleteFunc(st.alts, func(a altEntry) bool { return !now.Before(a.expires) })
	add := func(list []altEntry, fromAltSvc bool) {
		for _, a := range list {
			if !now.Before(a.expires) {
				continue
			}
			auth := a.authority(originHost)
			if slices.ContainsFunc(out, func(x candidate) bool { return x.authority == auth }) {
				continue
			}
			m, marked := st.broken[auth]
			if marked && now.Before(m.until) {
				continue
			}
			out = append(out, candidate{authority: auth, fromAltSvc: fromAltSvc, failedBefore: marked})
		}
	}
	add(st.alts, true)
	if now.Before(st.dnsExpires) {
		add(st.dns, false)
	}
	c.tick++
	st.used = c.tick
	c.dropIfEmpty(origin, st, now)
	return out
}

// brokenNow reports whether origin has an alternative marked broken now,
// which a request then goes around (Stats count it).
func (c *altSvcCache) brokenNow(origin string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.origins[origin]
	if st == nil {
		return false
	}
	now := c.now()
	for _, m := range st.broken {
		if now.Before(m.until) {
			return true
		}
	}
	return false
}

// isBroken reports whether the alternative at authority is marked broken
// for origin now.
func (c *altSvcCache) isBroken(origin, authority string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.origins[origin]
	if st == nil {
		return false
	}
	m, ok := st.broken[authority]
	return ok && c.now().Before(m.until)
}

// markBroken records a failure of the alternative at authority for
// origin and returns how long it is left alone: the broken delay, doubled
// for each failure in a row before, at most maxBrokenDelay.
func (c *altSvcCache) markBroken(origin, authority string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state(origin, true)
	if st.broken == nil {
		st.broken = make(map[string]brokenMark)
	}
	m := st.broken[authority]
	if _, ok := st.broken[authority]; !ok && len(st.broken) >= maxBrokenPerOrigin {
		var oldest string
		for k, x := range st.broken {
			if oldest == "" || x.set < st.broken[oldest].set {
				oldest = k
			}
		}
		delete(st.broken, oldest)
	}
	d := c.delay
	for i := 0; i < m.count && d < maxBrokenDelay; i++ {
		d *= 2
	}
	d = min(d, maxBrokenDelay)
	c.tick++
	st.broken[authority] = brokenMark{until: c.now().Add(d), count: m.count + 1, set: c.tick}
	return d
}

// confirm records that the alternative at authority works for origin:
// its broken mark goes, and the next failure starts from the first delay.
func (c *altSvcCache) confirm(origin, authority string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.origins[origin]
	if st == nil || st.broken == nil {
		return
	}
	delete(st.broken, authority)
	c.dropIfEmpty(origin, st, c.now())
}

// forget removes the alternative at authority from origin's entry: "Clients
// receiving 421 (Misdirected Request) from an alternative service MUST
// remove the corresponding entry from its alternative service cache"
// (RFC 7838, Section 6).
func (c *altSvcCache) forget(origin, originHost, authority string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.origins[origin]
	if st == nil {
		return
	}
	drop := func(a altEntry) bool { return a.authority(originHost) == authority }
	st.alts = slices.DeleteFunc(st.alts, drop)
	st.dns = slices.DeleteFunc(st.dns, drop)
	c.dropIfEmpty(origin, st, c.now())
}

// networkChanged applies RFC 7838, Section 2.2: "clients SHOULD remove
// from cache all alternative services that lack the "persist" flag with
// the value "1" when they detect such a change". The broken marks go too,
// since an alternative blocked on one network may work on the next, and
// so do the DNS answers, which may differ.
func (c *altSvcCache) networkChanged() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, st := range c.origins {
		st.alts = slices.DeleteFunc(st.alts, func(a altEntry) bool { return !a.persist })
		st.broken = nil
		st.dns, st.dnsExpires = nil, time.Time{}
		c.dropIfEmpty(k, st, now)
	}
}

// len returns the number of origins in the cache.
func (c *altSvcCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.origins)
}
