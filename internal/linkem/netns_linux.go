package linkem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps the named network namespaces.
const netnsDir = "/var/run/netns/"

// Do runs fn on an OS thread inside the named network namespace (one that
// `ip netns add` made, under /var/run/netns) and returns fn's error.
//
// Sockets that fn opens belong to the namespace for their whole life and
// may be used from any goroutine afterwards; that is the way to open a
// socket inside a namespace from Go. fn runs on a goroutine of its own,
// locked to its thread: goroutines that fn starts run outside the
// namespace, and fn must not call testing.T's FailNow. Once fn returns,
// the thread goes back to its namespace, or exits if it cannot.
func Do(ns string, fn func() error) error {
	if strings.Contains(ns, "/") || ns == "" || ns == "." || ns == ".." {
		return fmt.Errorf("linkem: bad namespace name %q", ns)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("linkem: %v", err)
			return
		}
		defer self.Close()
		target, err := os.Open(netnsDir + ns)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("linkem: network namespace %q: %v", ns, err)
			return
		}
		err = unix.Setns(int(target.Fd()), unix.CLONE_NEWNET)
		target.Close()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("linkem: entering network namespace %q: %v", ns, err)
			return
		}
		defer func() {
			// A thread that cannot go back stays locked, and exits
			// with this goroutine.
			if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
				runtime.UnlockOSThread()
			}
		}()
		errc <- fn()
	}()
	return <-errc
}

// Command returns a command that runs name with args inside the named
// network namespace, through `ip netns exec` (which also mounts the
// namespace's /sys).
func Command(ctx context.Context, ns string, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
}

// ip runs the ip command with args.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("linkem: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// addNetns makes a network namespace with its loopback up.
func addNetns(ns string) error {
	if err := ip("netns", "add", ns); err != nil {
		return err
	}
	if err := ip("-n", ns, "link", "set", "lo", "up"); err != nil {
		delNetns(ns)
		return err
	}
	return nil
}

// delNetns removes a network namespace; it disappears once the last file
// or process holding it lets go.
func delNetns(ns string) error { return ip("netns", "del", ns) }

// checkNetnsSupport reports why namespaces cannot be made here, or nil.
// Its errors wrap errors.ErrUnsupported.
func checkNetnsSupport() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("linkem: making network namespaces needs root: %w", errors.ErrUnsupported)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("linkem: making network namespaces needs the ip command (iproute2): %v: %w", err, errors.ErrUnsupported)
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("linkem: no TUN device: %v: %w", err, errors.ErrUnsupported)
	}
	return nil
}

// staleName matches the namespaces of the pairs with default names.
var staleName = regexp.MustCompile(`^linkem([0-9]+)-[0-9]+-[ab]$`)

// sweepStale removes the namespaces that pairs with default names left
// behind when their process died without closing them (a SIGKILL, a
// crash): those whose process is gone.
func sweepStale() {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		m := staleName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if _, err := os.Stat("/proc/" + m[1]); err == nil {
			continue // its process lives (or another took its number)
		}
		delNetns(e.Name())
	}
}
