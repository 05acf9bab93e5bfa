package ackhandler_test

import (
	"fmt"
	"time"

	"github.com/quicstack/quic/ackhandler"
	"github.com/quicstack/quic/wire"
)

// A receiver acknowledges every second ack-eliciting packet at once, and
// a lone one within max_ack_delay.
func ExampleReceivedPackets() {
	t0 := time.Unix(0, 0)
	r := ackhandler.NewReceivedPackets(ackhandler.SpaceApplication)
	var f wire.AckFrame

	r.OnPacket(t0, 0, true, ackhandler.NotECT)
	fmt.Println("after packet 0, ACK due in", r.AckDeadline().Sub(t0))

	now := t0.Add(5 * time.Millisecond)
	r.OnPacket(now, 1, true, ackhandler.NotECT)
	fmt.Println("after packet 1, ACK due now:", !r.AckDeadline().After(now))

	r.AppendAck(now, &f, 3)
	r.OnAckSent()
	fmt.Println("ranges:", f.Ranges, "delay:", wire.AckDelayToDuration(f.Delay, 3))

	now = now.Add(time.Millisecond)
	r.OnPacket(now, 3, true, ackhandler.NotECT) // 2 is missing
	fmt.Println("after packet 3 (gap), ACK due now:", !r.AckDeadline().After(now))
	r.AppendAck(now, &f, 3)
	fmt.Println("ranges:", f.Ranges)
	// Output:
	// after packet 0, ACK due in 25ms
	// after packet 1, ACK due now: true
	// ranges: [{0 1}] delay: 0s
	// after packet 3 (gap), ACK due now: true
	// ranges: [{3 3} {0 1}]
}
