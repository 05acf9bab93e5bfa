package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ParseSize parses "1000", "64KB", "10MB" or "1GB" (decimal units).
func ParseSize(s string) (uint64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes, optionally with KB, MB or GB", s)
	}
	if n > (1<<44)/mult {
		return 0, fmt.Errorf("size %q too large", s)
	}
	return n * mult, nil
}

// FormatBytes formats n in decimal units: "812 B", "1.2 KB", "10.0 MB".
func FormatBytes(n uint64) string {
	switch {
	case n < 1e3:
		return fmt.Sprintf("%d B", n)
	case n < 1e6:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}

// Mbps formats a rate of n bytes in d as megabits per second.
func Mbps(n uint64, d time.Duration) string {
	if d <= 0 {
		return "- Mbit/s"
	}
	return fmt.Sprintf("%.1f Mbit/s", float64(n)*8/d.Seconds()/1e6)
}

// Percentile returns the p-th percentile (0 < p <= 100) of ds, by the
// nearest-rank method; ds is sorted in place. It returns 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	rank := int(p/100*float64(len(ds))+0.999999) - 1
	return ds[min(max(rank, 0), len(ds)-1)]
}
