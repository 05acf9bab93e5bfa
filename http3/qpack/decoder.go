package qpack

import "strconv"

// DefaultMaxFieldSectionSize is the decoded field section size limit (RFC
// 9114, Section 4.2.2; RFC 9204, Section 7.4) a Decoder applies when
// DecoderConfig.MaxFieldSectionSize is zero: 1 MiB, as net/http's
// DefaultMaxHeaderBytes.
const DefaultMaxFieldSectionSize = 1 << 20

// DecoderConfig configures a Decoder. The zero value is a decoder without a
// dynamic table, as an HTTP/3 endpoint that sends neither QPACK setting.
type DecoderConfig struct {
	// MaxTableCapacity is the SETTINGS_QPACK_MAX_TABLE_CAPACITY this
	// endpoint sends (RFC 9204, Section 5): the largest dynamic table
	// capacity the peer's encoder may set. It bounds the memory the dynamic
	// table holds. Zero, the RFC's default, disables the dynamic table.
	MaxTableCapacity uint64

	// MaxBlockedStreams is the SETTINGS_QPACK_BLOCKED_STREAMS this endpoint
	// sends (RFC 9204, Section 5): how many streams may wait for dynamic
	// table updates at once. Zero is the RFC's default.
	MaxBlockedStreams uint64

	// MaxFieldSectionSize bounds the size of a decoded field section,
	// counted as in RFC 9114, Section 4.2.2 (see HeaderField.Size); a
	// larger one yields ErrFieldSectionTooLarge. An HTTP/3 endpoint
	// advertises it as SETTINGS_MAX_FIELD_SECTION_SIZE. Zero means
	// DefaultMaxFieldSectionSize.
	MaxFieldSectionSize uint64

	// ValidName and ValidValue, if not nil, check the name and the value
	// of each field line decoded: a field section with a line they
	// refuse fails with an *InvalidFieldError, once it has been processed
	// and acknowledged like any other (the dynamic table state stays in
	// step). A dynamic table entry is checked once, when it is inserted,
	// and the result kept with it, so that a section that references an
	// entry many times costs no more than its references; literals and
	// static table entries (short ones) are checked where they occur. An
	// HTTP/3 endpoint puts the field syntax of RFC 9114, Section 4.2 here.
	ValidName, ValidValue func(string) bool
}

// An InvalidFieldError reports a decoded field line that
// DecoderConfig.ValidName or ValidValue refused. The field section was
// processed and acknowledged; the HTTP/3 layer treats the message as
// malformed (RFC 9114, Section 4.1.2: "the inclusion of invalid characters
// in field names or values").
type InvalidFieldError struct {
	Name  string // the field name (the refused one if Value is false)
	Value bool   // the value was refused, not the name
}

func (e *InvalidFieldError) Error() string {
	if e.Value {
		return "qpack: invalid value of field " + strconv.Quote(e.Name)
	}
	return "qpack: invalid field name " + strconv.Quote(e.Name)
}

// Decoder decompresses field sections (RFC 9204, Section 2.2) for one
// HTTP/3 connection, maintains the dynamic table from the peer's encoder
// stream and produces the decoder stream.
//
// Memory is bounded by the configuration: the dynamic table by
// MaxTableCapacity (entries are a little larger than their RFC size, which
// already includes 32 bytes of overhead), an incomplete encoder instruction
// by about four times MaxTableCapacity (a Huffman-coded string is at most
// 3.75 times its decoded length, and an entry larger than the capacity is
// refused as soon as its length is known), blocked streams by
// MaxBlockedStreams records of 16 bytes (the blocked field sections stay
// with the caller) plus 8 bytes for each unblocked stream AppendUnblocked
// has not reported yet, and a decoded field section by
// MaxFieldSectionSize.
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	table dynamicTable

	maxCap     uint64
	maxBlocked uint64
	maxSection uint64
	maxEntries uint64 // Section 4.5.1.1: floor(MaxTableCapacity / 32)

	validName, validValue func(string) bool

	// knownReceived is the decoder's view of the encoder's Known Received
	// Count (Section 2.1.4): the insertions it has acknowledged so far,
	// explicitly or through Section Acknowledgments.
	knownReceived uint64

	// blocked are the streams whose field section waits for insertions
	// (Section 2.2.1); unblocked those the encoder stream has since
	// unblocked and AppendUnblocked has not reported yet. Only blocked
	// counts against MaxBlockedStreams.
	blocked   []blockedStream
	unblocked []uint64
	out       []byte // decoder instructions not yet taken by the caller
	partial   []byte // an incomplete encoder instruction
	// outAcks counts the Section Acknowledgments in out; outUrgent is
	// set when out holds an instruction AppendDecoderStreamBatched does
	// not hold back (a Stream Cancellation, or a Section Acknowledgment
	// that raised knownReceived).
	outAcks   int
	outUrgent bool
	err       error // the encoder stream failed; sticky

	// Scratch space for DecodeFieldSection: literal bytes and where they
	// belong.
	lit   []byte
	spans []literalSpan

	strictRIC bool // tests: reject a Required Insert Count above the largest reference
}

type blockedStream struct {
	stream uint64
	ric    uint64
}

// literalSpan locates the literal name and value of field line i in the
// literal buffer; name end 0 means the name came from a table.
type literalSpan struct {
	i                    int // index of the field line in dst
	nameStart, nameEnd   int
	valueStart, valueEnd int
	litName, litValue    bool // the name, the value is a literal (maybe empty)
}

// maxScratchRetained is the largest literal buffer a Decoder keeps between
// field sections; a larger one, grown by an unusually big section, is
// dropped after use.
const maxScratchRetained = 64 << 10

// NewDecoder returns a Decoder configured by cfg. Its dynamic table starts
// empty with capacity zero (RFC 9204, Section 3.2.2: "The initial capacity
// of the dynamic table is zero.") until the encoder stream sets it.
func NewDecoder(cfg DecoderConfig) *Decoder {
	d := &Decoder{
		maxCap:     cfg.MaxTableCapacity,
		maxBlocked: cfg.MaxBlockedStreams,
		maxSection: cfg.MaxFieldSectionSize,
		maxEntries: cfg.MaxTableCapacity / entryOverhead,
		validName:  cfg.ValidName,
		validValue: cfg.ValidValue,
	}
	if d.maxSection == 0 {
		d.maxSection = DefaultMaxFieldSectionSize
	}
	return d
}

// AppendDecoderStream appends the decoder instructions produced since the
// last call to b and returns the extended slice; the caller writes them to
// its decoder stream (stream type 0x03, RFC 9204, Section 4.2). They are the
// Section Acknowledgments and Stream Cancellations queued by
// DecodeFieldSection and CancelStream, in that order, followed by an Insert
// Count Increment (Section 4.4.3) covering every insertion received on the
// encoder stream and not yet acknowledged: "The decoder should send an
// Increment value that increases the Known Received Count to the total
// number of dynamic table insertions and duplications processed so far."
// Deferring the call until after a batch of field sections lets
// acknowledgments replace increments (Section 2.2.2.3).
func (d *Decoder) AppendDecoderStream(b []byte) []byte {
	b = append(b, d.out...)
	d.out = d.out[:0]
	d.outAcks, d.outUrgent = 0, false
	if ic := d.table.insertCount(); ic > d.knownReceived {
		b = appendInt(b, 6, 0x00, ic-d.knownReceived)
		d.knownReceived = ic
	}
	return b
}

// AppendDecoderStreamBatched is AppendDecoderStream, except that it holds
// back Section Acknowledgments that tell the encoder nothing it needs at
// once: while the pending instructions are only fewer than maxAcks such
// acknowledgments, none of which raises the encoder's Known Received
// Count, and no Insert Count Increment is due, it appends nothing and
// returns b and the number held. RFC 9204 sets no deadline for a Section
// Acknowledgment (Section 4.4.1); what a late one delays is only the
// encoder's release of the entries the sections reference (Section
// 2.1.1), while every insertion is acknowledged at once (by an
// acknowledgment that raises the Known Received Count, or an Insert Count
// Increment), so no later field section of the encoder's blocks longer.
// The instructions held go out, in their order, with the next call that
// appends anything, or with AppendDecoderStream. The caller bounds how long
// they wait (the HTTP/3 connection flushes them within ackHoldMax).
func (d *Decoder) AppendDecoderStreamBatched(b []byte, maxAcks int) ([]byte, int) {
	if !d.outUrgent && d.outAcks < maxAcks && d.table.insertCount() <= d.knownReceived {
		return b, d.outAcks
	}
	return d.AppendDecoderStream(b), 0
}

// CancelStream abandons the field sections of a stream, for example when
// the stream was reset: it forgets the stream if it was blocked and queues
// a Stream Cancellation instruction (RFC 9204, Section 2.2.2.2: "When an
// endpoint receives a stream reset before the end of a stream or before all
// encoded field sections are processed on that stream, or when it abandons
// reading of a stream, it generates a Stream Cancellation instruction").
// With MaxTableCapacity zero the instruction is omitted, as the same
// section allows.
func (d *Decoder) CancelStream(streamID uint64) {
	d.unblock(streamID)
	if d.maxCap > 0 {
		d.out = appendInt(d.out, 6, 0x40, streamID)
		d.outUrgent = true
	}
}

// AppendUnblocked appends to dst the streams that were blocked and whose
// field sections can now be decoded, forgets them, and returns the extended
// slice. The caller calls DecodeFieldSection again for each; it is useful
// after HandleEncoderStream. A stream stops counting as blocked as soon as
// HandleEncoderStream has received the insertions it waits for, whether
// or not this reports it; a caller that decodes blocked sections again
// by other means should still call it from time to time (or CancelStream
// the streams it abandons), since the streams not yet reported are kept
// for it.
func (d *Decoder) AppendUnblocked(dst []uint64) []uint64 {
	d.releaseBlocked()
	dst = append(dst, d.unblocked...)
	d.unblocked = d.unblocked[:0]
	return dst
}

// releaseBlocked moves the streams whose Required Insert Count the Insert
// Count has reached from blocked to unblocked: "When the Required Insert
// Count is less than or equal to the decoder's Insert Count, the field
// section can be processed immediately." (Section 2.2.1)
func (d *Decoder) releaseBlocked() {
	ic := d.table.insertCount()
	j := 0
	for _, b := range d.blocked {
		if b.ric <= ic {
			d.unblocked = append(d.unblocked, b.stream)
			continue
		}
		d.blocked[j] = b
		j++
	}
	d.blocked = d.blocked[:j]
}

// BlockedStreams returns the number of streams currently blocked (RFC 9204,
// Section 2.2.1): waiting for insertions the encoder stream has not
// delivered yet. It never exceeds MaxBlockedStreams.
func (d *Decoder) BlockedStreams() int { return len(d.blocked) }

// unblock forgets stream as blocked or unblocked.
func (d *Decoder) unblock(stream uint64) {
	for i, b := range d.blocked {
		if b.stream == stream {
			d.blocked = append(d.blocked[:i], d.blocked[i+1:]...)
			break
		}
	}
	for i, s := range d.unblocked {
		if s == stream {
			d.unblocked = append(d.unblocked[:i], d.unblocked[i+1:]...)
			break
		}
	}
}

// DecodeFieldSection decodes the encoded field section b (the payload of a
// HEADERS frame received on stream streamID, RFC 9204, Section 4.5),
// appends its field lines to dst and returns the extended slice.
//
// If the section needs dynamic table entries not received yet it returns
// dst unchanged and ErrBlocked; the caller keeps b and decodes it again
// when AppendUnblocked reports the stream (Section 2.2.1). Having more
// streams blocked than MaxBlockedStreams is an error: "If a decoder
// encounters more blocked streams than it promised to support, it MUST
// treat this as a connection error of type QPACK_DECOMPRESSION_FAILED."
// (Section 2.1.2)
//
// A section larger than MaxFieldSectionSize returns dst unchanged and
// ErrFieldSectionTooLarge; one with a field line that ValidName or
// ValidValue refuses returns dst unchanged and an *InvalidFieldError. Both
// are processed and acknowledged first. Any malformed input returns an
// *Error with Code ErrDecompressionFailed.
//
// Names and values from the tables share the tables' strings; all literal
// strings of one section share a single allocation, so decoding a section
// allocates at most once (not at all if every line is indexed), once dst
// has room.
func (d *Decoder) DecodeFieldSection(streamID uint64, b []byte, dst []HeaderField) ([]HeaderField, error) {
	if d.err != nil {
		return dst, d.err
	}
	ric, base, n, err := d.readPrefix(b)
	if err != nil {
		return dst, err
	}
	if ric > d.table.insertCount() {
		// "When the Required Insert Count is less than or equal to the
		// decoder's Insert Count, the field section can be processed
		// immediately. Otherwise, the stream on which the field section was
		// received becomes blocked." (Section 2.2.1)
		for _, bs := range d.blocked {
			if bs.stream == streamID {
				return dst, ErrBlocked
			}
		}
		if uint64(len(d.blocked)) >= d.maxBlocked {
			return dst, decompressionFailed("too many blocked streams")
		}
		d.blocked = append(d.blocked, blockedStream{stream: streamID, ric: ric})
		return dst, ErrBlocked
	}
	d.unblock(streamID)
	start := len(dst)
	dst, maxRef, err := d.decodeLines(b[n:], ric, base, dst)
	if _, invalid := err.(*InvalidFieldError); err != nil && err != ErrFieldSectionTooLarge && !invalid {
		return dst[:start], err
	}
	if d.strictRIC && ric > 0 && maxRef+1 != ric {
		return dst[:start], decompressionFailed("Required Insert Count larger than needed")
	}
	if ric > 0 {
		// "After processing an encoded field section whose declared
		// Required Insert Count is not zero, the decoder emits a Section
		// Acknowledgment instruction." (Section 4.4.1)
		d.out = appendInt(d.out, 7, 0x80, streamID)
		d.outAcks++
		if ric > d.knownReceived {
			d.knownReceived = ric
			d.outUrgent = true
		}
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// readPrefix parses the Encoded Field Section Prefix (Section 4.5.1) and
// returns the Required Insert Count, the Base and the prefix length.
func (d *Decoder) readPrefix(b []byte) (ric, base uint64, n int, err error) {
	enc, n1, err := readInt(b, 8)
	if err != nil {
		return 0, 0, 0, fieldIntError(err)
	}
	ric, err = d.requiredInsertCount(enc)
	if err != nil {
		return 0, 0, 0, err
	}
	if n1 >= len(b) {
		return 0, 0, 0, decompressionFailed("truncated field section prefix")
	}
	sign := b[n1]&0x80 != 0
	delta, n2, err := readInt(b[n1:], 7)
	if err != nil {
		return 0, 0, 0, fieldIntError(err)
	}
	if !sign {
		// Base = ReqInsertCount + DeltaBase
		base = ric + delta
	} else {
		// "An endpoint MUST treat a field block with a Sign bit of 1 as
		// invalid if the value of Required Insert Count is less than or
		// equal to the value of Delta Base."
		if ric <= delta {
			return 0, 0, 0, decompressionFailed("negative Base")
		}
		// Base = ReqInsertCount - DeltaBase - 1
		base = ric - delta - 1
	}
	return ric, base, n1 + n2, nil
}

// requiredInsertCount reconstructs the Required Insert Count from its
// encoding with the algorithm of Section 4.5.1.1: "If the decoder encounters
// a value of EncodedInsertCount that could not have been produced by a
// conformant encoder, it MUST treat this as a connection error of type
// QPACK_DECOMPRESSION_FAILED."
func (d *Decoder) requiredInsertCount(enc uint64) (uint64, error) {
	if enc == 0 {
		return 0, nil
	}
	fullRange := 2 * d.maxEntries
	if enc > fullRange {
		return 0, decompressionFailed("invalid Required Insert Count")
	}
	maxValue := d.table.insertCount() + d.maxEntries
	maxWrapped := maxValue / fullRange * fullRange
	ric := maxWrapped + enc - 1
	if ric > maxValue {
		if ric <= fullRange {
			return 0, decompressionFailed("invalid Required Insert Count")
		}
		ric -= fullRange
	}
	if ric == 0 {
		return 0, decompressionFailed("invalid Required Insert Count")
	}
	return ric, nil
}

// decodeLines decodes the field line representations. It returns the
// largest absolute index referenced. On ErrFieldSectionTooLarge it has
// still parsed and checked every line.
func (d *Decoder) decodeLines(b []byte, ric, base uint64, dst []HeaderField) ([]HeaderField, uint64, error) {
	d.lit = d.lit[:0]
	d.spans = d.spans[:0]
	start := len(dst)
	var size uint64
	tooLarge := false
	var maxRef uint64
	// resolve turns a relative or post-Base index into an entry, checking
	// Section 2.2.3: "If the decoder encounters a reference in a field line
	// representation to a dynamic table entry that has already been evicted
	// or that has an absolute index greater than or equal to the declared
	// Required Insert Count (Section 4.5.1), it MUST treat this as a
	// connection error of type QPACK_DECOMPRESSION_FAILED."
	resolve := func(idx uint64, postBase bool) (*dynEntry, error) {
		var abs uint64
		if postBase {
			// Base and idx are below 2^63 and 2^62: no overflow.
			abs = base + idx
		} else {
			if idx >= base {
				return nil, decompressionFailed("relative index below zero")
			}
			abs = base - 1 - idx
		}
		if abs >= ric {
			return nil, decompressionFailed("reference at or above the Required Insert Count")
		}
		e := d.table.entry(abs)
		if e == nil {
			return nil, decompressionFailed("reference to an evicted entry")
		}
		if abs > maxRef {
			maxRef = abs
		}
		return e, nil
	}
	// bad is the first field line ValidName or ValidValue refused; a
	// dynamic entry's result was kept when it was inserted.
	var bad *InvalidFieldError
	check := d.validName != nil || d.validValue != nil
	refuse := func(name string, value bool) {
		if bad == nil {
			bad = &InvalidFieldError{Name: name, Value: value}
		}
	}
	checkStatic := func(name, value string, withValue bool) {
		if d.validName != nil && !d.validName(name) {
			refuse(name, false)
		} else if withValue && d.validValue != nil && !d.validValue(value) {
			refuse(name, true)
		}
	}
	checkEntry := func(e *dynEntry, withValue bool) {
		if e.invalid&invalidName != 0 {
			refuse(e.name, false)
		} else if withValue && e.invalid&invalidValue != 0 {
			refuse(e.name, true)
		}
	}
	for len(b) > 0 {
		var name, value string
		never := false
		var span literalSpan
		c := b[0]
		switch {
		case c&0x80 != 0:
			// Indexed Field Line (Section 4.5.2).
			idx, n, err := readInt(b, 6)
			if err != nil {
				return dst, 0, fieldIntError(err)
			}
			b = b[n:]
			if c&0x40 != 0 {
				if idx >= uint64(len(staticTable)) {
					return dst, 0, decompressionFailed("invalid static table index")
				}
				name, value = staticTable[idx].name, staticTable[idx].value
				if check {
					checkStatic(name, value, true)
				}
			} else {
				e, err := resolve(idx, false)
				if err != nil {
					return dst, 0, err
				}
				name, value = e.name, e.value
				checkEntry(e, true)
			}
		case c&0x40 != 0:
			// Literal Field Line with Name Reference (Section 4.5.4).
			idx, n, err := readInt(b, 4)
			if err != nil {
				return dst, 0, fieldIntError(err)
			}
			b = b[n:]
			never = c&0x20 != 0
			if c&0x10 != 0 {
				if idx >= uint64(len(staticTable)) {
					return dst, 0, decompressionFailed("invalid static table index")
				}
				name = staticTable[idx].name
				if check {
					checkStatic(name, "", false)
				}
			} else {
				e, err := resolve(idx, false)
				if err != nil {
					return dst, 0, err
				}
				name = e.name
				checkEntry(e, false)
			}
			span.litValue = true
			if b, err = d.readLiteral(b, 8, &span.valueStart, &span.valueEnd, tooLarge); err != nil {
				return dst, 0, err
			}
		case c&0x20 != 0:
			// Literal Field Line with Literal Name (Section 4.5.6).
			never = c&0x10 != 0
			var err error
			span.litName = true
			if b, err = d.readLiteral(b, 4, &span.nameStart, &span.nameEnd, tooLarge); err != nil {
				return dst, 0, err
			}
			span.litValue = true
			if b, err = d.readLiteral(b, 8, &span.valueStart, &span.valueEnd, tooLarge); err != nil {
				return dst, 0, err
			}
		case c&0x10 != 0:
			// Indexed Field Line with Post-Base Index (Section 4.5.3).
			idx, n, err := readInt(b, 4)
			if err != nil {
				return dst, 0, fieldIntError(err)
			}
			b = b[n:]
			e, err := resolve(idx, true)
			if err != nil {
				return dst, 0, err
			}
			name, value = e.name, e.value
			checkEntry(e, true)
		default:
			// Literal Field Line with Post-Base Name Reference (Section
			// 4.5.5).
			idx, n, err := readInt(b, 3)
			if err != nil {
				return dst, 0, fieldIntError(err)
			}
			b = b[n:]
			never = c&0x08 != 0
			e, err := resolve(idx, true)
			if err != nil {
				return dst, 0, err
			}
			name = e.name
			checkEntry(e, false)
			span.litValue = true
			if b, err = d.readLiteral(b, 8, &span.valueStart, &span.valueEnd, tooLarge); err != nil {
				return dst, 0, err
			}
		}
		size += uint64(len(name)) + uint64(len(value)) + entryOverhead +
			uint64(span.nameEnd-span.nameStart) + uint64(span.valueEnd-span.valueStart)
		if size > d.maxSection {
			tooLarge = true
		}
		if tooLarge {
			continue
		}
		if span.litName || span.litValue {
			span.i = len(dst)
			d.spans = append(d.spans, span)
		}
		dst = append(dst, HeaderField{Name: name, Value: value, NeverIndex: never})
	}
	if tooLarge {
		d.trimScratch()
		return dst[:start], maxRef, ErrFieldSectionTooLarge
	}
	if len(d.spans) > 0 {
		// One allocation for every literal of the section.
		s := string(d.lit)
		for _, sp := range d.spans {
			f := &dst[sp.i]
			if sp.nameEnd > sp.nameStart {
				f.Name = s[sp.nameStart:sp.nameEnd]
			}
			if sp.valueEnd > sp.valueStart {
				f.Value = s[sp.valueStart:sp.valueEnd]
			}
		}
	}
	d.trimScratch()
	if check {
		// Literal names and values, each checked once, paid for by its
		// own bytes.
		for _, sp := range d.spans {
			f := &dst[sp.i]
			if sp.litName && d.validName != nil && !d.validName(f.Name) {
				refuse(f.Name, false)
			} else if sp.litValue && d.validValue != nil && !d.validValue(f.Value) {
				refuse(f.Name, true)
			}
		}
	}
	if bad != nil {
		return dst[:start], maxRef, bad
	}
	return dst, maxRef, nil
}

func (d *Decoder) trimScratch() {
	if cap(d.lit) > maxScratchRetained {
		d.lit = nil
	}
}

// readLiteral reads an n-bit prefix string literal at the start of b into
// the literal buffer, sets *start and *end to where it lies there and
// returns the rest of b. With skip set it only checks the length.
func (d *Decoder) readLiteral(b []byte, n uint8, start, end *int, skip bool) ([]byte, error) {
	huff, l, h, err := readStringHeader(b, n)
	if err != nil {
		return nil, fieldIntError(err)
	}
	if l > uint64(len(b)-h) {
		return nil, decompressionFailed("string literal longer than the field section")
	}
	data := b[h : h+int(l)]
	if skip {
		return b[h+int(l):], nil
	}
	*start = len(d.lit)
	d.lit, err = appendStringData(d.lit, data, huff)
	if err != nil {
		return nil, decompressionFailed("invalid Huffman-encoded string literal")
	}
	*end = len(d.lit)
	return b[h+int(l):], nil
}

func fieldIntError(err error) error {
	if err == errNeedMore {
		return decompressionFailed("truncated field line")
	}
	return decompressionFailed("integer exceeds 62 bits")
}

// HandleEncoderStream processes bytes received on the peer's encoder stream
// (stream type 0x02, RFC 9204, Section 4.3). b may end inside an
// instruction; the rest is awaited. An error is an *Error with Code
// ErrEncoderStream, to be treated as a connection error; after it the
// Decoder returns the same error forever.
//
// New entries may unblock streams; see AppendUnblocked. The Insert Count
// Increment acknowledging them is produced by AppendDecoderStream.
func (d *Decoder) HandleEncoderStream(b []byte) error {
	if d.err != nil {
		return d.err
	}
	buf := b
	if len(d.partial) > 0 {
		d.partial = append(d.partial, b...)
		buf = d.partial
	}
	for len(buf) > 0 {
		n, err := d.handleEncoderInstruction(buf)
		if err == errNeedMore {
			break
		}
		if err != nil {
			d.err = err
			d.partial = nil
			return err
		}
		buf = buf[n:]
	}
	d.partial = keepPartial(d.partial, buf)
	if len(d.blocked) > 0 {
		d.releaseBlocked()
	}
	return nil
}

// keepPartial stores rest, the unprocessed tail of a stream's data, in
// partial and returns it. A buffer grown by appending a large chunk to an
// earlier incomplete instruction is not kept beyond need.
func keepPartial(partial, rest []byte) []byte {
	if cap(partial) > maxScratchRetained && len(rest) <= maxScratchRetained {
		if len(rest) == 0 {
			return nil
		}
		return append([]byte(nil), rest...)
	}
	return append(partial[:0], rest...)
}

// handleEncoderInstruction processes the encoder instruction at the start
// of b and returns its length, or errNeedMore if b holds only part of it.
// Lengths are checked against the table capacity as soon as they are read,
// so an incomplete instruction never grows past what a valid one could be.
func (d *Decoder) handleEncoderInstruction(b []byte) (int, error) {
	t := &d.table
	c := b[0]
	switch {
	case c&0x80 != 0:
		// Insert with Name Reference (Section 4.3.2).
		idx, n, err := readInt(b, 6)
		if err != nil {
			return 0, encoderIntError(err)
		}
		var name string
		nameInvalid := uint8(0)
		if c&0x40 != 0 {
			// "If this index is received on the encoder stream, this MUST be
			// treated as a connection error of type
			// QPACK_ENCODER_STREAM_ERROR." (Section 3.1)
			if idx >= uint64(len(staticTable)) {
				return 0, encoderStreamError("invalid static table index")
			}
			name = staticTable[idx].name
			if d.validName != nil && !d.validName(name) {
				nameInvalid = invalidName
			}
		} else {
			e, err := d.relativeEntry(idx)
			if err != nil {
				return 0, err
			}
			// The name was checked when its entry was inserted.
			name, nameInvalid = e.name, e.invalid&invalidName
		}
		value, m, err := d.readInsertString(b[n:], 8, uint64(len(name)))
		if err != nil {
			return 0, err
		}
		d.insert(name, value, nameInvalid)
		return n + m, nil
	case c&0x40 != 0:
		// Insert with Literal Name (Section 4.3.3). Both strings are
		// checked for size before either is decoded.
		hn, ln, h1, err := readStringHeader(b, 6)
		if err != nil {
			return 0, encoderIntError(err)
		}
		minName, _ := decodedLenBounds(ln, hn)
		if err := d.checkEntrySize(minName, 0); err != nil {
			return 0, err
		}
		if ln > uint64(len(b)-h1) {
			return 0, errNeedMore
		}
		rest := b[h1+int(ln):]
		hv, lv, h2, err := readStringHeader(rest, 8)
		if err != nil {
			return 0, encoderIntError(err)
		}
		minValue, _ := decodedLenBounds(lv, hv)
		if err := d.checkEntrySize(minName, minValue); err != nil {
			return 0, err
		}
		if lv > uint64(len(rest)-h2) {
			return 0, errNeedMore
		}
		name, err := decodeInsertString(b[h1:h1+int(ln)], hn)
		if err != nil {
			return 0, err
		}
		value, err := decodeInsertString(rest[h2:h2+int(lv)], hv)
		if err != nil {
			return 0, err
		}
		if err := d.checkEntrySize(uint64(len(name)), uint64(len(value))); err != nil {
			return 0, err
		}
		nameInvalid := uint8(0)
		if d.validName != nil && !d.validName(name) {
			nameInvalid = invalidName
		}
		d.insert(name, value, nameInvalid)
		return h1 + int(ln) + h2 + int(lv), nil
	case c&0x20 != 0:
		// Set Dynamic Table Capacity (Section 4.3.1).
		capacity, n, err := readInt(b, 5)
		if err != nil {
			return 0, encoderIntError(err)
		}
		// "The decoder MUST treat a new dynamic table capacity value that
		// exceeds this limit as a connection error of type
		// QPACK_ENCODER_STREAM_ERROR."
		if capacity > d.maxCap {
			return 0, encoderStreamError("dynamic table capacity exceeds SETTINGS_QPACK_MAX_TABLE_CAPACITY")
		}
		t.setCapacity(capacity)
		return n, nil
	default:
		// Duplicate (Section 4.3.4).
		idx, n, err := readInt(b, 5)
		if err != nil {
			return 0, encoderIntError(err)
		}
		e, err := d.relativeEntry(idx)
		if err != nil {
			return 0, err
		}
		if err := d.checkEntrySize(uint64(len(e.name)), uint64(len(e.value))); err != nil {
			return 0, err
		}
		name, value, invalid := e.name, e.value, e.invalid
		d.table.entry(d.table.insert(name, value)).invalid = invalid
		return n, nil
	}
}

// relativeEntry resolves a relative index on the encoder stream: "In
// encoder instructions (Section 4.3), a relative index of 0 refers to the
// most recently inserted value in the dynamic table." (Section 3.2.5). "If
// the decoder encounters a reference in an encoder instruction to a dynamic
// table entry that has already been evicted, it MUST treat this as a
// connection error of type QPACK_ENCODER_STREAM_ERROR." (Section 2.2.3)
func (d *Decoder) relativeEntry(idx uint64) (*dynEntry, error) {
	if idx >= uint64(d.table.numEntries()) {
		return nil, encoderStreamError("reference to a nonexistent dynamic table entry")
	}
	return d.table.entry(d.table.insertCount() - 1 - idx), nil
}

// checkEntrySize refuses an entry larger than the capacity: "It is an error
// if the encoder attempts to add an entry that is larger than the dynamic
// table capacity; the decoder MUST treat this as a connection error of type
// QPACK_ENCODER_STREAM_ERROR." (Section 3.2.2)
func (d *Decoder) checkEntrySize(nameLen, valueLen uint64) error {
	if nameLen+valueLen+entryOverhead > d.table.capacity {
		return encoderStreamError("entry larger than the dynamic table capacity")
	}
	return nil
}

// readInsertString reads the value string of an Insert with Name Reference
// whose name has length nameLen.
func (d *Decoder) readInsertString(b []byte, n uint8, nameLen uint64) (string, int, error) {
	huff, l, h, err := readStringHeader(b, n)
	if err != nil {
		return "", 0, encoderIntError(err)
	}
	minLen, _ := decodedLenBounds(l, huff)
	if err := d.checkEntrySize(nameLen, minLen); err != nil {
		return "", 0, err
	}
	if l > uint64(len(b)-h) {
		return "", 0, errNeedMore
	}
	s, err := decodeInsertString(b[h:h+int(l)], huff)
	if err != nil {
		return "", 0, err
	}
	if err := d.checkEntrySize(nameLen, uint64(len(s))); err != nil {
		return "", 0, err
	}
	return s, h + int(l), nil
}

func decodeInsertString(data []byte, huff bool) (string, error) {
	if !huff {
		return string(data), nil
	}
	var stack [128]byte
	out, err := appendHuffmanDecode(stack[:0], data)
	if err != nil {
		return "", encoderStreamError("invalid Huffman-encoded string literal")
	}
	return string(out), nil
}

// insert adds an entry received on the encoder stream whose name was
// checked (nameInvalid is invalidName if ValidName refused it), and
// checks its value.
func (d *Decoder) insert(name, value string, nameInvalid uint8) {
	invalid := nameInvalid
	if d.validValue != nil && !d.validValue(value) {
		invalid |= invalidValue
	}
	d.table.entry(d.table.insert(name, value)).invalid = invalid
}

func encoderIntError(err error) error {
	if err == errNeedMore {
		return err
	}
	return encoderStreamError("integer exceeds 62 bits")
}
