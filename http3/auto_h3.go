package http3

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/quicstack/quic"
)

// h3Next says what AutoTransport does after an HTTP/3 attempt.
type h3Next int

const (
	h3Done     h3Next = iota // the response, or an error for the caller
	h3Retry                  // send the request again (new connection)
	h3Fallback               // send the request again over TCP
)

// maxAckDelayGuess is the peer's max_ack_delay assumed when estimating a
// probe timeout from outside the connection (RFC 9000's default).
const maxAckDelayGuess = 25 * time.Millisecond

// viaH3 sends req over the HTTP/3 connection of attempt a, to authority
// for origin o. Unless the response is final (h3Done), it returns the
// request to send again, with a new body if it had one.
func (t *AutoTransport) viaH3(req *http.Request, o origin, authority string, a *quicAttempt) (*http.Response, error, h3Next, *http.Request) {
	hreq := req
	if authority != o.authority() {
		// "When using an alternative service, clients SHOULD include an
		// Alt-Used header field in all requests." (RFC 7838, Section 5)
		hreq = req.Clone(req.Context())
		hreq.Header.Set("Alt-Used", authority)
	}
	var stop func()
	if idempotent(req) && canReplay(req) {
		stop = t.watch(a, o)
	}
	resp, err := a.cc.roundTrip(hreq, true)
	if stop != nil {
		stop()
	}
	if err == nil {
		t.learn(o, resp)
		if resp.StatusCode == http.StatusMisdirectedRequest && authority != o.authority() {
			// "Clients receiving 421 (Misdirected Request) from an
			// alternative service MUST remove the corresponding entry
			// from its alternative service cache ... Regardless of the
			// idempotency of the request method, they MAY retry the
			// request, either at another alternative server, or at the
			// origin." (RFC 7838, Section 6)
			t.cache.forget(o.key, o.host, authority)
			if again, rerr := replayable(req); rerr == nil {
				resp.Body.Close()
				return nil, nil, h3Retry, again
			}
		}
		return resp, nil, h3Done, nil
	}
	var re *retryableError
	if errors.As(err, &re) {
		// Not processed by the server: on a connection that closed
		// before the request was sent (unsent, the body untouched),
		// after GOAWAY, or refused with H3_REQUEST_REJECTED (RFC 9114,
		// Section 4.1.1).
		if re.unsent {
			return nil, re.err, h3Retry, req
		}
		if again, rerr := replayable(req); rerr == nil {
			return nil, re.err, h3Retry, again
		}
		return nil, re.err, h3Done, nil
	}
	var idle *quic.IdleTimeoutError
	if errors.As(err, &idle) && req.Context().Err() == nil && idempotent(req) && canReplay(req) {
		// Nothing came back for the idle timeout while the request
		// waited (the keep-alive and path probes went unanswered):
		// the path died before the watchdog looked, a stall as well.
		t.stall(a, o)
	}
	if a.stalled.Load() && req.Context().Err() == nil && idempotent(req) {
		if again, rerr := replayable(req); rerr == nil {
			return nil, err, h3Fallback, again
		}
	}
	return nil, err, h3Done, nil
}

// canReplay reports whether req's body (if any) can be had again.
func canReplay(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// watch guards a request on a's connection until stop. If the path stops
// answering while the request waits for its response, the alternative is
// marked broken and the connection closed, so that its requests go over
// TCP: on a connection whose handshake is done, when two probe timeouts
// in a row fired without an acknowledgment (ConnectionStats.PTOCount,
// RFC 9002, Section 6.2.1; a live peer acknowledges within its
// max_ack_delay, even while it prepares the response); on a connection
// that sent the request in 0-RTT, when nothing at all came back within
// RaceDelay, the time a handshake is given, or two probe timeouts of the
// last connection to the alternative if longer (a path whose round trip
// is longer than RaceDelay is slow, not dead). The connection is looked at
// every RaceDelay or two probe timeouts, whichever is longer. With
// quic.Config.FollowNetwork, which moves the connection to a new socket
// at two probe timeouts (a NAT that forgot the binding, a new network),
// it takes three: the move, whose path validation takes a round trip,
// comes first.
func (t *AutoTransport) watch(a *quicAttempt, o origin) (stop func()) {
	window := max(t.raceDelay(), 2*ptoOf(a.cc.qc.Stats()))
	if handshakeDone(a.cc.qc) {
		// Remembered now, not only when the connection ends: a request
		// that resumes the session right after this connection closed
		// must find it, however late the goroutine that records the
		// final estimate runs.
		pto := ptoOf(a.cc.qc.Stats())
		t.mu.Lock()
		t.rememberPTO(a.key, pto)
		t.mu.Unlock()
	} else {
		// No RTT sample yet: that of the last connection to the
		// alternative, if any, whose session this one resumes. A path
		// whose round trip is longer than RaceDelay is not dead
		// because its first answer takes longer: "resumed connections
		// over the same network MAY use the previous connection's
		// final smoothed RTT value as the resumed connection's initial
		// RTT" (RFC 9002, Section 6.2.2).
		window = max(t.raceDelay(), 2*t.rememberedPTO(a.key), time.Millisecond)
	}
	// With FollowNetwork, the connection moves to a new socket at two
	// probe timeouts: the move, whose path validation takes a round
	// trip, gets until the third before HTTP/3 is given up.
	deadPTOs := 2
	if t.h3.QUICConfig != nil && t.h3.QUICConfig.FollowNetwork {
		deadPTOs = 3
	}
	var mu sync.Mutex
	stopped := false
	var timer *time.Timer
	mu.Lock() // timer is set before the function can read it
	defer mu.Unlock()
	timer = time.AfterFunc(window, func() {
		st := a.cc.qc.Stats()
		dead := st.PTOCount >= deadPTOs
		if !handshakeDone(a.cc.qc) {
			dead = st.PacketsReceived == 0
		}
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if !dead {
			timer.Reset(window)
			return
		}
		t.stall(a, o)
	})
	return func() {
		mu.Lock()
		stopped = true
		timer.Stop()
		mu.Unlock()
	}
}

// stall records that a's path stopped answering, once: the alternative is
// marked broken and the connection closed, so that its requests that can
// be sent again go over TCP.
func (t *AutoTransport) stall(a *quicAttempt, o origin) {
	if a.stalled.Swap(true) {
		return
	}
	t.stats.stalls.Add(1)
	t.markBroken(o, a.key.authority)
	a.cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "no answer")
}
