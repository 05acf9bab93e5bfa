package http3

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic"
)

// How AutoTransport chooses the protocol of a request with AutoProtocol:
// a live HTTP/3 connection to the origin takes it; otherwise, with an
// HTTP/3 alternative known and not marked broken, QUIC races TCP; without
// one, TCP takes it (and, if TCP cannot connect, HTTP/3 on the origin's
// own port).

// maxAutoTries bounds the connections one request is tried on.
const maxAutoTries = 3

// attemptKey names a QUIC connection of an origin: to one of its
// alternatives, or to the origin itself. Connections are not shared
// between origins, since each origin's certificate is checked on its own
// connections (RFC 7838, Section 2.1).
type attemptKey struct {
	origin    string // originKey
	authority string // host:port dialed
}

// quicAttempt is a QUIC connection to an alternative, being dialed until
// done is closed, then cc or err. With 0-RTT (Transport.Allow0RTT) the
// dial returns before the handshake completes, when a resumed session
// lets GET and HEAD requests go at once; hs is closed when the handshake
// completed or failed (at once with done without 0-RTT), hsErr then.
type quicAttempt struct {
	key   attemptKey
	done  chan struct{}
	cc    *clientConn
	err   error
	hs    chan struct{}
	hsErr error
	// lost is set when a request stopped waiting for the handshake and
	// went over TCP: later requests go over TCP without waiting until
	// the handshake completes.
	lost atomic.Bool
	// stalled is set when the connection was closed because nothing came
	// back on it: its requests that can be sent again go over TCP.
	stalled atomic.Bool
}

// finished reports whether the attempt's handshake is done, and whether
// it succeeded.
func (a *quicAttempt) finished() (done, ok bool) {
	select {
	case <-a.hs:
		return true, a.hsErr == nil
	default:
		return false, false
	}
}

// readyFor returns the channel closed when req may go on the attempt's
// connection: the end of the handshake, or of the dial for a request that
// can go in 0-RTT; and a function telling whether it succeeded.
func (a *quicAttempt) readyFor(req *http.Request, early bool) (<-chan struct{}, func() bool) {
	if m := methodOf(req); early && (m == http.MethodGet || m == http.MethodHead) {
		return a.done, func() bool { return a.err == nil }
	}
	return a.hs, func() bool { return a.hsErr == nil }
}

// attempt returns the QUIC connection to authority for origin o, starting
// to dial it if there is none (or the last one is no longer usable). The
// dial runs in the background, independent of the requests waiting for
// it, until the handshake completes or fails.
func (t *AutoTransport) attempt(o origin, authority string) *quicAttempt {
	key := attemptKey{o.key, authority}
	t.mu.Lock()
	defer t.mu.Unlock()
	if a := t.attempts[key]; a != nil {
		if done, ok := a.finished(); !done || (ok && a.cc.usable()) {
			return a
		}
		delete(t.attempts, key)
	}
	a := &quicAttempt{key: key, done: make(chan struct{}), hs: make(chan struct{})}
	t.attempts[key] = a
	t.stats.quicAttempts.Add(1)
	go t.dialAttempt(o, a)
	return a
}

// dialAttempt dials a QUIC connection for a.
func (t *AutoTransport) dialAttempt(o origin, a *quicAttempt) {
	cc, err := t.h3.dial(t.bg, a.key.authority, o.host)
	a.cc, a.err = cc, err
	close(a.done)
	if err == nil && !handshakeDone(cc.qc) {
		// An early connection: its handshake may still fail.
		select {
		case <-cc.qc.HandshakeComplete():
		case <-cc.qc.Context().Done():
			err = context.Cause(cc.qc.Context())
		}
	}
	a.hsErr = err
	close(a.hs)
	if err != nil {
		t.mu.Lock()
		if t.attempts[a.key] == a {
			delete(t.attempts, a.key)
		}
		t.mu.Unlock()
		if t.bg.Err() == nil {
			// "A failed or blackholed QUIC attempt marks that
			// alternative broken for the origin" (any handshake
			// failure, a timeout included): once, if the stall
			// watchdog of a 0-RTT request did it already.
			t.stats.quicFailures.Add(1)
			if !a.stalled.Load() {
				t.markBroken(o, a.key.authority)
			}
		}
		return
	}
	t.cache.confirm(o.key, a.key.authority)
	go func() {
		<-cc.qc.Context().Done()
		st := cc.qc.Stats()
		t.mu.Lock()
		if t.attempts[a.key] == a {
			delete(t.attempts, a.key)
		}
		if st.SmoothedRTT > 0 { // a connection that measured its RTT
			t.rememberPTO(a.key, ptoOf(st))
		}
		t.mu.Unlock()
	}()
}

// maxRememberedPTOs bounds AutoTransport.lastPTO.
const maxRememberedPTOs = defaultMaxAltSvcOrigins

// ptoOf estimates a connection's probe timeout from outside it (RFC 9002,
// Section 6.2.1), with the peer's max_ack_delay guessed.
func ptoOf(st quic.ConnectionStats) time.Duration {
	return st.SmoothedRTT + max(4*st.RTTVariation, time.Millisecond) + maxAckDelayGuess
}

// rememberPTO records the probe timeout a connection to the alternative
// of key measured, for the next connection there: "resumed connections
// over the same network MAY use the previous connection's final smoothed
// RTT value as the resumed connection's initial RTT" (RFC 9002, Section
// 6.2.2). t.mu held.
func (t *AutoTransport) rememberPTO(key attemptKey, pto time.Duration) {
	if t.lastPTO == nil {
		t.lastPTO = make(map[attemptKey]time.Duration)
	}
	if _, ok := t.lastPTO[key]; !ok && len(t.lastPTO) >= maxRememberedPTOs {
		for k := range t.lastPTO {
			delete(t.lastPTO, k)
			break
		}
	}
	t.lastPTO[key] = pto
}

// rememberedPTO returns the probe timeout of the last connection to the
// alternative of key, 0 if none is known.
func (t *AutoTransport) rememberedPTO(key attemptKey) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastPTO[key]
}

func (t *AutoTransport) markBroken(o origin, authority string) {
	t.cache.markBroken(o.key, authority)
	t.stats.brokenMarks.Add(1)
}

// liveConn returns an attempt of origin o with a usable connection, to
// one of the candidates or to the origin itself.
func (t *AutoTransport) liveConn(o origin, cands []candidate) (*quicAttempt, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	check := func(auth string) *quicAttempt {
		a := t.attempts[attemptKey{o.key, auth}]
		if a == nil {
			return nil
		}
		if done, ok := a.finished(); done && ok && a.cc.usable() && !a.stalled.Load() {
			return a
		}
		return nil
	}
	for _, c := range cands {
		if a := check(c.authority); a != nil {
			return a, c.authority
		}
	}
	if a := check(o.authority()); a != nil {
		return a, o.authority()
	}
	return nil, ""
}

// raceDelay returns how long a request waits for QUIC before it connects
// over TCP too.
func (t *AutoTransport) raceDelay() time.Duration {
	switch {
	case t.RaceDelay < 0:
		return 0
	case t.RaceDelay == 0:
		return defaultRaceDelay
	}
	return t.RaceDelay
}

// auto sends req with AutoProtocol.
func (t *AutoTransport) auto(req *http.Request, o origin) (*http.Response, error) {
	ctx := req.Context()
	for try := 0; ; try++ {
		cands := t.candidatesFor(ctx, o)
		a, auth := t.liveConn(o, cands)
		if a == nil && len(cands) == 0 {
			if t.cache.brokenNow(o.key) {
				t.stats.brokenSkips.Add(1)
			}
			return t.tcpThenH3(req, o)
		}
		if a == nil {
			c := cands[0]
			auth = c.authority
			a = t.attempt(o, auth)
			if !t.waitRace(req, a, o, c.failedBefore) {
				if err := ctx.Err(); err != nil {
					closeBody(req)
					return nil, err
				}
				return t.viaTCP(req)
			}
		}
		resp, err, next, again := t.viaH3(req, o, auth, a)
		switch {
		case next == h3Done:
			return resp, err
		case next == h3Fallback || try+1 == maxAutoTries:
			t.stats.fallbacks.Add(1)
			return t.viaTCP(again)
		}
		// h3Retry: a new connection (or TCP) takes it.
		req = again
	}
}

// waitRace waits for the QUIC attempt a to be ready for req (see
// readyFor), and reports whether it was before a TCP connection was; if
// false the request goes over TCP. It waits RaceDelay before it starts
// TCP, not at all when the alternative failed before, and it starts TCP
// at once when the attempt already lost a race.
func (t *AutoTransport) waitRace(req *http.Request, a *quicAttempt, o origin, failedBefore bool) bool {
	ctx := req.Context()
	ready, ok := a.readyFor(req, t.h3.Allow0RTT)
	select {
	case <-ready:
		if !ok() {
			t.stats.fallbacks.Add(1)
		}
		return ok()
	default:
	}
	if !a.lost.Load() {
		delay := t.raceDelay()
		if failedBefore {
			delay = 0
		}
		if delay > 0 {
			timer := time.NewTimer(delay)
			select {
			case <-ready:
				timer.Stop()
				if !ok() {
					t.stats.fallbacks.Add(1)
				}
				return ok()
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return false
			}
		}
	}
	// QUIC is late: TCP too, whichever completes first.
	t.stats.races.Add(1)
	tcp := t.pool.ready(ctx, o.authority())
	select {
	case <-ready:
		if ok() {
			t.stats.quicWins.Add(1)
			return true
		}
		t.stats.fallbacks.Add(1)
		return false
	case err := <-tcp:
		if err == nil {
			a.lost.Store(true)
			t.stats.tcpWins.Add(1)
			return false
		}
	case <-ctx.Done():
		return false
	}
	// TCP failed: QUIC may still make it.
	select {
	case <-ready:
		if ok() {
			t.stats.quicWins.Add(1)
		}
		return ok()
	case <-ctx.Done():
		return false
	}
}

// waitReady waits until the attempt a is ready for req, and returns the
// error of its dial or handshake.
func (t *AutoTransport) waitReady(req *http.Request, a *quicAttempt) error {
	ready, ok := a.readyFor(req, t.h3.Allow0RTT)
	select {
	case <-ready:
	case <-req.Context().Done():
		return req.Context().Err()
	}
	if !ok() {
		if a.err != nil {
			return a.err
		}
		return a.hsErr
	}
	return nil
}

// tcpThenH3 sends req over TCP; if no TCP connection can be made, it
// tries HTTP/3 on the origin's own host and port: "A client MAY attempt
// access to a resource with an "https" URI by resolving the host
// identifier to an IP address, establishing a QUIC connection to that
// address on the indicated port" (RFC 9114, Section 3.1), unless that
// failed recently.
func (t *AutoTransport) tcpThenH3(req *http.Request, o origin) (*http.Response, error) {
	resp, err := t.viaTCP(req)
	if err == nil || !isTCPDialError(err) || req.Context().Err() != nil {
		return resp, err
	}
	auth := o.authority()
	if t.cache.isBroken(o.key, auth) {
		return nil, err
	}
	retry, rerr := replayable(req)
	if rerr != nil {
		return nil, err
	}
	a := t.attempt(o, auth)
	if herr := t.waitReady(retry, a); herr != nil {
		closeBody(retry)
		return nil, errors.Join(err, herr)
	}
	resp, herr, _, _ := t.viaH3(retry, o, auth, a)
	if herr != nil {
		return nil, herr
	}
	return resp, nil
}

// requireH3 sends req with RequireHTTP3: over HTTP/3 only, at the first
// alternative or the origin itself.
func (t *AutoTransport) requireH3(req *http.Request, o origin) (*http.Response, error) {
	ctx := req.Context()
	for try := 0; ; try++ {
		cands := t.candidatesFor(ctx, o)
		a, auth := t.liveConn(o, cands)
		if a == nil {
			auth = o.authority()
			if len(cands) > 0 {
				auth = cands[0].authority
			}
			a = t.attempt(o, auth)
			if err := t.waitReady(req, a); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		resp, err, next, again := t.viaH3(req, o, auth, a)
		if next == h3Done {
			return resp, err
		}
		if try+1 == maxAutoTries {
			closeBody(again)
			return nil, err
		}
		req = again
	}
}

// replayable returns req ready to be sent again after its body was sent
// (or closed): the same request if it has no body, else a copy with a
// new body from GetBody; an error if the body cannot be had again.
func replayable(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("http3: request body cannot be sent again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Body = body
	return r, nil
}

// idempotent reports whether a request may be sent again even if the
// server may have processed it: "Request methods are considered
// "idempotent" if the intended effect on the server of multiple identical
// requests with that method is the same as the effect for a single such
// request. Of the request methods defined by this specification, PUT,
// DELETE, and safe request methods are idempotent." (RFC 9110, Section
// 9.2.2); with an Idempotency-Key or X-Idempotency-Key header as
// net/http.
func idempotent(req *http.Request) bool {
	switch methodOf(req) {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	_, k1 := req.Header["Idempotency-Key"]
	_, k2 := req.Header["X-Idempotency-Key"]
	return k1 || k2
}
