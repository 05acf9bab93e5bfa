package linkem

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseParams applies settings written as text to base and returns the
// result, validated. The text is a list of key=value settings separated
// by spaces, applied in order (a later setting of a key wins):
//
//	delay=20ms          Params.Delay (Go duration syntax)
//	jitter=5ms          Params.Jitter
//	jitterreorder=true  Params.JitterReorder (true or false; a bare
//	                    "jitterreorder" means true)
//	loss=1%             Params.Loss, in percent
//	ge=P/R/LB/LG        Params.GE: P and R, then the loss in Bad and in
//	                    Good, in percent; LB defaults to 100%, LG to 0%
//	                    (netem's "loss gemodel p r 1-h 1-k")
//	burst=2%/3          Params.GE as Gilbert(0.02, 3): the average loss
//	                    and the mean burst length in packets
//	rate=100mbit        Params.Rate: a number with a unit among bit, kbit,
//	                    mbit, gbit (or bps, kbps, mbps, gbps), powers of
//	                    1,000; a bare number is in bit/s
//	queue=150kB         Params.Queue: bytes with a unit among B, kB, MB
//	                    (powers of 1,000) and KiB, MiB (powers of 1,024),
//	                    or a duration (queue=50ms) for the bytes of that
//	                    long at the rate, once every setting is applied
//	reorder=1%          Params.Reorder, in percent
//	reorderdelay=10ms   Params.ReorderDelay
//	dup=0.5%            Params.Duplicate, in percent ("duplicate" too)
//
// Keys are case-insensitive. Params.String writes the same syntax. The
// text is at most 4,096 bytes.
func ParseParams(base Params, text string) (Params, error) {
	if len(text) > 4096 {
		return Params{}, errors.New("linkem: parameter text longer than 4096 bytes")
	}
	p := base
	var queueFor time.Duration
	for _, field := range strings.Fields(text) {
		key, val, hasVal := strings.Cut(field, "=")
		key = strings.ToLower(key)
		if !hasVal && key != "jitterreorder" {
			return Params{}, fmt.Errorf("linkem: %q: want key=value", field)
		}
		var err error
		switch key {
		case "delay":
			p.Delay, err = parseDuration(val)
		case "jitter":
			p.Jitter, err = parseDuration(val)
		case "jitterreorder":
			p.JitterReorder = true
			if hasVal {
				p.JitterReorder, err = strconv.ParseBool(val)
			}
		case "loss":
			p.Loss, err = parsePercent(val)
		case "ge":
			p.GE, err = parseGE(val)
		case "burst":
			p.GE, err = parseBurst(val)
		case "rate":
			p.Rate, err = parseRate(val)
		case "queue":
			queueFor = 0
			if d, derr := time.ParseDuration(val); derr == nil {
				switch {
				case d == 0:
					p.Queue = 0
				case d < 0 || d > MaxDelay:
					err = fmt.Errorf("queue duration %v out of [0, %v]", d, MaxDelay)
				default:
					queueFor = d
				}
			} else {
				p.Queue, err = parseBytes(val)
			}
		case "reorder":
			p.Reorder, err = parsePercent(val)
		case "reorderdelay":
			p.ReorderDelay, err = parseDuration(val)
		case "dup", "duplicate":
			p.Duplicate, err = parsePercent(val)
		default:
			return Params{}, fmt.Errorf("linkem: unknown setting %q", key)
		}
		if err != nil {
			return Params{}, fmt.Errorf("linkem: %s: %v", field, err)
		}
	}
	if queueFor > 0 {
		if p.Rate <= 0 {
			return Params{}, errors.New("linkem: a queue given as a duration needs a rate")
		}
		q := float64(p.Rate) / 8 * queueFor.Seconds()
		if q > MaxQueue {
			return Params{}, fmt.Errorf("linkem: queue of %v at %d bit/s is more than %d bytes", queueFor, p.Rate, MaxQueue)
		}
		p.Queue = max(int(q), 1)
	}
	if err := p.Validate(); err != nil {
		return Params{}, err
	}
	return p, nil
}

// String writes p in the syntax of ParseParams, leaving out the settings
// at their zero value; the zero Params is "".
func (p Params) String() string {
	var b []string
	add := func(k, v string) { b = append(b, k+"="+v) }
	if p.Delay != 0 {
		add("delay", p.Delay.String())
	}
	if p.Jitter != 0 {
		add("jitter", p.Jitter.String())
	}
	if p.JitterReorder {
		add("jitterreorder", "true")
	}
	if p.Loss != 0 {
		add("loss", formatPercent(p.Loss))
	}
	if p.GE != (GilbertElliott{}) {
		add("ge", formatPercent(p.GE.P)+"/"+formatPercent(p.GE.R)+"/"+
			formatPercent(p.GE.LossBad)+"/"+formatPercent(p.GE.LossGood))
	}
	if p.Rate != 0 {
		add("rate", formatRate(p.Rate))
	}
	if p.Queue != 0 {
		add("queue", strconv.Itoa(p.Queue)+"B")
	}
	if p.Reorder != 0 {
		add("reorder", formatPercent(p.Reorder))
	}
	if p.ReorderDelay != 0 {
		add("reorderdelay", p.ReorderDelay.String())
	}
	if p.Duplicate != 0 {
		add("dup", formatPercent(p.Duplicate))
	}
	return strings.Join(b, " ")
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 || d > MaxDelay {
		return 0, fmt.Errorf("duration %v out of [0, %v]", d, MaxDelay)
	}
	return d, nil
}

// parsePercent parses "12.5%" as 0.125.
func parsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, fmt.Errorf("%q: want a percentage such as 1%%", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !finite(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("%q: want a percentage in [0%%, 100%%]", s)
	}
	return f / 100, nil
}

func formatPercent(f float64) string {
	return strconv.FormatFloat(f*100, 'g', -1, 64) + "%"
}

// parseGE parses "P/R[/LB[/LG]]".
func parseGE(s string) (GilbertElliott, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return GilbertElliott{}, errors.New("want P/R[/LOSSBAD[/LOSSGOOD]] in percent")
	}
	g := GilbertElliott{LossBad: 1}
	for i, dst := range []*float64{&g.P, &g.R, &g.LossBad, &g.LossGood}[:len(parts)] {
		v, err := parsePercent(parts[i])
		if err != nil {
			return GilbertElliott{}, err
		}
		*dst = v
	}
	return g, nil
}

// parseBurst parses "LOSS/LEN" into a Gilbert channel.
func parseBurst(s string) (GilbertElliott, error) {
	ls, ns, ok := strings.Cut(s, "/")
	if !ok {
		return GilbertElliott{}, errors.New("want LOSS%/MEANBURST")
	}
	loss, err := parsePercent(ls)
	if err != nil {
		return GilbertElliott{}, err
	}
	if loss >= 1 {
		return GilbertElliott{}, errors.New("burst loss must be below 100%")
	}
	n, err := strconv.ParseFloat(ns, 64)
	if err != nil || !finite(n) || n < 1 || n > 1e6 {
		return GilbertElliott{}, fmt.Errorf("%q: want a mean burst length in [1, 1e6] packets", ns)
	}
	return Gilbert(loss, n), nil
}

var rateUnits = []struct {
	suffix string
	mult   float64
}{
	{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1},
	{"gbps", 1e9}, {"mbps", 1e6}, {"kbps", 1e3}, {"bps", 1},
}

// parseRate parses a rate in bits per second with an optional unit.
func parseRate(s string) (int64, error) {
	num, mult := strings.ToLower(s), 1.0
	for _, u := range rateUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !finite(f) || f < 0 || f*mult > MaxRate {
		return 0, fmt.Errorf("%q: want a rate in [0, 400gbit]", s)
	}
	return int64(math.Round(f * mult)), nil
}

func formatRate(r int64) string {
	for _, u := range rateUnits[:3] {
		if m := int64(u.mult); r%m == 0 {
			return strconv.FormatInt(r/m, 10) + u.suffix
		}
	}
	return strconv.FormatInt(r, 10) + "bit"
}

// parseBytes parses a size in bytes with an optional unit.
func parseBytes(s string) (int, error) {
	num, mult := s, 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"kB", 1e3}, {"MB", 1e6}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !finite(f) || f < 0 || f*mult > MaxQueue {
		return 0, fmt.Errorf("%q: want a size in [0, 1GiB]", s)
	}
	return int(math.Round(f * mult)), nil
}
