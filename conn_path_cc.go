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
type pathController struct {
	cc      congestion.Controller
	ignored [maxIgnoredPackets]int64 // packet numbers; -1 is a free slot
	next    int
	taken   int                        // slots in use
	ev      congestion.CongestionEvent // scratch for filtered events
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

func (w *pathController) OnPacketSent(now time.Time, pn int64, bytes int, bytesInFlight int) {
	w.cc.OnPacketSent(now, pn, bytes, bytesInFlight)
}

func (w *pathController) OnAck(now time.Time, ev *congestion.AckEvent) {
	for i := range ev.Acked {
		a := &ev.Acked[i]
		w.take(a.PacketNumber)
		if w.onAcked != nil {
			w.onAcked(a.PacketNumber, a.Bytes)
		}
	}
	w.cc.OnAck(now, ev)
}

func (w *pathController) OnCongestionEvent(now time.Time, ev *congestion.CongestionEvent) {
	e := &w.ev
	*e = congestion.CongestionEvent{Lost: e.Lost[:0], ECN: ev.ECN,
		PersistentCongestion: ev.PersistentCongestion, PriorInFlight: ev.PriorInFlight, BytesInFlight: ev.BytesInFlight}
	if ev.ECN {
		e.SentTime = ev.SentTime
	}
	for _, l := range ev.Lost {
		if w.take(l.PacketNumber) {
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
func (w *pathController) CongestionWindow() int    { return w.cc.CongestionWindow() }
func (w *pathController) PacingRate() uint64       { return w.cc.PacingRate() }
func (w *pathController) State() congestion.State  { return w.cc.State() }
