package quic

import (
	"net"
	"sync"
	"time"
)

// The Transport's side of several sockets on one address (ReusePortGroup):
// besides Conn, it reads more sockets, each in a goroutine of its own.
// Datagrams of known connections go straight from any of them to the
// connection, without a lock; what needs an answer from the Transport
// (a new connection, a stateless reset, version negotiation) takes the
// slow path one datagram at a time (Transport.slowMu). Packets leave
// through Conn: every socket of the group has the same local address.

// extraSockets are the sockets a Transport reads besides Conn.
type extraSockets struct {
	mu    sync.Mutex
	conns []net.PacketConn
	// pending are the sockets added before the Transport started, which
	// init starts reading.
	pending []net.PacketConn
	started bool
}

// addReadSocket makes t read pc too, in a goroutine of its own, from now
// (or from its start) until it closes. pc must be bound to the same
// address as t.Conn.
func (t *Transport) addReadSocket(pc net.PacketConn) {
	x := &t.extraRx
	x.mu.Lock()
	defer x.mu.Unlock()
	x.conns = append(x.conns, pc)
	if !x.started {
		x.pending = append(x.pending, pc)
		return
	}
	t.startReader(pc)
}

// startExtraReaders starts reading the sockets added before init.
func (t *Transport) startExtraReaders() {
	x := &t.extraRx
	x.mu.Lock()
	defer x.mu.Unlock()
	x.started = true
	for _, pc := range x.pending {
		t.startReader(pc)
	}
	x.pending = nil
}

func (t *Transport) startReader(pc net.PacketConn) {
	select {
	case <-t.closing:
		return
	default:
	}
	sock := newSysConn(pc, socketOptions{
		disableGSO: t.DisableGSO, disableGRO: t.DisableGRO, disableECN: t.DisableECN,
		disableBatch: t.DisableBatchIO, bufferSize: t.SocketBufferSize,
		receiveDrops: &t.stats.receiveDrops,
	})
	t.wg.Add(1)
	go t.readLoop(sock, false)
}

// unblock makes the extra sockets' read loops return: the sockets belong
// to their group, which closes them.
func (x *extraSockets) unblock() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.started = true
	for _, pc := range x.conns {
		pc.SetReadDeadline(time.Unix(1, 0))
	}
}
