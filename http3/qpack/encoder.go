package qpack

import "math"

// DefaultEncoderTableCapacity is the dynamic table capacity (RFC 9204,
// Section 3.2.2) an Encoder uses when EncoderConfig.MaxTableCapacity is zero
// and the peer allows it.
const DefaultEncoderTableCapacity = 4096

// EncoderConfig configures an Encoder. The zero value is ready to use.
type EncoderConfig struct {
	// MaxTableCapacity caps the dynamic table capacity the encoder sets;
	// it uses the smaller of this and the peer's
	// SETTINGS_QPACK_MAX_TABLE_CAPACITY ("it can choose to use a lower
	// dynamic table capacity", RFC 9204, Section 3.2.3). Zero means
	// DefaultEncoderTableCapacity.
	MaxTableCapacity uint64

	// DisableDynamicTable restricts the encoder to the static table and
	// literals. It then never writes to the encoder stream and no field
	// section it produces can block.
	DisableDynamicTable bool
}

// maxUnackedSections bounds the field sections with dynamic table
// references awaiting acknowledgment (24 bytes each).
const maxUnackedSections = 1024

// historySize is the number of recently seen field lines the encoder
// remembers to spot repetition.
const historySize = 64

// Encoder compresses field sections (RFC 9204, Section 2.1) for one HTTP/3
// connection and produces its encoder stream.
//
// Until SetPeerSettings is called the peer's maximum table capacity is
// zero, so only the static table and literals are used (Section 3.2.3: "the
// maximum table capacity is 0 until the encoder processes a SETTINGS frame
// with a non-zero value").
//
// Policy. Field lines that match the static table are indexed. Others are
// inserted into the dynamic table when they are likely to repeat: those
// whose names usually carry the same value on a connection (:authority,
// user-agent, cookie, accept, content-type and similar), and any other
// field line the second time it is seen within the last 64 lines. A field
// line found in the dynamic table is referenced if that cannot block the
// stream (the decoder has acknowledged the entry) or if the stream may
// block within the peer's SETTINGS_QPACK_BLOCKED_STREAMS. Entries are never
// evicted while unacknowledged or referenced by an unacknowledged field
// section (Section 2.1.1), and the oldest quarter of the table is drained
// (Section 2.1.1.1): instead of referencing an entry there, the encoder
// duplicates it or sends a literal.
//
// An Encoder is not safe for concurrent use.
type Encoder struct {
	table encoderTable

	configCap   uint64
	disabled    bool
	settingsSet bool
	peerMaxCap  uint64 // the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY
	peerBlocked uint64 // the peer's SETTINGS_QPACK_BLOCKED_STREAMS
	maxEntries  uint64 // Section 4.5.1.1: floor(MaxTableCapacity / 32)

	huffman bool // use Huffman coding where shorter (tests turn it off)

	encStream []byte // encoder instructions not yet taken by the caller
	lines     []byte // scratch: the field lines of the section being encoded
	partial   []byte // an incomplete decoder instruction
	err       error  // the decoder stream failed; sticky

	history    [historySize]uint32
	historyPos int
}

// NewEncoder returns an Encoder configured by cfg. It uses no dynamic table
// until SetPeerSettings (RFC 9204, Section 3.2.3).
func NewEncoder(cfg EncoderConfig) *Encoder {
	c := cfg.MaxTableCapacity
	if c == 0 {
		c = DefaultEncoderTableCapacity
	}
	return &Encoder{configCap: c, disabled: cfg.DisableDynamicTable, huffman: true}
}

// SetPeerSettings applies the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY and
// SETTINGS_QPACK_BLOCKED_STREAMS (RFC 9204, Section 5) and, if the dynamic
// table is to be used, queues a Set Dynamic Table Capacity instruction
// (Section 4.3.1) on the encoder stream.
//
// A client sending 0-RTT calls it first with the remembered values and then
// with the server's SETTINGS frame. "If the remembered value is non-zero,
// the server MUST send the same non-zero value in its SETTINGS frame. If it
// specifies any other value ... the encoder must treat this as a connection
// error of type QPACK_DECODER_STREAM_ERROR." (Section 3.2.3); the returned
// *Error then carries ErrDecoderStream. A later call with a remembered
// capacity of zero is taken as the first.
func (e *Encoder) SetPeerSettings(maxTableCapacity, blockedStreams uint64) error {
	if e.settingsSet && e.peerMaxCap != 0 {
		if maxTableCapacity != e.peerMaxCap {
			return decoderStreamError("SETTINGS_QPACK_MAX_TABLE_CAPACITY differs from the remembered 0-RTT value")
		}
		if blockedStreams > e.peerBlocked {
			e.peerBlocked = blockedStreams
		}
		return nil
	}
	e.settingsSet = true
	e.peerMaxCap = maxTableCapacity
	e.maxEntries = maxTableCapacity / entryOverhead
	e.peerBlocked = blockedStreams
	if e.disabled {
		return nil
	}
	if c := min(e.configCap, maxTableCapacity); c > 0 {
		e.setCapacity(c)
	}
	return nil
}

// AppendEncoderStream appends the encoder instructions produced since the
// last call to b and returns the extended slice. The caller writes them to
// its encoder stream (stream type 0x02, RFC 9204, Section 4.2); field
// sections encoded before the call may depend on them.
func (e *Encoder) AppendEncoderStream(b []byte) []byte {
	b = append(b, e.encStream...)
	e.encStream = e.encStream[:0]
	return b
}

// BlockedStreams returns the number of streams whose field sections could
// currently be blocked at the decoder: it never exceeds the peer's
// SETTINGS_QPACK_BLOCKED_STREAMS (RFC 9204, Section 2.1.2: "An encoder MUST
// limit the number of streams that could become blocked to the value of
// SETTINGS_QPACK_BLOCKED_STREAMS at all times.").
func (e *Encoder) BlockedStreams() int { return e.table.blockedStreams() }

// sectionState is the state of the field section being encoded.
type sectionState struct {
	stream   uint64
	base     uint64 // Section 4.5.1.2; the insert count when encoding began
	ric      uint64 // one more than the largest absolute index referenced
	minRef   uint64 // the smallest absolute index referenced
	draining uint64 // references go only to entries at or above this index
	canBlock bool   // references to unacknowledged entries are allowed
	dynamic  bool   // the dynamic table is in use
}

// ref records a reference to the entry with absolute index abs.
func (s *sectionState) ref(abs uint64) {
	if abs+1 > s.ric {
		s.ric = abs + 1
	}
	if abs < s.minRef {
		s.minRef = abs
	}
}

// usable reports whether the field section may reference entry abs.
func (e *Encoder) usable(s *sectionState, abs uint64) bool {
	return abs >= s.draining && (abs < e.table.knownReceived || s.canBlock)
}

// EncodeFieldSection appends the encoded field section for fields, sent on
// the stream streamID, to dst and returns the extended slice (RFC 9204,
// Section 4.5). Encoder instructions it needs are queued for
// AppendEncoderStream. The field lines keep their order (Section 2.1: "An
// encoder MUST emit field representations in the order they appear in the
// input field section.").
//
// Once the encoder's buffers have grown to fit, encoding allocates nothing.
func (e *Encoder) EncodeFieldSection(dst []byte, streamID uint64, fields []HeaderField) []byte {
	t := &e.table
	s := sectionState{
		stream: streamID,
		base:   t.insertCount(),
		minRef: math.MaxUint64,
	}
	// "An implementation can directly limit the amount of state memory by
	// only using as many references to the dynamic table as it wishes to
	// track" (Section 7.3): a decoder that stops acknowledging gets
	// static-only field sections.
	if t.capacity > 0 && t.numSections < maxUnackedSections {
		s.dynamic = true
		s.draining = t.drainingIndex()
		// "An encoder MUST limit the number of streams that could become
		// blocked to the value of SETTINGS_QPACK_BLOCKED_STREAMS at all
		// times." (Section 2.1.2)
		s.canBlock = t.streamBlocking(streamID) || uint64(t.blockedStreams()) < e.peerBlocked
	}
	lines := e.lines[:0]
	for _, f := range fields {
		lines = e.encodeField(lines, &s, f)
	}
	if cap(lines) <= maxScratchRetained {
		e.lines = lines
	} else {
		e.lines = nil
	}
	if s.ric > 0 {
		t.addSection(streamID, s.ric, s.minRef)
	}
	dst = appendSectionPrefix(dst, s.ric, s.base, e.maxEntries)
	return append(dst, lines...)
}

// encodeField appends the representation of one field line.
func (e *Encoder) encodeField(b []byte, s *sectionState, f HeaderField) []byte {
	sidx, exact := staticLookup(f.Name, f.Value)
	if exact && !f.NeverIndex {
		return appendIndexedStatic(b, uint64(sidx))
	}
	if s.dynamic && !f.NeverIndex {
		if abs, ok := e.dynamicExact(s, f); ok {
			s.ref(abs)
			return appendIndexedDynamic(b, abs, s.base)
		}
	}
	// A literal, naming the static table, a usable dynamic entry, or
	// neither.
	if sidx >= 0 {
		return appendLiteralStaticName(b, uint64(sidx), f.Value, f.NeverIndex, e.huffman)
	}
	if s.dynamic {
		if abs, ok := e.dynamicName(s, f.Name); ok {
			s.ref(abs)
			return appendLiteralDynamicName(b, abs, s.base, f.Value, f.NeverIndex, e.huffman)
		}
	}
	return appendLiteralName(b, f.Name, f.Value, f.NeverIndex, e.huffman)
}

// dynamicExact finds or creates a dynamic table entry for f that the
// section may reference, inserting or duplicating as the policy allows.
func (e *Encoder) dynamicExact(s *sectionState, f HeaderField) (uint64, bool) {
	t := &e.table
	var newest uint64
	found := false
	abs := t.insertCount()
	for i := len(t.ents) - 1; i >= t.head; i-- {
		abs--
		en := &t.ents[i]
		if en.value != f.Value || en.name != f.Name {
			continue
		}
		if e.usable(s, abs) {
			return abs, true
		}
		if !found {
			newest, found = abs, true
		}
	}
	size := entrySize(f.Name, f.Value)
	if found {
		// The entry exists but is draining or unacknowledged. "Rather than
		// reference such an entry, the encoder can emit a Duplicate
		// instruction (Section 4.3.4) and reference the duplicate instead."
		// (Section 2.1.1.1).
		// The duplicate is unacknowledged: this section may reference it
		// only if the stream may block, but later sections can use it
		// once it is acknowledged.
		if newest < s.draining && t.canFit(size, s.minRef) {
			return e.duplicate(newest), s.canBlock
		}
		return 0, false
	}
	if !e.shouldInsert(f, size) || !t.canFit(size, s.minRef) {
		return 0, false
	}
	abs = e.insert(f.Name, f.Value)
	// The new entry is unacknowledged: referencing it may block the stream.
	return abs, s.canBlock
}

// dynamicName finds a dynamic table entry named name that the section may
// reference.
func (e *Encoder) dynamicName(s *sectionState, name string) (uint64, bool) {
	t := &e.table
	abs := t.insertCount()
	for i := len(t.ents) - 1; i >= t.head; i-- {
		abs--
		if t.ents[i].name == name && e.usable(s, abs) {
			return abs, true
		}
	}
	return 0, false
}

// shouldInsert is the insertion policy: insert field lines that later
// sections are likely to repeat.
func (e *Encoder) shouldInsert(f HeaderField, size uint64) bool {
	// Leave room for other entries: one field line may take at most half
	// the table.
	if size > e.table.capacity/2 {
		return false
	}
	switch f.Name {
	case ":authority", "user-agent", "cookie", "accept", "accept-encoding",
		"accept-language", "content-type", "origin", "referer", "server",
		"access-control-allow-origin", "cache-control", "sec-ch-ua",
		"sec-ch-ua-mobile", "sec-ch-ua-platform", "x-requested-with":
		return true
	case "authorization", "proxy-authorization", "set-cookie",
		"content-length", "date", "etag", "last-modified", "if-none-match",
		"if-modified-since", "x-request-id":
		// Secret, or different in every message.
		return false
	}
	// Anything else is inserted when it repeats: on its second sighting
	// among the last historySize field lines.
	h := fieldHash(f.Name, f.Value)
	for _, v := range e.history {
		if v == h {
			return true
		}
	}
	e.history[e.historyPos] = h
	e.historyPos = (e.historyPos + 1) % historySize
	return false
}

// fieldHash is FNV-1a over name, a separator and value.
func fieldHash(name, value string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	h = (h ^ 0xff) * 16777619
	for i := 0; i < len(value); i++ {
		h = (h ^ uint32(value[i])) * 16777619
	}
	return h | 1 // zero marks an empty history slot
}

// Encoder instructions (RFC 9204, Section 4.3). Each appends to the encoder
// stream and updates the encoder's copy of the table in step with the
// decoder's.

// setCapacity sends Set Dynamic Table Capacity (Section 4.3.1). The caller
// ensures that only evictable entries are evicted.
func (e *Encoder) setCapacity(c uint64) {
	e.encStream = appendInt(e.encStream, 5, 0x20, c)
	e.table.setCapacity(c)
}

// insert enters name and value into the dynamic table, naming a static or
// dynamic entry when one has the name, and returns its absolute index. The
// caller has checked canFit.
func (e *Encoder) insert(name, value string) uint64 {
	if idx := staticNameIndex(name); idx >= 0 {
		return e.insertStaticName(uint64(idx), value)
	}
	t := &e.table
	abs := t.insertCount()
	for i := len(t.ents) - 1; i >= t.head; i-- {
		abs--
		if t.ents[i].name == name {
			// The entry may be evicted by this very insertion: "A new entry
			// can reference an entry in the dynamic table that will be
			// evicted when adding this new entry into the dynamic table."
			// (Section 3.2.2)
			return e.insertDynamicName(abs, value)
		}
	}
	return e.insertLiteral(name, value)
}

// insertStaticName sends Insert with Name Reference to static entry idx
// (Section 4.3.2, T=1).
func (e *Encoder) insertStaticName(idx uint64, value string) uint64 {
	e.encStream = appendInt(e.encStream, 6, 0xc0, idx)
	e.encStream = appendString(e.encStream, 8, 0, value, e.huffman)
	return e.table.insert(staticTable[idx].name, value)
}

// insertDynamicName sends Insert with Name Reference to dynamic entry abs
// (Section 4.3.2, T=0): "In encoder instructions (Section 4.3), a relative
// index of 0 refers to the most recently inserted value in the dynamic
// table." (Section 3.2.5)
func (e *Encoder) insertDynamicName(abs uint64, value string) uint64 {
	t := &e.table
	e.encStream = appendInt(e.encStream, 6, 0x80, t.insertCount()-1-abs)
	e.encStream = appendString(e.encStream, 8, 0, value, e.huffman)
	return t.insert(t.entry(abs).name, value)
}

// insertLiteral sends Insert with Literal Name (Section 4.3.3).
func (e *Encoder) insertLiteral(name, value string) uint64 {
	e.encStream = appendString(e.encStream, 6, 0x40, name, e.huffman)
	e.encStream = appendString(e.encStream, 8, 0, value, e.huffman)
	return e.table.insert(name, value)
}

// duplicate sends Duplicate (Section 4.3.4) of entry abs.
func (e *Encoder) duplicate(abs uint64) uint64 {
	t := &e.table
	e.encStream = appendInt(e.encStream, 5, 0x00, t.insertCount()-1-abs)
	en := t.entry(abs)
	return t.insert(en.name, en.value)
}

// Field line representations (RFC 9204, Section 4.5).

// appendSectionPrefix appends the Encoded Field Section Prefix (Section
// 4.5.1): the Required Insert Count encoded as in Section 4.5.1.1 and the
// Base as a sign and Delta Base (Section 4.5.1.2).
func appendSectionPrefix(b []byte, ric, base, maxEntries uint64) []byte {
	if ric == 0 {
		// "A field section that was encoded without references to the
		// dynamic table can use any value for the Base; setting Delta Base
		// to zero is one of the most efficient encodings."
		return append(b, 0, 0)
	}
	// EncInsertCount = (ReqInsertCount mod (2 * MaxEntries)) + 1
	b = appendInt(b, 8, 0, ric%(2*maxEntries)+1)
	if base >= ric {
		return appendInt(b, 7, 0x00, base-ric)
	}
	return appendInt(b, 7, 0x80, ric-base-1)
}

// appendIndexedStatic appends an Indexed Field Line naming static entry idx
// (Section 4.5.2, T=1).
func appendIndexedStatic(b []byte, idx uint64) []byte {
	return appendInt(b, 6, 0xc0, idx)
}

// appendIndexedDynamic appends an Indexed Field Line (Section 4.5.2, T=0)
// for an entry below base, or an Indexed Field Line with Post-Base Index
// (Section 4.5.3) for one at or above it.
func appendIndexedDynamic(b []byte, abs, base uint64) []byte {
	if abs < base {
		// "a relative index of 0 refers to the entry with absolute index
		// equal to Base - 1." (Section 3.2.5)
		return appendInt(b, 6, 0x80, base-1-abs)
	}
	return appendInt(b, 4, 0x10, abs-base)
}

func nBit(never bool, bit byte) byte {
	if never {
		return bit
	}
	return 0
}

// appendLiteralStaticName appends a Literal Field Line with Name Reference
// to static entry idx (Section 4.5.4, T=1).
func appendLiteralStaticName(b []byte, idx uint64, value string, never, huffman bool) []byte {
	b = appendInt(b, 4, 0x50|nBit(never, 0x20), idx)
	return appendString(b, 8, 0, value, huffman)
}

// appendLiteralDynamicName appends a Literal Field Line with Name Reference
// (Section 4.5.4, T=0) for an entry below base, or with Post-Base Name
// Reference (Section 4.5.5) for one at or above it.
func appendLiteralDynamicName(b []byte, abs, base uint64, value string, never, huffman bool) []byte {
	if abs < base {
		b = appendInt(b, 4, 0x40|nBit(never, 0x20), base-1-abs)
	} else {
		b = appendInt(b, 3, 0x00|nBit(never, 0x08), abs-base)
	}
	return appendString(b, 8, 0, value, huffman)
}

// appendLiteralName appends a Literal Field Line with Literal Name (Section
// 4.5.6).
func appendLiteralName(b []byte, name, value string, never, huffman bool) []byte {
	b = appendString(b, 4, 0x20|nBit(never, 0x10), name, huffman)
	return appendString(b, 8, 0, value, huffman)
}

// HandleDecoderStream processes bytes received on the peer's decoder stream
// (stream type 0x03, RFC 9204, Section 4.4). b may end inside an
// instruction; the rest is awaited. An error is an *Error with Code
// ErrDecoderStream, to be treated as a connection error; after it, the
// Encoder returns the same error forever.
func (e *Encoder) HandleDecoderStream(b []byte) error {
	if e.err != nil {
		return e.err
	}
	buf := b
	if len(e.partial) > 0 {
		e.partial = append(e.partial, b...)
		buf = e.partial
	}
	for len(buf) > 0 {
		n, err := e.handleDecoderInstruction(buf)
		if err == errNeedMore {
			break
		}
		if err != nil {
			e.err = err
			e.partial = nil
			return err
		}
		buf = buf[n:]
	}
	e.partial = keepPartial(e.partial, buf)
	return nil
}

// handleDecoderInstruction processes the decoder instruction at the start
// of b and returns its length.
func (e *Encoder) handleDecoderInstruction(b []byte) (int, error) {
	t := &e.table
	switch {
	case b[0]&0x80 != 0:
		// Section Acknowledgment (Section 4.4.1).
		stream, n, err := readInt(b, 7)
		if err != nil {
			return 0, decoderIntError(err)
		}
		// "If an encoder receives a Section Acknowledgment instruction
		// referring to a stream on which every encoded field section with a
		// non-zero Required Insert Count has already been acknowledged, this
		// MUST be treated as a connection error of type
		// QPACK_DECODER_STREAM_ERROR."
		if !t.ackSection(stream) {
			return 0, decoderStreamError("Section Acknowledgment for a stream with no unacknowledged field section")
		}
		return n, nil
	case b[0]&0x40 != 0:
		// Stream Cancellation (Section 4.4.2).
		stream, n, err := readInt(b, 6)
		if err != nil {
			return 0, decoderIntError(err)
		}
		t.cancelStream(stream)
		return n, nil
	default:
		// Insert Count Increment (Section 4.4.3).
		inc, n, err := readInt(b, 6)
		if err != nil {
			return 0, decoderIntError(err)
		}
		// "An encoder that receives an Increment field equal to zero, or one
		// that increases the Known Received Count beyond what the encoder
		// has sent, MUST treat this as a connection error of type
		// QPACK_DECODER_STREAM_ERROR."
		if inc == 0 {
			return 0, decoderStreamError("Insert Count Increment of zero")
		}
		if inc > t.insertCount()-t.knownReceived {
			return 0, decoderStreamError("Insert Count Increment beyond the entries sent")
		}
		t.setKnownReceived(t.knownReceived + inc)
		return n, nil
	}
}

func decoderIntError(err error) error {
	if err == errNeedMore {
		return err
	}
	return decoderStreamError("integer exceeds 62 bits")
}
