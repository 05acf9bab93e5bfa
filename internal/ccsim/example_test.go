package ccsim_test

import (
	"fmt"
	"time"

	"github.com/quicstack/quic/congestion"
	"github.com/quicstack/quic/internal/ccsim"
)

// Two BBR flows share a 10 Mbit/s link; the second starts two seconds
// after the first.
func ExampleRun() {
	r := ccsim.Run(ccsim.Scenario{
		Name:        "two flows",
		Bandwidth:   10_000_000,
		RTT:         30 * time.Millisecond,
		BufferBDP:   2,
		Duration:    20 * time.Second,
		MeasureFrom: 5 * time.Second,
		Seed:        1,
		Flows: []ccsim.Flow{
			{Controller: congestion.NewBBR},
			{Controller: congestion.NewBBR, Start: 2 * time.Second},
		},
	})
	fmt.Println("link busy over 90% of the time:", r.Utilization > 0.9)
	fmt.Println("fair share (Jain's index above 0.9):", r.Fairness > 0.9)
	fmt.Println("min RTT at least the path's 30 ms:", r.MinRTT >= 30*time.Millisecond)
	// Output:
	// link busy over 90% of the time: true
	// fair share (Jain's index above 0.9): true
	// min RTT at least the path's 30 ms: true
}
