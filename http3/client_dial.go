package http3

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"

	"github.com/quicstack/quic"
)

// Dials. The requests to an authority share one connection, and while it
// is being dialed they share the dial. A dial lives as long as one of
// them waits for it: it runs in a goroutine of its own, with a context
// detached from the request that started it (which keeps its values), and
// is cancelled once every request that waited for it gave up (as
// net/http's HTTP/2 transport does), or by Transport.Close.

// dialCall is a connection to an authority, being dialed until done is
// closed. waiters, dials and the map entries are guarded by Transport.mu;
// cc and err are set before done is closed.
type dialCall struct {
	done    chan struct{}
	cc      *clientConn
	err     error
	cancel  context.CancelFunc // cancels the dial
	waiters int                // requests waiting for done
}

// getConn returns a connection to authority for req, dialing one if
// needed, and reserves it for req: until openRequest starts the request
// on it or unreserve, the connection counts a request in progress, so
// that CloseIdleConnections, IdleConnTimeout or a retire do not close it
// under the request. Concurrent callers share one dial.
func (t *Transport) getConn(req *http.Request, authority, host string) (*clientConn, error) {
	ctx := req.Context()
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, ErrTransportClosed
		}
		call := t.conns[authority]
		if call == nil {
			call = t.startDial(ctx, authority, host)
		}
		call.waiters++
		t.mu.Unlock()
		select {
		case <-call.done:
			t.mu.Lock()
			call.waiters--
			t.mu.Unlock()
		case <-ctx.Done():
			t.mu.Lock()
			call.waiters--
			if call.waiters == 0 && call.cc == nil && call.err == nil {
				// Nobody waits any more: abandon the dial, and let the
				// next request start its own.
				call.cancel()
				if t.conns[authority] == call {
					delete(t.conns, authority)
				}
			}
			t.mu.Unlock()
			return nil, ctx.Err()
		}
		if call.err != nil {
			return nil, call.err
		}
		if call.cc.reserve(req) {
			return call.cc, nil
		}
		// Closed, or no new requests (GOAWAY, retired): forget it.
		call.cc.retire()
	}
}

// startDial starts dialing authority. t.mu held.
func (t *Transport) startDial(ctx context.Context, authority, host string) *dialCall {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	call := &dialCall{done: make(chan struct{}), cancel: cancel}
	if t.conns == nil {
		t.conns = make(map[string]*dialCall)
	}
	if t.dials == nil {
		t.dials = make(map[*dialCall]struct{})
	}
	t.conns[authority] = call
	t.dials[call] = struct{}{}
	go t.runDial(dctx, call, authority, host)
	return call
}

// runDial dials for call and publishes the result. A failed dial is
// forgotten, so that the next request dials again; a connection made
// after Close is closed.
func (t *Transport) runDial(ctx context.Context, call *dialCall, authority, host string) {
	cc, err := t.dial(ctx, authority, host)
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.dials, call)
	if err != nil {
		if t.closed {
			err = ErrTransportClosed
		}
		if t.conns[authority] == call {
			delete(t.conns, authority)
		}
		call.cancel()
	}
	call.cc, call.err = cc, err
	close(call.done)
}

// dial makes a connection to authority and starts HTTP/3 on it. After
// Transport.Close the connection is closed and ErrTransportClosed
// returned.
func (t *Transport) dial(ctx context.Context, authority, host string) (*clientConn, error) {
	tc := &tls.Config{}
	if t.TLSClientConfig != nil {
		tc = t.TLSClientConfig.Clone()
	}
	if !slices.Contains(tc.NextProtos, NextProtoH3) {
		tc.NextProtos = append([]string{NextProtoH3}, tc.NextProtos...)
	}
	if tc.ServerName == "" {
		tc.ServerName = host
	}
	var qc *quic.Conn
	var err error
	if t.Dial != nil {
		if t.Allow0RTT && tc.ClientSessionCache == nil {
			tc.ClientSessionCache = t.sessionCache()
		}
		qc, err = t.Dial(ctx, authority, tc, t.quicConfig())
	} else if t.Allow0RTT {
		qc, err = t.dialEarly(ctx, authority, tc)
	} else {
		qc, err = quic.DialAddr(ctx, authority, tc, t.quicConfig())
	}
	if err != nil {
		return nil, err
	}
	cc := &clientConn{connection: newConnection(qc, false, uint64(max(t.MaxResponseHeaderBytes, 0))), t: t}
	cc.ours.H3Datagram = t.EnableDatagrams && datagramsNegotiated(qc)
	t.Extensions.apply(cc.connection)
	cc.onGoaway = cc.goawayReceived
	if err := cc.start(); err != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeInternalError), "cannot open control streams")
		return nil, err
	}
	// Listed only now, for Close and CloseIdleConnections: an idle
	// connection that is still starting is no idle connection to close,
	// but the one its dial's requests wait for.
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
		return nil, ErrTransportClosed
	}
	if t.all == nil {
		t.all = make(map[*clientConn]struct{})
	}
	t.all[cc] = struct{}{}
	t.mu.Unlock()
	go func() {
		<-qc.Context().Done()
		t.mu.Lock()
		delete(t.all, cc)
		t.mu.Unlock()
		cc.mu.Lock()
		cc.stopIdleTimer()
		cc.mu.Unlock()
	}()
	if t.Extensions != nil && t.Extensions.BidiStream != nil {
		go cc.acceptServerStreams(t.Extensions.BidiStream)
	} else {
		go cc.refuseBidiStreams()
	}
	cc.mu.Lock()
	cc.startIdleTimer()
	cc.mu.Unlock()
	return cc, nil
}
