package netem

import (
	"slices"
	"testing"
	"time"
)

func datagram(n int) []byte {
	d := make([]byte, n)
	d[0] = 0x40 // a short header
	return d
}

func TestDropList(t *testing.T) {
	sc := Scenario{DropList: [2][]int{ToServer: {2, 3, 4, 5, 6, 7}}}
	k := newDecider(ToServer, &sc, 0, 1)
	var dropped []int
	for i := 1; i <= 10; i++ {
		if v := k.decide(0, datagram(100)); v.drop != "" {
			dropped = append(dropped, i)
		}
	}
	if !slices.Equal(dropped, []int{2, 3, 4, 5, 6, 7}) {
		t.Fatalf("dropped %v", dropped)
	}
	// The other direction is untouched.
	k = newDecider(ToClient, &sc, 0, 1)
	for i := 1; i <= 10; i++ {
		if v := k.decide(0, datagram(100)); v.drop != "" {
			t.Fatalf("to-client datagram %d dropped", i)
		}
	}
}

func TestDropRateAndBurstCap(t *testing.T) {
	sc := Scenario{Drop: [2]Rate{ToServer: {Percent: 30, Burst: 3}}}
	k := newDecider(ToServer, &sc, 0, 7)
	const n = 20000
	drops, run, maxRun := 0, 0, 0
	for range n {
		if k.decide(0, datagram(100)).drop != "" {
			drops++
			run++
			maxRun = max(maxRun, run)
		} else {
			run = 0
		}
	}
	if maxRun > 3 {
		t.Errorf("%d consecutive drops, cap 3", maxRun)
	}
	// 30 % less the forced deliveries after bursts of 3 (0.3^3 of runs).
	if frac := float64(drops) / n; frac < 0.25 || frac > 0.31 {
		t.Errorf("drop fraction %.3f, want about 0.29", frac)
	}
	// Everything dropped with 100 % and burst 3: every fourth passes.
	sc = Scenario{Drop: [2]Rate{ToServer: {Percent: 100, Burst: 3}}}
	k = newDecider(ToServer, &sc, 0, 7)
	for i := 1; i <= 12; i++ {
		if got, want := k.decide(0, datagram(100)).drop != "", i%4 != 0; got != want {
			t.Fatalf("datagram %d dropped=%v, want %v", i, got, want)
		}
	}
}

func TestCorruptOneByteInFirst51(t *testing.T) {
	sc := Scenario{Corrupt: [2]Rate{ToClient: {Percent: 100}}}
	k := newDecider(ToClient, &sc, 0, 3)
	seen := map[int]bool{}
	for range 2000 {
		d := datagram(1200)
		v := k.decide(0, d)
		if v.drop != "" || v.corruptAt < 0 {
			t.Fatalf("verdict %v", v)
		}
		if v.corruptAt > 50 {
			t.Fatalf("corrupted offset %d beyond the first 51 bytes", v.corruptAt)
		}
		if v.corruptTo == d[v.corruptAt] {
			t.Fatalf("byte %d 'corrupted' to the same value", v.corruptAt)
		}
		seen[v.corruptAt] = true
	}
	if len(seen) != 51 {
		t.Errorf("corrupted %d distinct offsets, want all 51", len(seen))
	}
	// A short datagram: offsets within it.
	for range 100 {
		if v := k.decide(0, datagram(3)); v.corruptAt > 2 {
			t.Fatalf("offset %d in a 3-byte datagram", v.corruptAt)
		}
	}
	// Version Negotiation packets are never corrupted.
	vn := []byte{0x80, 0, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 1}
	if v := k.decide(0, vn); v.corruptAt >= 0 || v.drop != "" {
		t.Fatalf("VN packet: %v", v)
	}
	// The drop variant.
	sc.CorruptDrops = true
	if v := k.decide(0, datagram(100)); v.drop != "corrupt" {
		t.Fatalf("CorruptDrops: %v", v)
	}
}

func TestBlackhole(t *testing.T) {
	sc := Scenario{Blackhole: Blackhole{On: 5 * time.Second, Off: 2 * time.Second}}
	k := newDecider(ToClient, &sc, 0, 1)
	for _, c := range []struct {
		at   time.Duration
		drop bool
	}{{0, false}, {4999 * time.Millisecond, false}, {5 * time.Second, true}, {6999 * time.Millisecond, true},
		{7 * time.Second, false}, {12 * time.Second, false}, {13 * time.Second, false}} {
		if got := k.decide(c.at, datagram(10)).drop == "blackhole"; got != c.drop {
			t.Errorf("at %v: dropped=%v, want %v", c.at, got, c.drop)
		}
	}
	// Repeat 2, one direction only.
	sc.Blackhole.Repeat, sc.Blackhole.ToServer = 2, true
	if k.decide(12*time.Second, datagram(10)).drop != "" {
		t.Error("to-client dropped with ToServer only")
	}
	k = newDecider(ToServer, &sc, 0, 1)
	if k.decide(12*time.Second, datagram(10)).drop != "blackhole" {
		t.Error("second period not dropped with Repeat 2")
	}
	if k.decide(19*time.Second, datagram(10)).drop != "" {
		t.Error("third period dropped with Repeat 2")
	}
}

func TestDuplicateReorderJitter(t *testing.T) {
	sc := Scenario{
		Duplicate:    [2]Rate{ToServer: {Percent: 100}},
		Reorder:      [2]Rate{ToServer: {Percent: 100}},
		ReorderDelay: 7 * time.Millisecond,
	}
	k := newDecider(ToServer, &sc, 2*time.Millisecond, 1)
	for range 100 {
		v := k.decide(0, datagram(10))
		if !v.duplicate || v.extraDelay < 7*time.Millisecond || v.extraDelay >= 9*time.Millisecond {
			t.Fatalf("verdict %v", v)
		}
	}
}

// Decisions depend only on the seed and the datagrams of a direction.
func TestDecisionsReproducible(t *testing.T) {
	sc := Scenario{
		Drop:    [2]Rate{{Percent: 10, Burst: 3}, {Percent: 10, Burst: 3}},
		Corrupt: [2]Rate{{Percent: 10}, {Percent: 10}},
	}
	run := func(seed uint64) []string {
		k := newDecider(ToServer, &sc, time.Millisecond, seed)
		var out []string
		for range 500 {
			out = append(out, k.decide(0, datagram(100)).String())
		}
		return out
	}
	a, b := run(42), run(42)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different decisions")
	}
	if slices.Equal(a, run(43)) {
		t.Fatal("different seeds, same decisions")
	}
}
