package quic

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The network a FollowNetwork connection lives in, on Linux: the network
// namespace of its socket (a process may hold sockets of several), a
// netlink watcher of the namespace's address and route changes shared by
// its connections, route queries, and new sockets for new paths, all made
// in that namespace.

// nsKey identifies a network namespace: the device and inode of its nsfs
// file.
type nsKey struct{ dev, ino uint64 }

// netEnv is the network of one connection's socket.
type netEnv struct {
	nsfd int   // the namespace, -1 for the process's own
	key  nsKey // zero when nsfd is -1
}

// newNetEnv returns the network of pc's socket.
func newNetEnv(pc net.PacketConn) *netEnv {
	e := &netEnv{nsfd: -1}
	sc, ok := pc.(syscall.Conn)
	if !ok {
		return e
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return e
	}
	fd := -1
	rc.Control(func(s uintptr) {
		// SIOCGSKNS (Linux 4.9): a file descriptor of the socket's
		// network namespace.
		fd, err = unix.IoctlRetInt(int(s), unix.SIOCGSKNS)
	})
	if err != nil || fd < 0 {
		return e
	}
	unix.CloseOnExec(fd)
	key, err := nsKeyOf(fd)
	if err != nil {
		unix.Close(fd)
		return e
	}
	if self, err := threadNetns(); err == nil && self == key {
		unix.Close(fd) // the namespace of this process's threads
		return e
	}
	e.nsfd, e.key = fd, key
	return e
}

func nsKeyOf(fd int) (nsKey, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nsKey{}, err
	}
	return nsKey{uint64(st.Dev), st.Ino}, nil
}

// threadNetns returns the namespace of the calling goroutine's thread;
// an unlocked goroutine runs on the process's threads, in its namespace.
func threadNetns() (nsKey, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
		return nsKey{}, err
	}
	return nsKey{uint64(st.Dev), st.Ino}, nil
}

// do runs fn in the environment's namespace: at once for the process's
// own, else on a thread moved there for the call (which needs
// CAP_SYS_ADMIN, as making the socket there did). Sockets fn opens belong
// to the namespace.
func (e *netEnv) do(fn func() error) error {
	if e.nsfd < 0 {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer self.Close()
		if err := unix.Setns(e.nsfd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer func() {
			// A thread that cannot go back stays locked and exits with
			// this goroutine.
			if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
				runtime.UnlockOSThread()
			}
		}()
		errc <- fn()
	}()
	return <-errc
}

// listenUDP opens a UDP socket on src (port 0) in the namespace.
func (e *netEnv) listenUDP(src netip.Addr) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := e.do(func() (err error) {
		network := "udp4"
		if src.Is6() {
			network = "udp6"
		}
		c, err = net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)))
		return err
	})
	return c, err
}

// subscribe calls kick (which must not block) after each change of the
// namespace's addresses or routes, until the returned function is called.
func (e *netEnv) subscribe(kick func()) (cancel func(), err error) {
	w, err := watcherFor(e)
	if err != nil {
		return nil, err
	}
	id := w.add(kick)
	return func() { w.remove(id) }, nil
}

// routeSource returns the local address the kernel would send from to
// reach dst now, and false if it has no route to dst.
func (e *netEnv) routeSource(dst netip.Addr) (netip.Addr, bool) {
	var src netip.Addr
	var ok bool
	e.do(func() error {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		tv := unix.NsecToTimeval(int64(time.Second))
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return err
		}
		seq := routeSeq.Add(1)
		if err := unix.Sendto(fd, routeQuery(seq, dst), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return err
		}
		buf := make([]byte, 8192)
		for i := 0; i < 4; i++ {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				return err
			}
			s, _, good, err := parseRouteReply(buf[:n], seq)
			if err == errNetlink {
				continue // not the answer
			}
			src, ok = s, good
			return err
		}
		return errNetlink
	})
	return src, ok
}

// routeSeq numbers the route queries.
var routeSeq atomic.Uint32

// close releases the namespace handle.
func (e *netEnv) close() {
	if e.nsfd >= 0 {
		unix.Close(e.nsfd)
		e.nsfd = -1
	}
}

// netWatcher reads a namespace's netlink announcements of address and
// route changes (RTMGRP_*_IFADDR, RTMGRP_*_ROUTE) and kicks its
// subscribers. One runs per namespace while it has subscribers.
type netWatcher struct {
	key  nsKey
	file *os.File // the netlink socket, in the runtime's poller

	mu   sync.Mutex
	subs map[uint64]func()
	next uint64
}

var netWatchers struct {
	mu sync.Mutex
	m  map[nsKey]*netWatcher
}

// watcherFor returns the running watcher of e's namespace, starting one.
func watcherFor(e *netEnv) (*netWatcher, error) {
	key := e.key
	if e.nsfd < 0 {
		var err error
		if key, err = threadNetns(); err != nil {
			return nil, err
		}
	}
	netWatchers.mu.Lock()
	defer netWatchers.mu.Unlock()
	if w := netWatchers.m[key]; w != nil {
		return w, nil
	}
	var fd int
	err := e.do(func() (err error) {
		fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_ROUTE)
		if err != nil {
			return err
		}
		groups := uint32(unix.RTMGRP_IPV4_IFADDR | unix.RTMGRP_IPV6_IFADDR | unix.RTMGRP_IPV4_ROUTE | unix.RTMGRP_IPV6_ROUTE | unix.RTMGRP_LINK)
		if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: groups}); err != nil {
			unix.Close(fd)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	w := &netWatcher{key: key, file: os.NewFile(uintptr(fd), "netlink"), subs: make(map[uint64]func())}
	if netWatchers.m == nil {
		netWatchers.m = make(map[nsKey]*netWatcher)
	}
	netWatchers.m[key] = w
	go w.run()
	return w, nil
}

func (w *netWatcher) add(kick func()) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	w.subs[w.next] = kick
	return w.next
}

// remove drops a subscriber; the last one stops the watcher.
func (w *netWatcher) remove(id uint64) {
	netWatchers.mu.Lock()
	defer netWatchers.mu.Unlock()
	w.mu.Lock()
	delete(w.subs, id)
	last := len(w.subs) == 0
	w.mu.Unlock()
	if last && netWatchers.m[w.key] == w {
		delete(netWatchers.m, w.key)
		w.file.Close() // ends run
	}
}

// maxNetlinkMessages bounds the messages looked at per datagram.
const maxNetlinkMessages = 256

func (w *netWatcher) run() {
	buf := make([]byte, 64<<10)
	for {
		n, err := w.file.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return
			}
			// ENOBUFS: announcements were lost; the state may have
			// changed all the same.
			w.kickAll()
			continue
		}
		msgs, _ := parseNetlink(buf[:n], maxNetlinkMessages)
		for _, m := range msgs {
			if isNetworkChange(m.typ) {
				w.kickAll()
				break
			}
		}
	}
}

func (w *netWatcher) kickAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, kick := range w.subs {
		kick()
	}
}
