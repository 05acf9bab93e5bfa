package quic

import (
	"crypto/tls"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic/wire"
)

// The fleet statistics of a Transport (TransportStats): handshake
// durations, what handshakes negotiated, resumption and 0-RTT outcomes,
// and totals that connections add to as they go (packets and bytes lost,
// migrations, open streams). Every counter is an atomic that a connection
// goroutine updates at most once per loop iteration, and only when its
// value changed, so that reading and updating them costs the data path
// nothing measurable and never allocates.

// HandshakeDurationBuckets are the upper bounds of the buckets of
// TransportStats.HandshakeDuration, from 1 ms to 10 s: a loopback
// handshake takes well under a millisecond of round trips, one across a
// continent 100 to 300 ms, and one with losses or a slow client seconds.
var HandshakeDurationBuckets = [...]time.Duration{
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// A DurationHistogram counts durations in buckets, as Prometheus
// histograms do.
type DurationHistogram struct {
	// Bounds are the buckets' upper bounds, ascending
	// (HandshakeDurationBuckets).
	Bounds []time.Duration
	// Cumulative[i] counts the durations at most Bounds[i]; Count counts
	// them all, so Count - Cumulative[len-1] are above the last bound.
	Cumulative []uint64
	// Count and Sum are the number and the sum of all durations.
	Count uint64
	Sum   time.Duration
}

// durationHistogram is the atomic form of a DurationHistogram over
// HandshakeDurationBuckets.
type durationHistogram struct {
	buckets [len(HandshakeDurationBuckets) + 1]atomic.Uint64 // the last: above every bound
	sum     atomic.Int64                                     // nanoseconds
}

func (h *durationHistogram) observe(d time.Duration) {
	i := 0
	for i < len(HandshakeDurationBuckets) && d > HandshakeDurationBuckets[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sum.Add(int64(d))
}

func (h *durationHistogram) snapshot() DurationHistogram {
	s := DurationHistogram{Bounds: HandshakeDurationBuckets[:], Cumulative: make([]uint64, len(HandshakeDurationBuckets))}
	for i := range h.buckets {
		s.Count += h.buckets[i].Load()
		if i < len(s.Cumulative) {
			s.Cumulative[i] = s.Count
		}
	}
	s.Sum = time.Duration(h.sum.Load())
	return s
}

// keyedCounters counts events by a small integer key (a QUIC version, a
// cipher suite, a key exchange group) without a lock: a fixed table whose
// slots are claimed with compare-and-swap, in the same order by every
// goroutine, so that a key has one slot. Keys beyond its capacity (a peer
// cannot choose more than a handful: versions and groups we support) are
// counted under the key 0, which none of the three uses.
type keyedCounters struct {
	slots [16]struct {
		key   atomic.Uint32 // key+1; 0: free
		count atomic.Uint64
	}
	other atomic.Uint64 // keys that found no slot
}

func (k *keyedCounters) add(key uint32) {
	tag := key + 1
	if tag == 0 {
		// Key 2^32-1 would look free: count it with the overflow.
		k.other.Add(1)
		return
	}
	for i := range k.slots {
		s := &k.slots[i]
		t := s.key.Load()
		if t == 0 && !s.key.CompareAndSwap(0, tag) {
			t = s.key.Load() // claimed meanwhile, maybe for this key
		} else if t == 0 {
			t = tag
		}
		if t == tag {
			s.count.Add(1)
			return
		}
	}
	k.other.Add(1)
}

// keyedSnapshot returns the counts of k by key; only keys seen are
// present.
func keyedSnapshot[K ~uint16 | ~uint32](k *keyedCounters) map[K]uint64 {
	m := map[K]uint64{}
	for i := range k.slots {
		s := &k.slots[i]
		if t := s.key.Load(); t != 0 {
			if n := s.count.Load(); n > 0 {
				m[K(t-1)] += n
			}
		}
	}
	if n := k.other.Load(); n > 0 {
		m[0] += n
	}
	return m
}

// fleetCounters are the atomics behind the fleet fields of
// TransportStats.
type fleetCounters struct {
	handshakeDuration                    durationHistogram
	versions, cipherSuites, keyExchanges keyedCounters
	resumeOffered, resumeAccepted        atomic.Uint64
	zeroRTTOffered                       atomic.Uint64 // see offered0RTT
	migrations                           atomic.Uint64
	packetsLost, bytesLost               atomic.Uint64
	streamsOpen                          atomic.Int64
	antiReplay                           [antiReplayFailed + 1]atomic.Uint64 // by antiReplayOutcome
}

// flushAntiReplay counts the outcome of a connection's anti-replay check
// once it is known, whether or not its handshake completes (a replayed
// flight never completes one). Only the connection's goroutine calls it.
func (f *fleetCounters) flushAntiReplay(st *connState) {
	if o := st.obs.antiReplay; o != antiReplayNone {
		f.antiReplay[o].Add(1)
		st.obs.antiReplay = antiReplayNone
	}
}

// observeHandshake counts what a completed handshake negotiated.
func (f *fleetCounters) observeHandshake(d time.Duration, v wire.Version, tc *tls.ConnectionState, st *connState) {
	f.handshakeDuration.observe(d)
	f.versions.add(uint32(v))
	if tc != nil {
		f.cipherSuites.add(uint32(tc.CipherSuite))
		f.keyExchanges.add(uint32(tc.CurveID))
		if tc.DidResume {
			f.resumeAccepted.Add(1)
		}
	}
	if st.tls.ResumptionOffered() {
		f.resumeOffered.Add(1)
	}
}

// offered0RTT reports whether 0-RTT was offered in a connection: on a
// client, 0-RTT keys were installed; on a server, the ClientHello asked
// for it or 0-RTT packets arrived.
func offered0RTT(st *connState) bool {
	return st.used0RTT || st.obs.offered0RTT || st.obs.rx0RTT || st.tls.EarlyDataOffered()
}

// publishFleet adds to the Transport's totals what changed in a
// connection's statistics since it last published them (prev): packets
// and bytes lost, migrations and open streams. Only the connection's
// goroutine calls it.
func (f *fleetCounters) publishFleet(prev, cur *ConnectionStats) {
	if d := cur.PacketsLost - prev.PacketsLost; d != 0 {
		f.packetsLost.Add(d)
	}
	if d := cur.BytesLost - prev.BytesLost; d != 0 {
		f.bytesLost.Add(d)
	}
	if d := cur.Migrations - prev.Migrations; d > 0 {
		f.migrations.Add(uint64(d))
	}
	if d := cur.OpenStreams - prev.OpenStreams; d != 0 {
		f.streamsOpen.Add(int64(d))
	}
}

// fill sets the fleet fields of s.
func (f *fleetCounters) fill(s *TransportStats) {
	s.HandshakeDuration = f.handshakeDuration.snapshot()
	s.Versions = keyedSnapshot[wire.Version](&f.versions)
	s.CipherSuites = keyedSnapshot[uint16](&f.cipherSuites)
	s.KeyExchanges = keyedSnapshot[tls.CurveID](&f.keyExchanges)
	s.ResumptionOffered = f.resumeOffered.Load()
	s.ResumptionAccepted = f.resumeAccepted.Load()
	s.ZeroRTTOffered = f.zeroRTTOffered.Load()
	s.Migrations = f.migrations.Load()
	s.PacketsLost = f.packetsLost.Load()
	s.BytesLost = f.bytesLost.Load()
	s.StreamsOpen = f.streamsOpen.Load()
	s.AntiReplayAdmitted = f.antiReplay[antiReplayAdmitted].Load()
	s.AntiReplayReplayed = f.antiReplay[antiReplayReplayed].Load()
	s.AntiReplayTooOld = f.antiReplay[antiReplayTooOld].Load()
	s.AntiReplayFailures = f.antiReplay[antiReplayFailed].Load()
}

// Add adds o's counts to s, for a total over several Transports (an
// http3.Server's, or a process's sockets). Both histograms must use
// HandshakeDurationBuckets, as every Transport's do.
func (s *TransportStats) Add(o TransportStats) {
	s.HandshakesStarted += o.HandshakesStarted
	s.HandshakesCompleted += o.HandshakesCompleted
	s.HandshakesFailed += o.HandshakesFailed
	s.ZeroRTTOffered += o.ZeroRTTOffered
	s.ZeroRTTAccepted += o.ZeroRTTAccepted
	s.ZeroRTTRejected += o.ZeroRTTRejected
	s.ResumptionOffered += o.ResumptionOffered
	s.ResumptionAccepted += o.ResumptionAccepted
	s.RetriesSent += o.RetriesSent
	s.StatelessResetsSent += o.StatelessResetsSent
	s.VersionNegotiationsSent += o.VersionNegotiationsSent
	s.ReceiveBufferDrops += o.ReceiveBufferDrops
	s.ReadErrorsIgnored += o.ReadErrorsIgnored
	s.TokensReplayed += o.TokensReplayed
	s.ConnectionsOpen += o.ConnectionsOpen
	s.StreamsOpen += o.StreamsOpen
	s.Migrations += o.Migrations
	s.AntiReplayAdmitted += o.AntiReplayAdmitted
	s.AntiReplayReplayed += o.AntiReplayReplayed
	s.AntiReplayTooOld += o.AntiReplayTooOld
	s.AntiReplayFailures += o.AntiReplayFailures
	s.PacketsLost += o.PacketsLost
	s.BytesLost += o.BytesLost
	s.PacketsDropped = addCounts(s.PacketsDropped, o.PacketsDropped)
	s.Versions = addCounts(s.Versions, o.Versions)
	s.CipherSuites = addCounts(s.CipherSuites, o.CipherSuites)
	s.KeyExchanges = addCounts(s.KeyExchanges, o.KeyExchanges)
	h, oh := &s.HandshakeDuration, &o.HandshakeDuration
	if h.Bounds == nil {
		h.Bounds = HandshakeDurationBuckets[:]
		h.Cumulative = make([]uint64, len(HandshakeDurationBuckets))
	}
	for i := range min(len(h.Cumulative), len(oh.Cumulative)) {
		h.Cumulative[i] += oh.Cumulative[i]
	}
	h.Count += oh.Count
	h.Sum += oh.Sum
}

// addCounts adds the counts of b to a, which it makes if nil.
func addCounts[K comparable](a, b map[K]uint64) map[K]uint64 {
	if a == nil {
		a = make(map[K]uint64, len(b))
	}
	for k, n := range b {
		a[k] += n
	}
	return a
}
