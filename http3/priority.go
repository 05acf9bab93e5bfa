package http3

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/quicstack/quic"
)

// HTTP/3 priorities (RFC 9218). The server sends each response at the
// priority the request asked for: its Priority header field, replaced by
// the client's PRIORITY_UPDATE frames (the latest wins, including one
// that arrived before the request), merged with a Priority field the
// handler sets in the response header, whose parameters override the
// client's ("The absence of a priority parameter in an HTTP response
// indicates the server's disinterest in changing the client-provided
// value", RFC 9218, Section 8). The QUIC connection then sends the
// responses' data in that order (quic.Priority).

// PRIORITY_UPDATE frame types (RFC 9218, Section 7.2).
const (
	framePriorityUpdateRequest = 0xf0700
	framePriorityUpdatePush    = 0xf0701
)

// defaultPriority is the priority of a request without priority
// parameters: "The default is 3" and "The default value of the
// incremental parameter is false" (RFC 9218, Sections 4.1 and 4.2).
var defaultPriority = quic.Priority{Urgency: 3}

// criticalStreamPriority is the priority of the control and QPACK
// streams, whose few bytes must not wait for responses: the most urgent,
// and incremental, so that they take turns with a non-incremental
// response of urgency 0 rather than wait for its end.
var criticalStreamPriority = quic.Priority{Urgency: 0, Incremental: true}

// maxPendingPriorityUpdates bounds the PRIORITY_UPDATE frames a server
// keeps for request streams not opened yet: "Holding PRIORITY_UPDATE
// frames for each stream requires server resources, which can be bounded
// by local implementation policy" (RFC 9218, Section 7). Beyond it the
// oldest is forgotten; one per stream is kept, the latest.
const maxPendingPriorityUpdates = 64

// parsePriority applies the priority parameters of a Priority field value
// (an RFC 8941 Dictionary) to base and returns the result. "Where the
// Dictionary is successfully parsed ... unknown priority parameters,
// priority parameters with out-of-range values, or values of unexpected
// types MUST be ignored" (RFC 9218, Section 4); a value that does not
// parse as a Dictionary is ignored as a whole (ok false, base returned).
func parsePriority(v string, base quic.Priority) (p quic.Priority, ok bool) {
	p = base
	err := parseDictionary(v, func(key string, item sfItem) {
		switch key {
		case "u":
			if item.kind == sfInteger && item.i >= 0 && item.i <= 7 {
				p.Urgency = uint8(item.i)
			}
		case "i":
			if item.kind == sfBoolean {
				p.Incremental = item.b
			}
		}
	})
	if err != nil {
		return base, false
	}
	return p, true
}

// requestPriority returns the priority a request asks for with its
// Priority header fields (combined as one list, RFC 9110, Section 5.3):
// RFC 9218's defaults for absent parameters ("When receiving an HTTP
// request that does not carry these priority parameters, a server SHOULD
// act as if their default values were specified", Section 4).
func requestPriority(h http.Header) quic.Priority {
	vs := h.Values("Priority")
	if len(vs) == 0 {
		return defaultPriority
	}
	v := vs[0]
	for _, s := range vs[1:] {
		v += ", " + s
	}
	p, _ := parsePriority(v, defaultPriority)
	return p
}

// appendPriorityValue appends p as a Priority field value, leaving out
// default parameters: "Omitting a priority parameter is a signal to use
// its default value" (RFC 9218, Section 7).
func appendPriorityValue(b []byte, p quic.Priority) []byte {
	n := len(b)
	if p.Urgency != defaultPriority.Urgency {
		b = append(b, "u="...)
		b = strconv.AppendUint(b, uint64(min(p.Urgency, 7)), 10)
	}
	if p.Incremental {
		if len(b) > n {
			b = append(b, ", "...)
		}
		b = append(b, 'i')
	}
	return b
}

// appendPriorityUpdateFrame appends a PRIORITY_UPDATE frame for request
// stream id.
func appendPriorityUpdateFrame(b []byte, id quic.StreamID, p quic.Priority) []byte {
	v := appendPriorityValue(nil, p)
	b = appendFrameHeader(b, framePriorityUpdateRequest, uint64(varintLen(uint64(id))+len(v)))
	b = appendVarint(b, uint64(id))
	return append(b, v...)
}

// serverPriorities is a server connection's priority state: the request
// streams whose responses PRIORITY_UPDATE frames may still reprioritize,
// and the updates that came before their streams.
type serverPriorities struct {
	mu      sync.Mutex
	streams map[quic.StreamID]*prioritizedStream
	// maxOpened is the highest request stream ID accepted plus 4, 0
	// before the first: an update below it for a stream no longer in
	// streams came too late and is dropped.
	maxOpened quic.StreamID
	// pending holds the parsed priority, not the frame's field value,
	// which may be up to a control frame's 16 KiB.
	pending map[quic.StreamID]quic.Priority
	order   []quic.StreamID // pending's keys, oldest first
	// sweepAt is the size of streams at which accepted forgets the
	// streams that ended: twice those left by the last sweep, plus 16,
	// so that a sweep costs O(1) per stream accepted and streams holds
	// at most about twice the streams in progress.
	sweepAt int
}

// prioritizedStream is a request stream with the priority parameters
// from each source, which decide its priority together.
type prioritizedStream struct {
	str      *quic.Stream
	request  quic.Priority // the request's header, then PRIORITY_UPDATE frames
	updated  bool          // a PRIORITY_UPDATE set request
	response string        // the handler's Priority response field, "" if none
}

// apply sets the stream's priority. sp.mu held.
func (ps *prioritizedStream) apply() {
	p := ps.request
	if ps.response != "" {
		p, _ = parsePriority(ps.response, p)
	}
	ps.str.SetPriority(p)
}

// accepted registers a request stream as it is accepted, in order, so
// that PRIORITY_UPDATE frames for it apply from then on, with the latest
// of those that came before; it is forgotten once the stream ended (by a
// later accepted's sweep, or an update that finds it ended), without a
// watch of its own per stream.
func (sp *serverPriorities) accepted(str *quic.Stream) {
	id := str.StreamID()
	ps := &prioritizedStream{str: str, request: defaultPriority}
	sp.mu.Lock()
	sp.maxOpened = max(sp.maxOpened, id+4)
	if p, ok := sp.pending[id]; ok {
		// "the most recently received PRIORITY_UPDATE frame can be
		// considered as the most up-to-date information that overrides
		// any other signal" (RFC 9218, Section 7).
		ps.request = p
		ps.updated = true
		delete(sp.pending, id)
	}
	if sp.streams == nil {
		sp.streams = make(map[quic.StreamID]*prioritizedStream)
	}
	if len(sp.streams) >= sp.sweepAt {
		for id, ps := range sp.streams {
			if ps.str.Context().Err() != nil {
				delete(sp.streams, id)
			}
		}
		sp.sweepAt = 2*len(sp.streams) + 16
	}
	sp.streams[id] = ps
	sp.mu.Unlock()
}

// open applies the priority the request's header asks for, unless a
// PRIORITY_UPDATE came first, and returns the stream's state.
func (sp *serverPriorities) open(str *quic.Stream, h http.Header) *prioritizedStream {
	id := str.StreamID()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	ps := sp.streams[id]
	if ps == nil {
		ps = &prioritizedStream{str: str} // ended meanwhile: applies to nothing
	}
	if !ps.updated {
		ps.request = requestPriority(h)
	}
	ps.apply()
	return ps
}

// setResponse applies the Priority field of a handler's response header.
func (sp *serverPriorities) setResponse(ps *prioritizedStream, h http.Header) {
	vs := h.Values("Priority")
	if len(vs) == 0 {
		return
	}
	v := vs[0]
	for _, s := range vs[1:] {
		v += ", " + s
	}
	sp.mu.Lock()
	ps.response = v
	ps.apply()
	sp.mu.Unlock()
}

// update applies a PRIORITY_UPDATE frame for request stream id.
func (sp *serverPriorities) update(id quic.StreamID, v string) error {
	// "If a server receives a PRIORITY_UPDATE (type=0xF0700) for a stream
	// ID that is not a request stream, this MUST be treated as a
	// connection error of type H3_ID_ERROR." (RFC 9218, Section 7.2)
	if id%4 != 0 {
		return connError(ErrCodeIDError, "PRIORITY_UPDATE for stream %d, not a request stream", id)
	}
	p, ok := parsePriority(v, defaultPriority)
	if !ok {
		// "Failure to parse the Priority Field Value MAY be treated as a
		// connection error" (Section 7): ignored, as malformed fields are.
		return nil
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if ps := sp.streams[id]; ps != nil && ps.str.Context().Err() != nil {
		delete(sp.streams, id) // the stream is done
		return nil
	} else if ps != nil {
		ps.request, ps.updated = p, true
		ps.apply()
		return nil
	}
	if id < sp.maxOpened {
		return nil // the stream is done, or its request never came
	}
	if sp.pending == nil {
		sp.pending = make(map[quic.StreamID]quic.Priority)
	}
	if _, ok := sp.pending[id]; !ok {
		for len(sp.pending) >= maxPendingPriorityUpdates {
			old := sp.order[0]
			sp.order = append(sp.order[:0], sp.order[1:]...)
			delete(sp.pending, old)
		}
		// Keys of entries applied or dropped since stay in order until
		// they reach its front: drop them now, so that it stays bounded.
		keep := sp.order[:0]
		for _, k := range sp.order {
			if _, ok := sp.pending[k]; ok {
				keep = append(keep, k)
			}
		}
		sp.order = append(keep, id)
	}
	// "Holding PRIORITY_UPDATE frames for each stream requires server
	// resources, which can be bounded by local implementation policy"
	// (RFC 9218, Section 7): the priority is kept, not the frame.
	sp.pending[id] = p
	return nil
}

// handlePriorityUpdate handles a PRIORITY_UPDATE frame received on the
// control stream.
func (c *connection) handlePriorityUpdate(f *frame) error {
	// "Servers MUST NOT send PRIORITY_UPDATE frames of either type. If a
	// client receives a PRIORITY_UPDATE frame, this MUST be treated as a
	// connection error of type H3_FRAME_UNEXPECTED." (RFC 9218, Section 7.2)
	if !c.isServer {
		return connError(ErrCodeFrameUnexpected, "PRIORITY_UPDATE from the server")
	}
	if f.Type == framePriorityUpdatePush {
		// "If a server receives a PRIORITY_UPDATE (type=0xF0701) with a
		// push ID that is greater than the maximum push ID or that has not
		// yet been promised, this MUST be treated as a connection error of
		// type H3_ID_ERROR." We never promise pushes.
		return connError(ErrCodeIDError, "PRIORITY_UPDATE for push ID %d, never promised", f.ID)
	}
	if c.prio == nil {
		return nil
	}
	return c.prio.update(quic.StreamID(f.ID), string(f.Payload))
}

// A PriorityHandle reprioritizes a request in flight: its Update sends
// the server a PRIORITY_UPDATE frame (RFC 9218, Section 7.2) for the
// request stream, whose initial priority is the request's Priority header
// field (for example "u=1, i"). Make one with WithPriorityHandle and send
// the request with the context it returns, through this package's
// Transport (directly or under an http.Client). Its methods may be called
// from any goroutine.
type PriorityHandle struct {
	mu      sync.Mutex
	c       *connection
	str     *quic.Stream
	pending *quic.Priority
}

type priorityHandleKey struct{}

// WithPriorityHandle returns a context for a request, and the handle that
// reprioritizes the request sent with it.
func WithPriorityHandle(ctx context.Context) (context.Context, *PriorityHandle) {
	h := new(PriorityHandle)
	return context.WithValue(ctx, priorityHandleKey{}, h), h
}

// Update asks the server to send the rest of the response at priority p.
// Before the request is sent, the update waits and goes right after the
// request's header. The server may ignore it. It does not block; its
// error is that of writing to the connection's control stream.
func (h *PriorityHandle) Update(p quic.Priority) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.str == nil {
		h.pending = &p
		return nil
	}
	h.str.SetPriority(p)
	return h.c.writeControl(appendPriorityUpdateFrame(nil, h.str.StreamID(), p))
}

// bindPriorityHandle attaches the request's handle, if its context has
// one, to the stream that carries the request, once its header is
// written, and sends the update made before.
func bindPriorityHandle(ctx context.Context, c *connection, str *quic.Stream) {
	h, _ := ctx.Value(priorityHandleKey{}).(*PriorityHandle)
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.c, h.str = c, str
	if p := h.pending; p != nil {
		h.pending = nil
		str.SetPriority(*p)
		c.writeControl(appendPriorityUpdateFrame(nil, str.StreamID(), *p))
	}
}
