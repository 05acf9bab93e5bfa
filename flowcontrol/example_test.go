package flowcontrol_test

import (
	"fmt"
	"time"

	"github.com/quicstack/quic/flowcontrol"
)

// A receiver grants a stream 1000 bytes, reads them quickly, and sends
// MAX_STREAM_DATA with a window doubled by auto-tuning; the connection
// window follows. The sender uses its credit and reports BLOCKED once.
func Example() {
	t0 := time.Unix(0, 0)
	rtt := 50 * time.Millisecond

	conn := flowcontrol.NewReceiveWindow(flowcontrol.ReceiveConfig{InitialWindow: 1500, MaxWindow: 100000, Shared: true})
	st := flowcontrol.NewStreamReceiver(flowcontrol.ReceiveConfig{InitialWindow: 1000, MaxWindow: 64000}, conn)
	send := flowcontrol.NewSendWindow(st.Limit()) // the peer's view of our limit

	// The peer sends the whole window.
	n := send.Credit()
	send.OnSent(n)
	if limit, ok := send.Blocked(); ok {
		fmt.Println("sender: STREAM_DATA_BLOCKED", limit)
		send.OnBlockedSent(limit)
	}
	if err := st.OnData(0, n, false); err != nil {
		fmt.Println(err)
	}
	if err := st.OnData(n, 1, false); err != nil {
		fmt.Println("receiver:", err)
	}

	// The application reads it within 10 ms.
	st.OnConsumed(t0, 400)
	st.OnConsumed(t0.Add(10*time.Millisecond), 600)
	if st.ShouldSendUpdate() {
		limit := st.NextLimit(t0.Add(10*time.Millisecond), rtt)
		st.OnUpdateSent(limit)
		fmt.Println("receiver: MAX_STREAM_DATA", limit, "window", st.Window(), "connection window", conn.Window())
		send.OnMaxData(limit)
	}
	fmt.Println("sender: credit", send.Credit())
	// Output:
	// sender: STREAM_DATA_BLOCKED 1000
	// receiver: FLOW_CONTROL_ERROR (frame STREAM): stream data end 1001 exceeds stream limit 1000
	// receiver: MAX_STREAM_DATA 3000 window 2000 connection window 3000
	// sender: credit 2000
}
