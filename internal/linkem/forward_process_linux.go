package linkem

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The forwarding process. By default a Pair runs its forwarders in a
// process of their own: the program itself (/proc/self/exe), started with
// forwarderEnv set, which this package's init function recognises before
// main (or a test binary's TestMain) runs. Its Go runtime then serves
// only the two forwarding threads: with spare Ps, no garbage collection
// and real-time threads, nothing the program under test does (its
// goroutines, its garbage, its load on the scheduler) delays a packet.
//
// The parent passes the TUN devices as file descriptors 3 and 4 and a
// control socket as 5. On the control socket, JSON messages: first the
// forwardConfig, answered by a processReply once forwarding runs; then
// processRequests, each answered by a processReply. The process exits when
// the control socket closes: when the Pair closes or this process ends,
// however it ends. (Not PR_SET_PDEATHSIG: it fires when the thread that
// started the child exits, and a Go program's threads exit when their
// locked goroutines do.)

// forwarderEnv marks the forwarding process.
const forwarderEnv = "LINKEM_FORWARDER_PROCESS"

// File descriptors of the forwarding process.
const (
	childTunA    = 3
	childTunB    = 4
	childControl = 5
)

type processRequest struct {
	Op     string // "set" or "stats"
	Dir    Dir
	Params Params
}

type processReply struct {
	Err   string
	Stats [2]statsWire
}

// statsWire is Stats with its error as text.
type statsWire struct {
	Stats
	LastError string
}

func init() {
	if os.Getenv(forwarderEnv) == "1" {
		os.Exit(forwarderProcess())
	}
}

// forwarderProcess is the main function of the forwarding process.
func forwarderProcess() int {
	os.Unsetenv(forwarderEnv)
	// Spare Ps: a forwarder that comes back from ppoll finds one at once,
	// without waiting for another thread.
	runtime.GOMAXPROCS(max(4, runtime.NumCPU()+2))
	// Every thread of this runtime runs with the forwarders' real-time
	// priority, and the threads it makes later inherit it: a forwarder
	// that the runtime preempts (every 10 ms, since it never yields) or
	// whose P it takes back during a system call needs another thread of
	// the runtime to hand it a P again, and a thread of the normal class
	// can wait for the CPU for tens of milliseconds on a loaded machine.
	var rtErr error
	if cfgRealTime := os.Getenv(forwarderEnv+"_RT") == "1"; cfgRealTime {
		rtErr = realTimeProcess()
	}
	os.Unsetenv(forwarderEnv + "_RT")
	// The forwarders allocate nothing per packet; the control messages'
	// garbage is collected only past the memory limit.
	debug.SetGCPercent(-1)
	ctl, err := net.FileConn(os.NewFile(childControl, "control"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "linkem forwarder:", err)
		return 2
	}
	dec, enc := json.NewDecoder(ctl), json.NewEncoder(ctl)
	var cfg forwardConfig
	if err := dec.Decode(&cfg); err != nil {
		fmt.Fprintln(os.Stderr, "linkem forwarder: reading the configuration:", err)
		return 2
	}
	debug.SetMemoryLimit(int64(256<<20) + 2*int64(cfg.MaxPackets)*int64(cfg.MTU+64))
	tun := [2]int{childTunA, childTunB}
	for _, fd := range tun {
		// The parent's os/exec made the shared file descriptions
		// blocking.
		if err := unix.SetNonblock(fd, true); err != nil {
			enc.Encode(processReply{Err: err.Error()})
			return 2
		}
	}
	if rtErr != nil {
		cfg.RealTime = false
	}
	fw, err := startLocal(tun, cfg)
	if err != nil {
		enc.Encode(processReply{Err: err.Error()})
		return 2
	}
	defer fw.close()
	reply := func() processReply {
		var r processReply
		for d := range 2 {
			s, _ := fw.stats(Dir(d))
			r.Stats[d].Stats = s
			if s.LastError != nil {
				r.Stats[d].LastError = s.LastError.Error()
			}
			r.Stats[d].Stats.LastError = nil
		}
		return r
	}
	if err := enc.Encode(reply()); err != nil {
		return 2
	}
	for {
		var req processRequest
		if err := dec.Decode(&req); err != nil {
			return 0 // the parent closed the pair, or died
		}
		var r processReply
		switch req.Op {
		case "set":
			if req.Dir != AB && req.Dir != BA {
				r.Err = "bad direction"
			} else if err := req.Params.Validate(); err != nil {
				r.Err = err.Error()
			} else {
				fw.setParams(req.Dir, req.Params)
			}
		case "stats":
			r = reply()
		default:
			r.Err = "unknown request " + req.Op
		}
		if err := enc.Encode(r); err != nil {
			return 0
		}
	}
}

// processForwarding is the parent's end of a forwarding process.
type processForwarding struct {
	cmd  *exec.Cmd
	exit chan error // the process's exit status, once

	mu   sync.Mutex // serialises requests
	ctl  net.Conn
	dec  *json.Decoder
	enc  *json.Encoder
	last processReply // the last statistics
}

// replyTimeout bounds the wait for the forwarding process's answers.
const replyTimeout = 10 * time.Second

// startProcess starts a forwarding process between the TUN devices tun[A]
// and tun[B]; it does not take ownership of them.
func startProcess(tun [2]int, cfg forwardConfig) (*processForwarding, error) {
	// /proc/self/exe runs this program even if its file was removed
	// since it started.
	const exe = "/proc/self/exe"
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("linkem: socketpair: %v", err)
	}
	mine, theirs := os.NewFile(uintptr(pair[0]), "control"), os.NewFile(uintptr(pair[1]), "control")
	defer theirs.Close()
	ctl, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, err
	}
	// Duplicates: os/exec switches the files it passes to blocking mode,
	// and closing an os.File closes its descriptor.
	var files []*os.File
	for s, fd := range tun {
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			ctl.Close()
			return nil, err
		}
		files = append(files, os.NewFile(uintptr(dup), "tun"+Side(s).String()))
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cmd := exec.Command(exe)
	if name, err := os.Executable(); err == nil {
		cmd.Args = []string{name + " (linkem forwarder)"}
	}
	cmd.Env = append(os.Environ(), forwarderEnv+"=1")
	if cfg.RealTime {
		cmd.Env = append(cmd.Env, forwarderEnv+"_RT=1")
	}
	cmd.ExtraFiles = append(files, theirs)
	cmd.Stderr = os.Stderr
	// A process group of its own: a ^C at the terminal goes to this
	// program, which closes its pairs, and not straight to the forwarders.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("linkem: starting the forwarding process: %v", err)
	}
	p := &processForwarding{cmd: cmd, exit: make(chan error, 1), ctl: ctl, dec: json.NewDecoder(ctl), enc: json.NewEncoder(ctl)}
	go func() { p.exit <- cmd.Wait() }()
	ctl.SetDeadline(time.Now().Add(replyTimeout))
	if err := p.enc.Encode(cfg); err != nil {
		p.close()
		return nil, fmt.Errorf("linkem: configuring the forwarding process: %v", err)
	}
	if err := p.dec.Decode(&p.last); err != nil || p.last.Err != "" {
		p.close()
		return nil, fmt.Errorf("linkem: the forwarding process did not start: %v", errors.Join(err, errorOrNil(p.last.Err)))
	}
	return p, nil
}

func errorOrNil(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// request sends req and returns the answer.
func (p *processForwarding) request(req processRequest) (processReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ctl.SetDeadline(time.Now().Add(replyTimeout))
	var r processReply
	if err := p.enc.Encode(req); err != nil {
		return r, fmt.Errorf("linkem: the forwarding process: %v", err)
	}
	if err := p.dec.Decode(&r); err != nil {
		return r, fmt.Errorf("linkem: the forwarding process: %v", err)
	}
	if r.Err != "" {
		return r, errors.New("linkem: " + r.Err)
	}
	return r, nil
}

func (p *processForwarding) setParams(d Dir, prm Params) error {
	_, err := p.request(processRequest{Op: "set", Dir: d, Params: prm})
	return err
}

func (p *processForwarding) stats(d Dir) (Stats, error) {
	r, err := p.request(processRequest{Op: "stats"})
	if err != nil {
		return Stats{}, err
	}
	s := r.Stats[d].Stats
	s.LastError = errorOrNil(r.Stats[d].LastError)
	return s, nil
}

// close closes the control socket, which ends the process, and waits for
// it.
func (p *processForwarding) close() error {
	p.ctl.Close()
	select {
	case err := <-p.exit:
		if err != nil {
			return fmt.Errorf("linkem: the forwarding process: %v", err)
		}
		return nil
	case <-time.After(replyTimeout):
		p.cmd.Process.Kill()
		<-p.exit
		return errors.New("linkem: the forwarding process did not stop; killed")
	}
}

// realTimeProcess gives every thread of this process the forwarders'
// real-time priority (SCHED_FIFO); threads made later inherit it.
func realTimeProcess() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: realTimePriority}, 0); err != nil {
			return err
		}
	}
	return nil
}
