package quic

import "time"

// The send path's use of the streamScheduler: which stream's frames go
// into the packet being built. Connection goroutine only.

// appendStreamFrames appends STREAM frames: first the retransmissions of
// lost data, in the order of the losses, then new data of the streams the
// scheduler picks (see Priority). The cost per frame is O(1) or O(log n)
// in the number of streams (see streamScheduler); a stream that cannot
// send leaves the sendable streams until something changes that (credit,
// a loss, the application), so that it costs nothing per packet.
func (m *streamsMap) appendStreamFrames(now time.Time, b []byte, end int) []byte {
	if m.sched == nil {
		return b
	}
	b = m.appendRetransmissions(now, b, end)
	q := m.sched
	for end-len(b) > streamFrameOverhead {
		s := q.next()
		if s == nil {
			break
		}
		before := len(b)
		var more, done bool
		b, more, done = s.appendStreamFrame(now, b, end)
		switch {
		case len(b) > before && more:
			q.sent(s, len(b)-before)
		case len(b) > before:
			m.leaveSendable(s)
		case more && s.waitsForConnCredit():
			// Every stream with new data waits for MAX_DATA, which
			// returns them (onConnCredit); those with retransmissions
			// or a lone FIN to send may still go.
			q.blockOnConn(s)
		default:
			// Room enough and nothing sent: what the stream has to send
			// is control frames (appendControlFrames), or it waits for
			// stream credit (parked by requeue), or for nothing.
			m.leaveSendable(s)
		}
		if s.controlDue() {
			q.control.pushBack(s)
		}
		if done {
			m.retire(s)
		}
	}
	return b
}

// leaveSendable takes s from the sendable streams, parking it if it waits
// for stream credit (requeue).
func (m *streamsMap) leaveSendable(s *stream) {
	m.sched.remove(s)
	s.inSendable = false
	m.requeue(s)
}

// appendRetransmissions appends frames that carry lost stream data again:
// "Endpoints SHOULD prioritize retransmission of data over sending new
// data, unless priorities specified by the application indicate
// otherwise" (RFC 9000, Section 13.3).
func (m *streamsMap) appendRetransmissions(now time.Time, b []byte, end int) []byte {
	l := &m.q().retransmit
	for l.head != nil && end-len(b) > streamFrameOverhead {
		s := l.head
		if !s.hasLostData() {
			l.remove(s)
			continue
		}
		before := len(b)
		var more, done bool
		b, more, done = s.appendStreamFrame(now, b, end)
		if len(b) == before {
			l.remove(s) // reset meanwhile, or no credit known: nothing to resend
		}
		if !more && s.inSendable {
			m.leaveSendable(s)
		}
		if done {
			m.retire(s)
		}
	}
	return b
}

// appendStreamControlFrames appends the control frames of the streams
// that may have some due, and forgets those that have none left.
func (m *streamsMap) appendStreamControlFrames(now time.Time, b []byte, end int) []byte {
	if m.sched == nil {
		return b
	}
	l := &m.sched.control
	for s := l.head; s != nil; {
		next := s.sched.links[listControl].next
		before := len(b)
		b = s.appendControlFrames(now, b, end)
		// A frame that did not fit keeps the stream listed; a stream with
		// a due flag but nothing it may send (reset meanwhile) does not.
		if !s.controlDue() || len(b) == before && end-len(b) > 64 {
			l.remove(s)
			if !s.inSendable {
				s.mu.Lock()
				w := s.wantsToSend()
				s.mu.Unlock()
				if w {
					m.markSendable(s)
				} else {
					m.requeue(s)
				}
			}
		}
		s = next
	}
	return b
}

// unschedule takes s, which is being retired, off every list of the
// scheduler: a stream that waited there (for MAX_DATA above all, which a
// peer may withhold for ever) must not outlive its retirement, or a peer
// could make the list grow with every stream reset meanwhile.
func (m *streamsMap) unschedule(s *stream) {
	if q := m.sched; q != nil {
		q.remove(s)
		q.retransmit.remove(s)
		q.control.remove(s)
	}
	s.inSendable = false
}

// onConnCredit returns the streams that waited for the connection's
// credit to the sendable streams, after a MAX_DATA raised it.
func (m *streamsMap) onConnCredit() {
	if m.sched != nil && m.sched.connBlocked.n > 0 && m.c.connSend.Credit() > 0 {
		m.sched.unblockConn()
	}
}

// noteLost queues s, whose stream data was declared lost, for
// retransmission ahead of new data.
func (m *streamsMap) noteLost(s *stream) {
	if !s.held {
		m.q().retransmit.pushBack(s)
	}
}

// applyPriority takes the priority the application set for s into the
// scheduler.
func (m *streamsMap) applyPriority(s *stream) {
	if m.sched != nil {
		m.sched.setPriority(s, decodePriority(s.appPrio))
	}
}

// q returns the connection's scheduler, made when a stream first has
// something to send (an idle connection drops it: releaseIdle).
func (m *streamsMap) q() *streamScheduler {
	if m.sched == nil {
		m.sched = new(streamScheduler)
		m.sched.init()
	}
	return m.sched
}

// controlDue reports whether s may have control frames to send; the
// test of appendControlFrames, without s.mu: the state it reads is the
// connection goroutine's.
func (s *stream) controlDue() bool {
	if s.ctlPending || s.hasRecv && s.recvFC.ShouldSendUpdate() {
		return true
	}
	_, blocked := s.sendFC.Blocked()
	return s.hasSend && blocked
}

// sendsData reports whether s may still send stream data: not reset, or
// reset with RESET_STREAM_AT, whose reliable part still goes
// (stream_reset_at.go). s.mu held.
func (s *stream) sendsData() bool {
	return s.hasSend && (!s.resetPending && !s.resetSent || s.resetAt)
}

// hasLostData reports whether s has lost data to send again.
func (s *stream) hasLostData() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendsData() && s.creditKnown && len(s.send.lost) > 0
}

// waitsForConnCredit reports whether what s has to send is new data that
// its stream's credit allows and the connection's does not.
func (s *stream) waitsForConnCredit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendsData() && s.creditKnown && len(s.send.lost) == 0 &&
		s.send.sentOffset() < s.send.writeOffset() && s.sendFC.Credit() > 0 && s.m.c.connSend.Credit() == 0
}
