package quic

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"
)

// Following the network (Config.FollowNetwork): a client connection that
// moves to a new local socket by itself when the device's network
// changes. This is driver code: a goroutine per following connection that
// reads no protocol state and moves the connection with Migrate, as an
// application would.
//
// What starts a look at the network:
//   - a netlink announcement of an address or route change in the
//     socket's network namespace (Linux);
//   - a write that fails (network unreachable, address gone);
//   - the path no longer answering: followPTOs probe timeouts in a row
//     without an acknowledgment.
//
// The look asks the kernel which local address it would send from to
// reach the server now. If that is another address than the connection's
// path uses, or if the path stopped answering, the connection probes a
// path from a new UDP socket bound to that address (PATH_CHALLENGE, RFC
// 9000, Section 8.2) and moves there once the server's PATH_RESPONSE
// validated it (Section 9.2); until then it stays on the old path, and if
// validation fails it stays there. Streams are untouched: the same
// connection carries them on.

// Tunables of following.
const (
	// followPTOs is how many probe timeouts in a row without an
	// acknowledgment make the path "not answering".
	followPTOs = 2
	// followSettle gathers the announcements of one change (removing an
	// address also deletes its routes) before looking.
	followSettle = 20 * time.Millisecond
	// followTimeout bounds one move: its path validation.
	followTimeout = 10 * time.Second
	// followBackoff is the first wait before another move after one
	// failed because the path did not answer; it doubles up to
	// followMaxBackoff. A network change resets it.
	followBackoff    = time.Second
	followMaxBackoff = 30 * time.Second
	// defaultFollowKeepAlive is KeepAlivePeriod's default with
	// FollowNetwork: a PING after 15 s without sending keeps NAT bindings
	// that expire after 30 s of silence (common in home and carrier
	// NATs, although RFC 4787, REQ-5 asks for at least 2 minutes) and
	// lets a dead path show within seconds.
	defaultFollowKeepAlive = 15 * time.Second
)

// netWatchDisabled, set by tests before connections start, follows the
// network without netlink announcements, as on systems without them.
var netWatchDisabled bool

// follower follows the network for one connection.
type follower struct {
	c   *Conn
	env *netEnv

	kickCh   chan struct{} // buffered: a look is due
	changed  atomic.Bool   // the network changed (resets the backoff)
	stalled  atomic.Bool   // the path stopped answering
	ptoKick  int           // PTO count of the last stall kick (run goroutine only)
	moves    atomic.Uint64 // successful moves, for tests
	attempts atomic.Uint64 // moves tried
}

// startFollowing starts following the network for a client connection
// with FollowNetwork. It runs before the connection starts.
func (c *Conn) startFollowing() {
	f := &follower{c: c, env: newNetEnv(c.t.Conn), kickCh: make(chan struct{}, 1)}
	c.follow = f
	go f.run()
}

// kick asks for a look at the network. Any goroutine may call it; it never
// blocks.
func (f *follower) kick() {
	select {
	case f.kickCh <- struct{}{}:
	default:
	}
}

// writeFailed is told of a failed write: the network may have changed
// under the socket.
func (f *follower) writeFailed(err error) {
	if isTransientWriteError(err) {
		return
	}
	f.changed.Store(true)
	f.kick()
}

// checkPath runs on the connection's goroutine after its timers fired: a
// path that has not answered for followPTOs probe timeouts starts a look,
// once per run of timeouts.
func (f *follower) checkPath() {
	n := f.c.state.sent.PTOCount()
	if n < followPTOs {
		f.ptoKick = 0
		return
	}
	if f.ptoKick == 0 || n >= 2*f.ptoKick {
		// Again at 4, 8, ... timeouts, as the backoff of the move
		// allows.
		f.ptoKick = n
		f.stalled.Store(true)
		f.kick()
	}
}

func (f *follower) run() {
	c := f.c
	defer f.env.close()
	select {
	case <-c.handshakeDone:
	case <-c.ctx.Done():
		return
	}
	if !netWatchDisabled {
		cancel, err := f.env.subscribe(func() { f.changed.Store(true); f.kick() })
		if err == nil {
			defer cancel()
		}
	}
	// The address the path sends from: the socket's, or the route's
	// when the socket takes any (a wildcard address).
	src := unmappedAddrPort(c.LocalAddr()).Addr()
	remote := unmappedAddrPort(c.RemoteAddr()).Addr()
	if !src.IsValid() || src.IsUnspecified() {
		src, _ = f.env.routeSource(remote)
	}
	// own is the socket of the last successful move, closed when the
	// connection ends. A failed move's socket is released by move, and a
	// socket moved away from by the next move: nothing else is kept, so a
	// peer that makes the path stall again and again costs no memory.
	var own *Transport
	defer func() {
		if own != nil {
			go closeOwnTransport(own)
		}
	}()
	var backoff time.Duration
	var notBefore time.Time
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	for {
		select {
		case <-f.kickCh:
		case <-c.ctx.Done():
			return
		}
		// Let the announcements of one change arrive.
		settle.Reset(followSettle)
		select {
		case <-settle.C:
		case <-c.ctx.Done():
			return
		}
		select {
		case <-f.kickCh:
		default:
		}
		if f.changed.Swap(false) {
			backoff, notBefore = 0, time.Time{}
		}
		// A path that answers again (its acknowledgments came) is not
		// left.
		stalled := f.stalled.Swap(false) && c.Stats().PTOCount >= followPTOs
		remote = unmappedAddrPort(c.RemoteAddr()).Addr()
		now, ok := f.env.routeSource(remote)
		if !ok {
			continue // no route: the next change will tell
		}
		if now == src && !stalled {
			continue
		}
		if time.Now().Before(notBefore) {
			continue
		}
		f.attempts.Add(1)
		t, err := f.move(now)
		if err == nil {
			if own != nil {
				c.releaseTransport(own)
			}
			own = t
		}
		if errors.Is(err, ErrMigrationDisabled) || c.ctx.Err() != nil {
			return
		}
		if err != nil {
			backoff = min(max(2*backoff, followBackoff), followMaxBackoff)
			notBefore = time.Now().Add(backoff)
			continue
		}
		f.moves.Add(1)
		backoff, notBefore = 0, time.Time{}
		src = now
		// The probe timeouts of the old path, counted while the move
		// ran, are no reason to move again.
		f.stalled.Store(false)
	}
}

// move probes a path from a new socket on src and moves the connection
// there once validated, returning the new Transport. When the move fails
// it has released the socket it made (the Transport it returns then is
// closed, or about to be).
func (f *follower) move(src netip.Addr) (*Transport, error) {
	c := f.c
	pc, err := f.env.listenUDP(src)
	if err != nil {
		return nil, err
	}
	old := c.t
	t := &Transport{
		Conn:                  pc,
		ConnectionIDGenerator: old.ConnectionIDGenerator,
		StatelessResetKey:     old.StatelessResetKey,
		DisableGSO:            old.DisableGSO,
		DisableGRO:            old.DisableGRO,
		DisableECN:            old.DisableECN,
		DisableBatchIO:        old.DisableBatchIO,
		SocketBufferSize:      old.SocketBufferSize,
		ownConn:               true,
	}
	ctx, cancel := context.WithTimeout(c.ctx, followTimeout)
	defer cancel()
	if err := c.Migrate(ctx, t); err != nil {
		c.releaseTransport(t)
		return t, err
	}
	return t, nil
}

// releaseTransport stops the connection from using t, a socket it moved
// away from (or failed to move to), and closes t. It does nothing to the
// connection's first Transport.
func (c *Conn) releaseTransport(t *Transport) {
	if t == c.t {
		return
	}
	c.onLoop(func() {
		if c.state != nil && c.transportFor(c.state.activePath().addrs.local) == t {
			return // still in use
		}
		for i, x := range c.extra {
			if x == t {
				c.extra = append(c.extra[:i], c.extra[i+1:]...)
				break
			}
		}
		if c.state != nil {
			c.state.localIDs.each(func(cid ConnectionID) { t.ep.routes.remove(cid, c) })
		}
		go closeOwnTransport(t)
	})
}

// closeOwnTransport closes a Transport the follower made, and its socket.
func closeOwnTransport(t *Transport) {
	t.Close()
	t.Conn.Close()
}

// onLoop runs fn on the connection's goroutine, or at once if the
// connection has ended.
func (c *Conn) onLoop(fn func()) {
	select {
	case <-c.done:
		fn()
		return
	default:
	}
	c.mu.Lock()
	c.loopFns = append(c.loopFns, fn)
	c.hasRequest.Store(true)
	c.mu.Unlock()
	c.wake()
}

// isTransientWriteError reports whether a write error says nothing of the
// network: a full buffer, a datagram too large for the path.
func isTransientWriteError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EMSGSIZE)
}
