//go:build linux && (amd64 || arm64)

package quic

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Helpers of the network namespace tests of the path and socket layers
// (conn_netns_*_test.go), on top of pathNetnsPair and pathListenUDPIn.

// inNetns runs f on an OS thread moved into the network namespace ns, so
// that the sockets f opens live there; the thread then returns to its
// namespace, or ends if it cannot.
func inNetns(t testing.TB, ns string, f func() error) {
	t.Helper()
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			ch <- err
			return
		}
		defer home.Close()
		fd, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			ch <- err
			return
		}
		defer fd.Close()
		if _, _, e := syscall.RawSyscall(pathSysSetns, fd.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
			ch <- e
			return
		}
		err = f()
		if _, _, e := syscall.RawSyscall(pathSysSetns, home.Fd(), syscall.CLONE_NEWNET, 0); e == 0 {
			runtime.UnlockOSThread() // back home: the thread may serve others
		}
		ch <- err
	}()
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

var nftOnce struct {
	sync.Once
	err error
}

// needNft makes sure the nft command is there, installing Debian's
// nftables package with apt-get when it is missing, and skips the test
// with the reason if that is impossible.
func needNft(t testing.TB) {
	t.Helper()
	nftOnce.Do(func() {
		if _, err := exec.LookPath("nft"); err == nil {
			return
		}
		if _, err := exec.LookPath("apt-get"); err != nil {
			nftOnce.err = fmt.Errorf("nft missing and no apt-get to install it")
			return
		}
		cmd := exec.Command("apt-get", "install", "-y", "--no-install-recommends", "nftables")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			// The package lists may be missing: update them once.
			upd := exec.Command("apt-get", "update")
			if out2, err2 := upd.CombinedOutput(); err2 != nil {
				nftOnce.err = fmt.Errorf("apt-get install nftables: %v: %s; apt-get update: %v: %s", err, out, err2, out2)
				return
			}
			if out, err = cmd.CombinedOutput(); err != nil {
				nftOnce.err = fmt.Errorf("apt-get install nftables: %v: %s", err, out)
				return
			}
		}
		if _, err := exec.LookPath("nft"); err != nil {
			nftOnce.err = fmt.Errorf("nft still missing after installing nftables")
		}
	})
	if nftOnce.err != nil {
		t.Skipf("nftables needed: %v", nftOnce.err)
	}
}

// nft runs an nft script in the network namespace ns.
func nft(t testing.TB, ns string, script ...string) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(strings.Join(script, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft in %s: %v: %s\n%s", ns, err, out, strings.Join(script, "\n"))
	}
}

// ipIn runs the ip command with args in the network namespace ns.
func ipIn(t testing.TB, ns string, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s %v: %v: %s", ns, args, err, out)
	}
}
