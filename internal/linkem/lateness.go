package linkem

import "time"

// lateness is a histogram of how late packets left the emulator compared
// with the time their link scheduled: 1 µs buckets up to 1 ms, 100 µs
// buckets up to 100 ms, and one bucket beyond.
type lateness struct {
	n       uint64
	max     time.Duration
	sum     time.Duration
	buckets [1000 + 990 + 1]uint64
}

func latenessBucket(d time.Duration) int {
	us := int(d / time.Microsecond)
	switch {
	case us < 1000:
		return max(us, 0)
	case us < 100000:
		return 1000 + (us-1000)/100
	default:
		return 1990
	}
}

// bucketTop returns the upper bound of bucket i.
func bucketTop(i int) time.Duration {
	if i < 1000 {
		return time.Duration(i+1) * time.Microsecond
	}
	return time.Duration(1000+(i-999)*100) * time.Microsecond
}

func (h *lateness) add(d time.Duration) {
	h.n++
	h.sum += d
	h.max = max(h.max, d)
	h.buckets[latenessBucket(d)]++
}

// quantile returns an upper bound of the q-quantile (to the bucket's
// width), at most the maximum seen.
func (h *lateness) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q * float64(h.n))
	var seen uint64
	for i, c := range h.buckets {
		seen += c
		if seen > rank {
			return min(bucketTop(i), h.max)
		}
	}
	return h.max
}

// Lateness summarises how late the emulator wrote packets out compared
// with the times their link gave them: the emulator's own error, on top of
// which comes the time the kernel takes to hand it a packet and to take
// one back.
type Lateness struct {
	Count               uint64
	Mean                time.Duration
	P50, P99, P999, Max time.Duration
}

func (h *lateness) summary() Lateness {
	s := Lateness{Count: h.n, Max: h.max, P50: h.quantile(0.5), P99: h.quantile(0.99), P999: h.quantile(0.999)}
	if h.n > 0 {
		s.Mean = h.sum / time.Duration(h.n)
	}
	return s
}
