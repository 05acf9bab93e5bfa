package quic

// Priority is the sending priority of a stream, in the model of RFC 9218
// (Extensible Prioritization Scheme for HTTP), which applications other
// than HTTP/3 may use as well: when several streams have data to send, the
// connection sends that of the most urgent ones first; among streams of
// one urgency, non-incremental streams are sent one after another in the
// order of their stream IDs, and incremental streams share the bandwidth,
// taking turns in chunks of 16 KiB (see streamScheduler for how the two
// kinds share one urgency).
//
// New streams have DefaultPriority: urgency 3, RFC 9218's default
// (Section 4.1), and incremental, so that streams nobody prioritizes
// share the bandwidth in turns, as they would without priorities, and a
// stream that always has data (a bulk transfer) cannot hold back one
// opened after it (a control or heartbeat stream of the same
// application). RFC 9218's default for HTTP responses, not incremental
// (Section 4.2), is what package http3 applies to requests without a
// Priority field. The zero Priority is urgency 0, not incremental: the
// most urgent, not the default.
//
// Priorities order only the sending of new stream data: control frames,
// CRYPTO data and retransmissions of lost stream data keep their
// precedence over new data of any stream ("Endpoints SHOULD prioritize
// retransmission of data over sending new data, unless priorities
// specified by the application indicate otherwise", RFC 9000,
// Section 13.3; RFC 9218, Section 12 allows either).
type Priority struct {
	// Urgency is 0 (most urgent) to 7 (least); values above 7 count as 7.
	// "The lowest urgency level (7) is reserved for background tasks"
	// (RFC 9218, Section 4.1).
	Urgency uint8
	// Incremental marks a stream whose data the receiver can use as it
	// arrives, so that it shares the bandwidth with the other incremental
	// streams of its urgency rather than waiting for their end.
	Incremental bool
}

// DefaultPriority is the priority of a new stream: urgency 3,
// incremental.
var DefaultPriority = Priority{Urgency: defaultUrgency, Incremental: true}

const (
	defaultUrgency = 3
	maxUrgency     = 7
	urgencyLevels  = maxUrgency + 1
)

// normalized returns p with its urgency within 0 to 7.
func (p Priority) normalized() Priority {
	p.Urgency = min(p.Urgency, maxUrgency)
	return p
}

// encodePriority packs p for stream.prio: bits 0-2 the urgency, bit 3
// incremental, bit 4 set so that the zero value means DefaultPriority.
func encodePriority(p Priority) uint32 {
	p = p.normalized()
	v := uint32(p.Urgency) | 1<<4
	if p.Incremental {
		v |= 1 << 3
	}
	return v
}

func decodePriority(v uint32) Priority {
	if v == 0 {
		return DefaultPriority
	}
	return Priority{Urgency: uint8(v & 7), Incremental: v&(1<<3) != 0}
}

// setPriority records the priority the application chose and lets the
// connection goroutine apply it (streamsMap.processAttention copies it
// to appPrio). Any goroutine. The goroutine is woken only if the stream
// has data waiting to be sent, which the change may reorder; otherwise it
// applies the change when it next runs, before the stream's next data
// (whose write wakes it): an HTTP/3 server sets each response's priority
// before the handler writes, and that woke the goroutine once per
// request (issue 28).
func (s *stream) setPriority(p Priority) {
	v := encodePriority(p)
	m := s.m
	m.mu.Lock()
	changed := s.prio != v
	s.prio = v
	m.mu.Unlock()
	if changed && s.hasSend {
		s.mu.Lock()
		waiting := s.send.hasData()
		s.mu.Unlock()
		m.noteRead(s, waiting, 0)
	}
}

// priority returns the priority the application set. Any goroutine; the
// connection goroutine uses appPrio instead.
func (s *stream) priority() Priority {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return decodePriority(s.prio)
}

// SetPriority sets the stream's sending priority (see Priority); new
// streams have DefaultPriority. It may be called at any time, from any
// goroutine, and takes effect for the data the connection sends next,
// including data written before. It does not block.
func (s *Stream) SetPriority(p Priority) { s.s.setPriority(p) }

// Priority returns the stream's priority as last set, with the urgency
// within 0 to 7.
func (s *Stream) Priority() Priority { return s.s.priority() }

// SetPriority sets the stream's sending priority; see Stream.SetPriority.
func (s *SendStream) SetPriority(p Priority) { s.s.setPriority(p) }

// Priority returns the stream's priority; see Stream.Priority.
func (s *SendStream) Priority() Priority { return s.s.priority() }
