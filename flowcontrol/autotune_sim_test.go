package flowcontrol

import (
	"testing"
	"time"
)

// fcSimResult is what one run of simulateTransfer measured.
type fcSimResult struct {
	streamWindow, connWindow uint64
	lastSecond               uint64 // bytes read in the final second
}

// simulateTransfer runs one stream through a path of the given one-way
// delay (RTT = 2·delay) and link rate, in 1 ms ticks for dur. The sender
// always has data; the application reads at most appRate bytes per tick.
// MAX_STREAM_DATA and MAX_DATA updates travel back with the same delay.
func simulateTransfer(t *testing.T, delay time.Duration, linkRate, appRate uint64, dur time.Duration) fcSimResult {
	t.Helper()
	rtt := 2 * delay
	conn := NewReceiveWindow(ReceiveConfig{InitialWindow: 24 << 10, MaxWindow: 24 << 20})
	st := NewStreamReceiver(ReceiveConfig{InitialWindow: 16 << 10, MaxWindow: 16 << 20}, conn)
	ssw, csw := NewSendWindow(st.Limit()), NewSendWindow(conn.Limit())

	type segment struct {
		due       time.Time
		off, n    uint64
		streamMax uint64 // MAX_STREAM_DATA in flight back, when n == 0
		connMax   uint64
	}
	var forward, backward []segment
	var buffered, readTotal, readBefore uint64
	var res fcSimResult
	tick := time.Millisecond
	for now := at(0); now.Before(at(dur)); now = now.Add(tick) {
		// Updates reaching the sender.
		for len(backward) > 0 && !backward[0].due.After(now) {
			ssw.OnMaxData(backward[0].streamMax)
			csw.OnMaxData(backward[0].connMax)
			backward = backward[1:]
		}
		// The sender fills what the link and both limits allow.
		if n := min(ssw.Credit(), csw.Credit(), linkRate); n > 0 {
			forward = append(forward, segment{due: now.Add(delay), off: ssw.Sent(), n: n})
			ssw.OnSent(n)
			csw.OnSent(n)
		}
		// Data reaching the receiver.
		for len(forward) > 0 && !forward[0].due.After(now) {
			if err := st.OnData(forward[0].off, forward[0].n, false); err != nil {
				t.Fatalf("at %v: %v", now.Sub(t0), err)
			}
			buffered += forward[0].n
			forward = forward[1:]
		}
		// The application reads.
		r := min(buffered, appRate)
		buffered -= r
		readTotal += r
		st.OnConsumed(now, r)
		var u segment
		if st.ShouldSendUpdate() {
			u.streamMax = st.NextLimit(now, rtt)
			st.OnUpdateSent(u.streamMax)
		}
		if conn.ShouldSendUpdate() {
			u.connMax = conn.NextLimit(now, rtt)
			conn.OnUpdateSent(u.connMax)
		}
		if u.streamMax != 0 || u.connMax != 0 {
			u.due = now.Add(delay)
			backward = append(backward, u)
		}
		if now.Equal(at(dur - time.Second)) {
			readBefore = readTotal
		}
	}
	res.streamWindow, res.connWindow = st.Window(), conn.Window()
	res.lastSecond = readTotal - readBefore
	return res
}

// TestAutoTuneConverges checks the window a whole transfer settles on.
// RFC 9000, Section 4.3: "If an endpoint cannot ensure that its peer
// always has available flow control credit that is greater than the
// peer's bandwidth-delay product on this connection, its receive
// throughput will be limited by flow control."
func TestAutoTuneConverges(t *testing.T) {
	const delay = 20 * time.Millisecond // RTT 40 ms
	const linkRate = 100_000            // bytes per ms: 100 MB/s
	const bdp = linkRate * 40           // 4 MB

	t.Run("fast reader", func(t *testing.T) {
		r := simulateTransfer(t, delay, linkRate, 1<<62, 5*time.Second)
		if r.lastSecond < linkRate*1000*95/100 {
			t.Errorf("last second read %d bytes, want at least 95%% of the link's %d", r.lastSecond, linkRate*1000)
		}
		if r.streamWindow < bdp || r.streamWindow > 4*bdp {
			t.Errorf("stream window %d, want within [BDP, 4·BDP] = [%d, %d]", r.streamWindow, bdp, 4*bdp)
		}
		if r.connWindow < r.streamWindow*3/2 {
			t.Errorf("connection window %d below 1.5 times the stream window %d", r.connWindow, r.streamWindow)
		}
		t.Logf("stream window %d, connection window %d, BDP %d", r.streamWindow, r.connWindow, bdp)
	})
	t.Run("slow reader", func(t *testing.T) {
		// The application reads 10 kB per ms: a window of 2·40·10 kB
		// keeps it fed; doubling further would only buffer more.
		const appRate = 10_000
		r := simulateTransfer(t, delay, linkRate, appRate, 5*time.Second)
		if r.lastSecond < appRate*1000*95/100 {
			t.Errorf("last second read %d bytes, want at least 95%% of %d", r.lastSecond, appRate*1000)
		}
		if r.streamWindow > 4*appRate*40 {
			t.Errorf("stream window %d, want at most 4·rate·RTT = %d", r.streamWindow, 4*appRate*40)
		}
		t.Logf("stream window %d, connection window %d", r.streamWindow, r.connWindow)
	})
}
