package http3

import (
	"sync"
	"time"

	"github.com/quicstack/quic"
)

const (
	// workerIdle is how long a handler goroutine waits for another
	// request before it exits.
	workerIdle = 10 * time.Second
)

// job is a request stream to serve.
type job struct {
	sc  *serverConn
	str *quic.Stream
}

// workerPool runs request handlers in goroutines that are kept for more
// requests: each request would otherwise pay for a new goroutine and for
// growing its stack (handlers and the QPACK encoder need more than the
// initial one), about a tenth of the server's CPU time per small request.
// Idle workers exit after workerIdle. The zero value is ready to use.
type workerPool struct {
	once     sync.Once
	work     chan job      // unbuffered: a job goes to a waiting worker or a new one
	quit     chan struct{} // closed by stop: idle workers exit
	stopOnce sync.Once
}

func (p *workerPool) init() {
	p.once.Do(func() {
		p.work = make(chan job)
		p.quit = make(chan struct{})
	})
}

// stop makes the idle workers exit, and the busy ones once done. Jobs run
// after stop get a goroutine each.
func (p *workerPool) stop() {
	p.init()
	p.stopOnce.Do(func() { close(p.quit) })
}

func (p *workerPool) run(j job) {
	p.init()
	select {
	case p.work <- j:
	default:
		go p.worker(j)
	}
}

func (p *workerPool) worker(j job) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		j.sc.handleRequest(j.str)
		// The request stops counting once its handler returned: a
		// graceful close waits for the responses' acknowledgements with
		// Conn.WaitAcked (closeAfterGoaway), so the worker need not wait
		// for them (which cost a wakeup per request, issue 28).
		j.sc.requestDone()
		j = job{}
		t.Reset(workerIdle)
		select {
		case j = <-p.work:
		case <-t.C:
			return
		case <-p.quit:
			return
		}
	}
}
