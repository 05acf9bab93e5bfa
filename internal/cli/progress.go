package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Progress shows a transfer's progress on one line of a terminal:
// the bytes so far (of the total when known), the rate and, with a
// total, the time left. The line appears once the transfer has taken a
// second, is redrawn four times a second and is erased by Done, so that
// short transfers and output that is not a terminal (a file, a pipe, a
// test) get nothing. Add may be called from several goroutines.
type Progress struct {
	n, total atomic.Int64 // total < 0: unknown
	w        io.Writer
	start    time.Time
	stop     chan struct{}
	done     sync.WaitGroup
	shown    bool // a line is on the screen (the drawing goroutine's)
}

// progressDelay is how long a transfer runs before its progress shows;
// progressEvery how often the line is redrawn.
const (
	progressDelay = time.Second
	progressEvery = 250 * time.Millisecond
)

// NewProgress starts showing progress on w if it is a terminal; total is
// the size expected, or -1 if unknown. Done must be called.
func NewProgress(w io.Writer, total int64) *Progress {
	p := &Progress{w: w, start: time.Now(), stop: make(chan struct{})}
	p.total.Store(total)
	p.startDrawing()
	return p
}

// startDrawing starts the drawing goroutine if w is a terminal.
func (p *Progress) startDrawing() {
	if IsTerminal(p.w) {
		t := time.NewTicker(progressEvery)
		p.done.Go(func() {
			defer t.Stop()
			p.run(t.C)
		})
	}
}

// run draws the line at each tick, as of the tick's time, until Done.
func (p *Progress) run(tick <-chan time.Time) {
	for {
		select {
		case <-p.stop:
			if p.shown {
				fmt.Fprint(p.w, "\r\033[K") // erase the line
			}
			return
		case now := <-tick:
			if line, ok := p.line(now); ok {
				fmt.Fprint(p.w, "\r\033[K"+line)
				p.shown = true
			}
		}
	}
}

// Add counts n more bytes transferred.
func (p *Progress) Add(n int) { p.n.Add(int64(n)) }

// AddTotal adds n bytes to the total expected; a negative n makes the
// total unknown.
func (p *Progress) AddTotal(n int64) {
	for {
		t := p.total.Load()
		nt := t + n
		if t < 0 || n < 0 {
			nt = -1
		}
		if p.total.CompareAndSwap(t, nt) {
			return
		}
	}
}

// Done erases the line and stops the drawing.
func (p *Progress) Done() {
	close(p.stop)
	p.done.Wait()
}

// Reader returns r counting what is read from it.
func (p *Progress) Reader(r io.Reader) io.Reader { return progressReader{r, p} }

type progressReader struct {
	r io.Reader
	p *Progress
}

func (r progressReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.p.Add(n)
	return n, err
}

// line is the progress line at now, and whether it is time to show one.
func (p *Progress) line(now time.Time) (string, bool) {
	elapsed := now.Sub(p.start)
	if elapsed < progressDelay {
		return "", false
	}
	return ProgressLine(p.n.Load(), p.total.Load(), elapsed), true
}

// ProgressLine formats n bytes of total (negative: unknown) after elapsed:
// "12.5 MB of 100.0 MB (12%), 100.0 Mbit/s, 7 s left".
func ProgressLine(n, total int64, elapsed time.Duration) string {
	var b strings.Builder
	b.WriteString(FormatBytes(uint64(max(n, 0))))
	if total > 0 {
		fmt.Fprintf(&b, " of %s (%d%%)", FormatBytes(uint64(total)), min(n*100/total, 100))
	}
	b.WriteString(", " + Mbps(uint64(max(n, 0)), elapsed))
	if total > 0 && n > 0 && n < total {
		left := time.Duration(float64(elapsed) * float64(total-n) / float64(n))
		b.WriteString(", " + formatLeft(left) + " left")
	}
	return b.String()
}

// formatLeft rounds a time left to what a reader needs.
func formatLeft(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()+0.5))
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// IsTerminal reports whether w is a terminal (a character device).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && st.Mode()&os.ModeDevice != 0
}
