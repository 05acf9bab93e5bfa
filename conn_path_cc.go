package quic

import (
	"time"

	"github.com/quicstack/quic/congestion"
)

// maxIgnoredPackets bounds the probe packets whose fate the congestion
// controller does not learn: PMTU probes (one at a time) and the probing
// packets of paths being validated (a few each).
const maxIgnoredPackets = 16

// pathController is the congestion.Controller the loss detector talks to.
// It passes everything to the active path's controller, cc, which it can
// replace when the connection moves to another path (RFC 9000,
// Section 9.4), and it keeps probe packets out of congestion control:
//
//   - "Loss of a QUIC packet that is carried in a PMTU probe is therefore
//     not a reliable indication of congestion and SHOULD NOT trigger a
//     congestion control reaction" (RFC 9000, Section 14.4);
//   - "A sender can make exceptions for probe packets so that their loss
//     detection is independent and does not unduly cause the congestion
//     controller to reduce its sending rate." (Section 9.4)
//
// It also shows acknowledged and lost packets to path MTU discovery,
// which detects black holes from them.
//
// After the connection moved to a new path with a controller of its own,
// the packets sent before (on the old path) stay out of it: "Packets sent
// on the old path MUST NOT contribute to congestion control or RTT
// estimation for the new path." (RFC 9000, Section 9.4) Their
// acknowledgments and losses are not reported, and the bytes they had in
// flight then do not count against the new path's window.
type pathController struct {
	cc      congestion.Controller
	ignored [maxIgnoredPackets]int64 // packet numbers; -1 is a free slot
	next    int
	taken   int                        // slots in use
	ev      congestion.CongestionEvent // scratch for filtered events
	ack     congestion.AckEvent        // scratch for filtered events
	// since is the first packet number sent with cc, sent at sinceTime or
	// later, and oldInFlight the bytes in flight of packets numbered below
	// it; all zero until the connection first moves (newPath). An ECN-CE
	// report for packets sent before sinceTime is the old path's.
	since       int64
	sinceTime   time.Time
	oldInFlight int
	// onAcked, if set, sees each packet acknowledged, and onLost each
	// packet lost that is not ignored, before the controller does.
	onAcked, onLost func(pn int64, bytes int)
}

func newPathController(cc congestion.Controller) *pathController {
	w := &pathController{cc: cc}
	for i := range w.ignored {
		w.ignored[i] = -1
	}
	return w
}

// ignorePacket keeps packet pn out of the controller's loss reactions.
// With all slots taken the oldest entry goes.
func (w *pathController) ignorePacket(pn int64) {
	if w.ignored[w.next] == -1 {
		w.taken++
	}
	w.ignored[w.next] = pn
	w.next = (w.next + 1) % maxIgnoredPackets
}

// take reports whether pn is ignored and frees its slot.
func (w *pathController) take(pn int64) bool {
	if w.taken == 0 {
		return false // the common case, for every packet acknowledged
	}
	for i, x := range w.ignored {
		if x == pn {
			w.ignored[i] = -1
			w.taken--
			return true
		}
	}
	return false
}

// newPath installs cc, the controller of the path the connection moves
// to at now; since is the number of the first packet sent there and
// inFlight the bytes in flight now, all of them on the old path.
func (w *pathController) newPath(now time.Time, cc congestion.Controller, since int64, inFlight int) {
	w.cc, w.since, w.sinceTime, w.oldInFlight = cc, since, now, inFlight
}

// fromOldPath reports whether packet pn was sent before the connection
// moved to the current path; its bytes leave the old path's flight.
func (w *pathController) fromOldPath(pn int64, bytes int) bool {
	if pn >= w.since {
		return false
	}
	w.oldInFlight = max(0, w.oldInFlight-bytes)
	return true
}

// current returns the bytes in flight of the current path, of
// bytesInFlight in all. Packets that left flight without an event
// (abandoned) cannot keep oldInFlight above what is in flight.
func (w *pathController) current(bytesInFlight int) int {
	w.oldInFlight = min(w.oldInFlight, bytesInFlight)
	return bytesInFlight - w.oldInFlight
}

func (w *pathController) OnPacketSent(now time.Time, pn int64, bytes int, bytesInFlight int) {
	w.cc.OnPacketSent(now, pn, bytes, w.current(bytesInFlight))
}

func (w *pathController) OnAck(now time.Time, ev *congestion.AckEvent) {
	for i := range ev.Acked {
		a := &ev.Acked[i]
		w.take(a.PacketNumber)
		if w.onAcked != nil {
			w.onAcked(a.PacketNumber, a.Bytes)
		}
	}
	if len(ev.Acked) == 0 || ev.Acked[0].PacketNumber >= w.since {
		ev.PriorInFlight, ev.BytesInFlight = w.current(ev.PriorInFlight), w.current(ev.BytesInFlight)
		w.cc.OnAck(now, ev) // nearly always
		return
	}
	e := &w.ack
	*e = congestion.AckEvent{Acked: e.Acked[:0], RTT: ev.RTT, PriorInFlight: ev.PriorInFlight}
	for _, a := range ev.Acked {
		if !w.fromOldPath(a.PacketNumber, a.Bytes) {
			e.Acked = append(e.Acked, a)
			e.AckedBytes += a.Bytes
		}
	}
	e.PriorInFlight, e.BytesInFlight = w.current(e.PriorInFlight), w.current(ev.BytesInFlight)
	if len(e.Acked) > 0 {
		w.cc.OnAck(now, e)
	}
}

func (w *pathController) OnCongestionEvent(now time.Time, ev *congestion.CongestionEvent) {
	e := &w.ev
	*e = congestion.CongestionEvent{Lost: e.Lost[:0], PersistentCongestion: ev.PersistentCongestion}
	if ev.ECN && !ev.SentTime.IsZero() && !ev.SentTime.Before(w.sinceTime) {
		e.ECN, e.SentTime = true, ev.SentTime
	}
	old := false
	for _, l := range ev.Lost {
		if w.take(l.PacketNumber) {
			continue
		}
		if w.fromOldPath(l.PacketNumber, l.Bytes) {
			old = true
			continue
		}
		if w.onLost != nil {
			w.onLost(l.PacketNumber, l.Bytes)
		}
		e.Lost = append(e.Lost, l)
		e.LostBytes += l.Bytes
		if e.SentTime.Before(l.SentTime) {
			e.SentTime = l.SentTime
		}
	}
	// Persistent congestion established with packets of the old path
	// says nothing of the new one.
	e.PersistentCongestion = e.PersistentCongestion && !old
	e.PriorInFlight, e.BytesInFlight = w.current(ev.PriorInFlight), w.current(ev.BytesInFlight)
	if len(e.Lost) == 0 && !e.ECN {
		return
	}
	w.cc.OnCongestionEvent(now, e)
}

// ReleaseIdle passes on to the controller if it is a
// congestion.IdleReleaser.
func (w *pathController) ReleaseIdle() {
	if r, ok := w.cc.(congestion.IdleReleaser); ok {
		r.ReleaseIdle()
	}
}

func (w *pathController) OnAppLimited(now time.Time, bytesInFlight int) {
	w.cc.OnAppLimited(now, bytesInFlight)
}

func (w *pathController) SetMaxDatagramSize(n int) { w.cc.SetMaxDatagramSize(n) }

// CongestionWindow is the current path's window, plus the bytes still in
// flight on the old path, which the connection compares with its bytes
// in flight, all paths together: the old path's packets do not take the
// new path's window.
func (w *pathController) CongestionWindow() int   { return w.cc.CongestionWindow() + w.oldInFlight }
func (w *pathController) PacingRate() uint64      { return w.cc.PacingRate() }
func (w *pathController) State() congestion.State { return w.cc.State() }
