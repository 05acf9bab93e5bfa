package ccsim

import (
	"time"

	"github.com/quicstack/quic/internal/netsim"
)

// A Result is what Run measured. Times are offsets from the start of the
// run; rates are bits per second.
type Result struct {
	// Name is the Scenario's.
	Name string
	// Duration, Interval, MeasureFrom and MeasureTo are the Scenario's,
	// defaults applied.
	Duration, Interval     time.Duration
	MeasureFrom, MeasureTo time.Duration
	Bandwidth              int64
	BDP                    int // bytes
	// Utilization is the fraction of the bottleneck's capacity used by
	// delivered datagrams (wire bytes) over the measurement window.
	Utilization float64
	// AvgQueueDelay and MaxQueueDelay are the queueing delay at the
	// bottleneck over the measurement window, over all datagrams
	// admitted to its queue.
	AvgQueueDelay, MaxQueueDelay time.Duration
	// Link holds the bottleneck's statistics over the measurement
	// window, LinkTotal over the whole run.
	Link, LinkTotal netsim.LinkStats
	// MinRTT is the smallest min_rtt of the flows.
	MinRTT time.Duration
	// Fairness is Jain's fairness index of the flows' goodputs over the
	// measurement window.
	Fairness float64
	// Flows has one entry per flow of the Scenario, in order.
	Flows []FlowResult
	// Events is the number of simulator events processed.
	Events uint64
}

// A FlowResult is what Run measured of one flow.
type FlowResult struct {
	// Name is the Flow's name, or the controller's.
	Name string
	// Controller is the controller's State().Name.
	Controller string
	// Start and Size are the Flow's.
	Start time.Duration
	Size  int64
	// Acked holds the stream bytes first acknowledged in each Interval
	// of the run, from its start.
	Acked []int64
	// Goodput is the flow's goodput over the measurement window: stream
	// bytes acknowledged, each once, in bits per second.
	Goodput float64
	// Sender and Receiver are the endpoints' counters at the end.
	Sender   SenderStats
	Receiver ReceiverStats
	// MinRTT and SmoothedRTT are the sender's estimates at the end.
	MinRTT, SmoothedRTT time.Duration
	// CongestionWindow, Phase and AppLimited are the controller's at
	// the end.
	CongestionWindow int
	Phase            string
	AppLimited       bool
	// CompletionTime is how long a finite transfer took from its start,
	// or 0 if it did not finish.
	CompletionTime time.Duration
	// Err is the text of the first error processing an ACK frame; it is
	// empty unless something is broken.
	Err string
}

// Goodput returns the goodput of flow i between from and to (rounded
// down to multiples of Interval), in bits per second: the stream bytes
// acknowledged for the first time in that span.
func (r *Result) Goodput(i int, from, to time.Duration) float64 {
	i0, i1 := int(max(from, 0)/r.Interval), int(max(to, 0)/r.Interval)
	if i1 <= i0 {
		return 0
	}
	var sum int64
	acked := r.Flows[i].Acked
	for w := i0; w < i1 && w < len(acked); w++ {
		sum += acked[w]
	}
	return float64(sum) * 8 / (time.Duration(i1-i0) * r.Interval).Seconds()
}

// GoodputSeries returns the goodput of flow i in each window of width
// step (a multiple of Interval) from 0 to Duration, for plotting.
func (r *Result) GoodputSeries(i int, step time.Duration) []float64 {
	step = max(step/r.Interval, 1) * r.Interval
	var out []float64
	for t := time.Duration(0); t+step <= r.Duration; t += step {
		out = append(out, r.Goodput(i, t, t+step))
	}
	return out
}

// FairnessBetween returns Jain's fairness index of the flows' goodputs
// between from and to.
func (r *Result) FairnessBetween(from, to time.Duration) float64 {
	x := make([]float64, len(r.Flows))
	for i := range r.Flows {
		x[i] = r.Goodput(i, from, to)
	}
	return JainIndex(x)
}

// TotalGoodput returns the sum of the flows' goodputs over the
// measurement window.
func (r *Result) TotalGoodput() float64 {
	var sum float64
	for i := range r.Flows {
		sum += r.Flows[i].Goodput
	}
	return sum
}

// JainIndex returns Jain's fairness index of x, (Σx)² / (n·Σx²): 1 when
// all are equal, 1/n when one gets everything. It returns 0 for an empty
// x and 1 when all are 0.
func JainIndex(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var sum, sq float64
	for _, v := range x {
		sum += v
		sq += v * v
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(x)) * sq)
}
