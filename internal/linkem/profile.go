package linkem

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Profile is a named link: the parameters of both directions. Side A plays
// the user's device and side B the server, so AB is the uplink and BA the
// downlink.
type Profile struct {
	Name string
	// Doc describes the link and gives the sources of its figures.
	Doc    string
	AB, BA Params
}

// Profiles returns the built-in profiles. Their figures and sources are
// in each Doc and in docs/linkem.md. A profile's queues are the default
// (Params.Queue): 100 ms at the rate, at least 15,000 bytes.
func Profiles() []Profile {
	ms := time.Millisecond
	return []Profile{{
		Name: "3g",
		Doc: "3G, average: 780 kbit/s down, 330 kbit/s up, 100 ms each way (200 ms RTT), no loss. " +
			"Source: Facebook's Augmented Traffic Control, profile \"3G - Average\" " +
			"(utils/profiles/3G-Average.json).",
		AB: Params{Delay: 100 * ms, Rate: 330_000},
		BA: Params{Delay: 100 * ms, Rate: 780_000},
	}, {
		Name: "4g",
		Doc: "4G, dense urban, 25th percentile: 10 Mbit/s (10,240 kbit/s) each way, 40 ms RTT. " +
			"Source: Lighthouse's throttling preset desktopDense4G (core/config/constants.js), " +
			"\"Dense 4G 25th percentile\".",
		AB: Params{Delay: 20 * ms, Rate: 10_240_000},
		BA: Params{Delay: 20 * ms, Rate: 10_240_000},
	}, {
		Name: "4g-slow",
		Doc: "Slow 4G (about the 75th percentile of 4G connections, WebPageTest's \"Fast 3G\"): " +
			"1.6 Mbit/s (1,638.4 kbit/s) down, 750 kbit/s up, 150 ms RTT. " +
			"Source: Lighthouse's default mobile throttling, mobileSlow4G (core/config/constants.js).",
		AB: Params{Delay: 75 * ms, Rate: 750_000},
		BA: Params{Delay: 75 * ms, Rate: 1_638_400},
	}, {
		Name: "edge-lossy",
		Doc: "EDGE with loss: 240 kbit/s down with 400 ms delay, 200 kbit/s up with 440 ms delay, " +
			"1% random loss each way. Source: Augmented Traffic Control, profile \"Edge - Lossy\" " +
			"(utils/profiles/Edge-Lossy.json).",
		AB: Params{Delay: 440 * ms, Rate: 200_000, Loss: 0.01},
		BA: Params{Delay: 400 * ms, Rate: 240_000, Loss: 0.01},
	}, {
		Name: "wifi-lossy",
		Doc: "Lossy Wi-Fi: 20 Mbit/s each way, 10 ms ± 5 ms each way (order kept), and bursty loss: " +
			"a Gilbert channel with 2% average loss in bursts of 3 packets on average. " +
			"These figures are chosen, not measured: residual 802.11 losses come in bursts " +
			"that a two-state channel approximates (Cardoso and de Rezende, \"Accurate hidden Markov " +
			"modeling of packet losses in indoor 802.11 networks\", IEEE Communications Letters, 2009), " +
			"and the MAC's retries keep bursts short.",
		AB: Params{Delay: 10 * ms, Jitter: 5 * ms, Rate: 20_000_000, GE: Gilbert(0.02, 3)},
		BA: Params{Delay: 10 * ms, Jitter: 5 * ms, Rate: 20_000_000, GE: Gilbert(0.02, 3)},
	}, {
		Name: "satellite",
		Doc: "Geostationary satellite: 1,000 kbit/s down, 256 kbit/s up, 600 ms RTT (300 ms each way). " +
			"Source: Loadero's \"Satellite phone\" network condition; the delay agrees with the physics " +
			"(a geostationary orbit is 35,786 km up, so ground-satellite-ground takes at least 239 ms).",
		AB: Params{Delay: 300 * ms, Rate: 256_000},
		BA: Params{Delay: 300 * ms, Rate: 1_000_000},
	}}
}

// LookupProfile returns the built-in profile of that name.
func LookupProfile(name string) (Profile, bool) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// maxProfileFile bounds the size of a profile file.
const maxProfileFile = 64 << 10

// LoadProfile returns the built-in profile named s, or else reads the
// profile file at path s (ParseProfile).
func LoadProfile(s string) (Profile, error) {
	if p, ok := LookupProfile(s); ok {
		return p, nil
	}
	f, err := os.Open(s)
	if err != nil {
		return Profile{}, fmt.Errorf("linkem: %q is neither a built-in profile (%s) nor a readable file: %v",
			s, strings.Join(profileNames(), ", "), err)
	}
	defer f.Close()
	p, err := ParseProfile(f)
	if err != nil {
		return Profile{}, fmt.Errorf("%s: %w", s, err)
	}
	if p.Name == "" {
		p.Name = s
	}
	return p, nil
}

func profileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// ParseProfile reads a profile file: one statement per line, applied in
// order; '#' starts a comment.
//
//	name NAME          the profile's name
//	base NAME          start over from the built-in profile NAME
//	both SETTINGS      apply SETTINGS (ParseParams syntax) to both directions
//	ab SETTINGS        apply SETTINGS from A to B (alias: up)
//	ba SETTINGS        apply SETTINGS from B to A (alias: down)
//
// For example:
//
//	# a 4G uplink that loses 1% of its packets in bursts of 2
//	base 4g
//	up burst=1%/2
//
// A file is at most 64 KiB.
func ParseProfile(r io.Reader) (Profile, error) {
	var p Profile
	sc := bufio.NewScanner(io.LimitReader(r, maxProfileFile+1))
	sc.Buffer(make([]byte, 4096), maxProfileFile+1)
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > maxProfileFile {
			return Profile{}, errors.New("linkem: profile file larger than 64 KiB")
		}
		line, _, _ := strings.Cut(sc.Text(), "#")
		verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest = strings.TrimSpace(rest)
		var err error
		switch strings.ToLower(verb) {
		case "":
		case "name":
			p.Name = rest
		case "base":
			b, ok := LookupProfile(rest)
			if !ok {
				err = fmt.Errorf("no built-in profile %q (have %s)", rest, strings.Join(profileNames(), ", "))
			}
			p.AB, p.BA, p.Doc = b.AB, b.BA, b.Doc
		case "both":
			if p.AB, err = ParseParams(p.AB, rest); err == nil {
				p.BA, err = ParseParams(p.BA, rest)
			}
		case "ab", "up":
			p.AB, err = ParseParams(p.AB, rest)
		case "ba", "down":
			p.BA, err = ParseParams(p.BA, rest)
		default:
			err = fmt.Errorf("unknown statement %q (want name, base, both, ab, ba, up or down)", verb)
		}
		if err != nil {
			return Profile{}, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Profile{}, errors.New("linkem: profile file larger than 64 KiB")
		}
		return Profile{}, err
	}
	return p, nil
}

// String writes the profile in the profile file syntax.
func (p Profile) String() string {
	var b strings.Builder
	if p.Name != "" {
		fmt.Fprintf(&b, "name %s\n", p.Name)
	}
	fmt.Fprintf(&b, "ab %s\nba %s\n", p.AB, p.BA)
	return b.String()
}
