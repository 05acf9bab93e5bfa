package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// Unidirectional stream types (RFC 9114, Section 6.2; RFC 9204,
// Section 4.2).
const (
	streamTypeControl = 0x00
	streamTypePush    = 0x01
	streamTypeEncoder = 0x02
	streamTypeDecoder = 0x03
)

// connection is the HTTP/3 state of one QUIC connection shared by the
// client and the server: the control and QPACK streams and the QPACK
// encoder and decoder.
type connection struct {
	qc       *quic.Conn
	isServer bool
	ours     settings

	// qmu guards the QPACK encoder and decoder and orders the
	// instructions they produce, which are queued under it for the
	// encoder and decoder streams' writers (stream_writer.go): no stream
	// is written under qmu, so a QPACK stream blocked on flow control
	// stalls no request.
	qmu       sync.Mutex
	enc       *qpack.Encoder
	dec       *qpack.Decoder
	decUpdate chan struct{} // closed and replaced when the decoder's table grows
	unblocked []uint64      // scratch for dec.AppendUnblocked
	insBuf    []byte        // scratch for the instructions, qmu held
	secBuf    []byte        // scratch for an encoded field section, qmu held
	encW      *streamWriter // the encoder stream's bytes
	decW      *streamWriter // the decoder stream's bytes
	// ackT flushes the Section Acknowledgments decodeSection held back
	// (ackHoldMax after the first); ackArmed says it is set. qmu held.
	ackT      *time.Timer
	ackArmed  bool
	encStream *quic.SendStream
	decStream *quic.SendStream

	// ctrlMu guards the ctrl pointer only, set once start opened the
	// control stream; the frames after SETTINGS go through ctrlW.
	ctrlMu sync.Mutex
	ctrl   *quic.SendStream
	ctrlW  *streamWriter

	peerSettingsDone chan struct{} // closed when the peer's SETTINGS arrived
	peerSettings     settings

	mu         sync.Mutex
	haveCtrl   bool
	haveEnc    bool
	haveDec    bool
	goawayRecv bool
	goawayID   uint64
	onGoaway   func(id uint64)      // called with each GOAWAY received
	tls        *tls.ConnectionState // shared once the handshake completed

	closeOnce sync.Once

	dg datagrams // HTTP/3 datagrams by request stream (RFC 9297)

	prio *serverPriorities // the server's; nil for a client (priority.go)

	tr *Tracer // nil: not traced (tracer.go)

	// uniStream is Extensions.UniStream (extension.go), nil if none.
	uniStream func(qc *quic.Conn, streamType uint64, str *quic.ReceiveStream, r io.Reader) bool
	goaway    func(qc *quic.Conn) // Extensions.Goaway, nil if none
	log       *slog.Logger        // a server's Server.Logger; nil logs nothing
}

func newConnection(qc *quic.Conn, isServer bool, maxFieldSection uint64) *connection {
	if maxFieldSection == 0 {
		maxFieldSection = defaultMaxFieldSectionSize
	}
	ours := settings{
		QPACKMaxTableCapacity: ourQPACKMaxTableCapacity,
		QPACKBlockedStreams:   ourQPACKBlockedStreams,
		MaxFieldSectionSize:   maxFieldSection,
	}
	return &connection{
		qc:       qc,
		isServer: isServer,
		ours:     ours,
		enc:      qpack.NewEncoder(qpack.EncoderConfig{}),
		dec: qpack.NewDecoder(qpack.DecoderConfig{
			MaxTableCapacity:    ours.QPACKMaxTableCapacity,
			MaxBlockedStreams:   ours.QPACKBlockedStreams,
			MaxFieldSectionSize: ours.MaxFieldSectionSize,
			// The field syntax is checked by the decoder, once per dynamic
			// table entry rather than once per reference to it.
			ValidName:  validDecodedName,
			ValidValue: validValue,
		}),
		decUpdate:        make(chan struct{}),
		encW:             newStreamWriter(),
		decW:             newStreamWriter(),
		ctrlW:            newStreamWriter(),
		peerSettingsDone: make(chan struct{}),
		tr:               tracerOf(qc),
	}
}

// start opens the control stream with SETTINGS first (RFC 9114, Section
// 6.2.1: "each side MUST initiate a single control stream ... and send its
// SETTINGS frame as the first frame on this stream") and the QPACK encoder
// and decoder streams, then reads the peer's unidirectional streams in the
// background.
func (c *connection) start() error {
	ctx := c.qc.Context()
	open := func(typ uint64, first []byte) (*quic.SendStream, error) {
		s, err := c.qc.OpenUniStreamSync(ctx)
		if err != nil {
			return nil, err
		}
		s.SetPriority(criticalStreamPriority)
		if _, err := s.Write(append(appendVarint(nil, typ), first...)); err != nil {
			return nil, err
		}
		return s, nil
	}
	// No lock is held while the streams open: opening waits for the
	// peer's stream limit.
	settingsFrame := appendSettingsFrame(nil, c.ours)
	ctrl, err := open(streamTypeControl, settingsFrame)
	if err != nil {
		return err
	}
	if c.tr != nil {
		c.traceWritten(ctrl.StreamID(), settingsFrame)
	}
	c.ctrlMu.Lock()
	c.ctrl = ctrl
	c.ctrlMu.Unlock()
	go c.ctrlW.run(ctx, ctrl)
	encStream, err := open(streamTypeEncoder, nil)
	if err != nil {
		return err
	}
	decStream, err := open(streamTypeDecoder, nil)
	if err != nil {
		return err
	}
	c.qmu.Lock()
	c.encStream, c.decStream = encStream, decStream
	c.qmu.Unlock()
	go c.encW.run(ctx, encStream)
	go c.decW.run(ctx, decStream)
	go c.acceptUniStreams()
	if c.ours.H3Datagram {
		go c.receiveDatagrams()
	}
	return nil
}

// writeControl writes a frame on the control stream, after the frames
// written before it, and returns when the stream took it or the
// connection ended. Concurrent calls hold no lock while they wait.
func (c *connection) writeControl(b []byte) error {
	c.ctrlMu.Lock()
	ctrl := c.ctrl
	c.ctrlMu.Unlock()
	if ctrl == nil {
		return errors.New("http3: control stream not open")
	}
	end, err := c.ctrlW.queue(b)
	if err == nil {
		err = c.ctrlW.wait(c.qc.Context(), end)
	}
	if c.tr != nil && err == nil {
		c.traceWritten(ctrl.StreamID(), b)
	}
	return err
}

// closeWithError closes the connection for an HTTP/3 or QPACK connection
// error.
func (c *connection) closeWithError(code ErrCode, reason string) {
	c.closeOnce.Do(func() {
		c.logConnError(code, reason)
		go c.qc.CloseWithError(quic.ApplicationErrorCode(code), reason)
	})
}

// fail handles an error met while processing the peer's data: connection
// errors close the connection; it returns err.
func (c *connection) fail(err error) error {
	var he *Error
	var qe *qpack.Error
	switch {
	case errors.As(err, &he) && !he.Stream:
		c.closeWithError(he.Code, he.Reason)
	case errors.As(err, &qe):
		c.closeWithError(ErrCode(qe.Code), qe.Reason)
	}
	return err
}

// encodeHeaders encodes fields for stream id and returns the HEADERS
// frame. Encoder instructions the section depends on are handed to the
// encoder stream first, as the decoder needs them to decode it; the wait
// for that holds no lock, so a stalled encoder stream stalls only the
// sections that need its bytes.
func (c *connection) encodeHeaders(id quic.StreamID, fields []qpack.HeaderField) ([]byte, error) {
	return c.appendHeaders(nil, id, fields)
}

// appendHeaders is encodeHeaders appending the HEADERS frame to dst: the
// section is encoded in a scratch buffer of the connection, so that a
// caller appending to a buffer of its own (a bufio.Writer's free space,
// a pooled buffer) allocates nothing.
func (c *connection) appendHeaders(dst []byte, id quic.StreamID, fields []qpack.HeaderField) ([]byte, error) {
	c.qmu.Lock()
	c.secBuf = c.enc.EncodeFieldSection(c.secBuf[:0], uint64(id), fields)
	block := c.secBuf
	blockLen := len(block)
	// A section whose Required Insert Count is not zero (the first byte
	// of its prefix, RFC 9204, Section 4.5.1) may reference what was
	// inserted for it.
	referencing := blockLen > 0 && block[0] != 0
	dst = appendHeadersFrame(dst, block)
	if cap(c.secBuf) > maxScratchSection {
		c.secBuf = nil // one large section does not pin its buffer
	}
	// The instructions are queued after those queued before (qmu orders
	// them).
	c.insBuf = c.enc.AppendEncoderStream(c.insBuf[:0])
	produced := len(c.insBuf) > 0
	end, err := c.encW.queue(c.insBuf)
	c.qmu.Unlock()
	if err != nil {
		return nil, err
	}
	// A section that may reference what was just inserted: its HEADERS
	// frame follows the instructions into the streams, so that the peer
	// does not block on it for a round of scheduling. One that references
	// nothing new never waits.
	if produced && referencing {
		if err := c.encW.wait(c.qc.Context(), end); err != nil {
			return nil, err
		}
	}
	if c.tr != nil {
		c.traceCreated(FrameInfo{StreamID: id, Type: frameHeaders, Length: uint64(blockLen), Headers: fields})
	}
	return dst, nil
}

// maxScratchSection is the largest encoded field section whose buffer a
// connection keeps for the next one.
const maxScratchSection = 4 << 10

// errHeadersTooLarge is a field section above our
// SETTINGS_MAX_FIELD_SECTION_SIZE.
var errHeadersTooLarge = streamError(ErrCodeExcessiveLoad, "field section too large")

// decodeHeaders decodes a field section received on stream id, waiting
// while it is blocked on encoder stream instructions (RFC 9204, Section
// 2.2.1) until ctx is done. While it waits, watch (if not nil) reads ahead
// on the stream to notice a reset. A section abandoned while blocked is
// never decoded: "When an endpoint receives a stream reset before the end
// of a stream or before all encoded field sections are processed on that
// stream, or when it abandons reading of a stream, it generates a Stream
// Cancellation instruction" (Section 2.2.2.2).
func (c *connection) decodeHeaders(ctx context.Context, id quic.StreamID, block []byte, watch *resetWatch) ([]qpack.HeaderField, error) {
	return c.decodeSection(ctx, id, block, sectionDecode{watch: watch})
}

// sectionDecode is what decodeSection does beyond decodeHeaders: a
// request stream's decode gives its stream and reader, and the watch is
// made only if the section blocks; a deadline, if not zero, bounds only
// a blocked wait (the stream's read deadline bounds the rest).
type sectionDecode struct {
	watch    *resetWatch
	str      *quic.Stream
	br       *bufio.Reader
	deadline time.Time
}

// decodeSection is decodeHeaders with the options of o. The fields come
// in one slice sized for a usual section (a section has at least one
// byte per field line), not grown line by line.
func (c *connection) decodeSection(ctx context.Context, id quic.StreamID, block []byte, o sectionDecode) ([]qpack.HeaderField, error) {
	watch := o.watch
	blocked := false
	for {
		var fields []qpack.HeaderField
		var err error
		abandoned := false
		c.qmu.Lock()
		if blocked && ctx.Err() != nil {
			c.dec.CancelStream(uint64(id))
			abandoned = true
		} else {
			dst := make([]qpack.HeaderField, 0, max(0, min(len(block)-2, 16)))
			fields, err = c.dec.DecodeFieldSection(uint64(id), block, dst)
		}
		// The Section Acknowledgment (RFC 9204, Section 4.4.1) goes out
		// from this goroutine, not the writer's; up to ackBatch of them
		// are held back (holdAcks).
		var held int
		c.insBuf, held = c.dec.AppendDecoderStreamBatched(c.insBuf[:0], ackBatch)
		if held > 0 {
			c.holdAcks()
		}
		_, werr := c.decW.add(c.insBuf)
		update := c.decUpdate
		c.qmu.Unlock()
		if werr != nil {
			return nil, werr
		}
		c.decW.writeNow()
		switch {
		case abandoned:
			if err := watch.resetErr(); err != nil {
				return nil, err // the peer's reset, not a cancellation
			}
			return nil, ctx.Err()
		case err == qpack.ErrBlocked:
			if !blocked {
				blocked = true
				if !o.deadline.IsZero() {
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, o.deadline)
					defer cancel()
				}
				if watch == nil && o.str != nil {
					watch = &resetWatch{str: o.str, br: o.br}
				}
				if watch != nil {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
					defer watch.start(cancel)()
				}
			}
			select {
			case <-update:
			case <-ctx.Done():
			}
			continue
		case err == qpack.ErrFieldSectionTooLarge:
			return nil, errHeadersTooLarge
		case err != nil:
			var ie *qpack.InvalidFieldError
			if errors.As(err, &ie) {
				// "the inclusion of invalid characters in field names or
				// values" makes the message malformed (RFC 9114, Section
				// 4.1.2).
				if ie.Value {
					return nil, streamError(ErrCodeMessageError, "invalid value of field %q", ie.Name)
				}
				return nil, streamError(ErrCodeMessageError, "invalid field name %q", ie.Name)
			}
			return nil, c.fail(err)
		}
		if c.tr != nil {
			c.traceParsed(FrameInfo{StreamID: id, Type: frameHeaders, Length: uint64(len(block)), Headers: fields})
		}
		return fields, nil
	}
}

// resetWatch reads ahead on a request stream while its header section is
// blocked, so that a reset by the peer abandons the section at once rather
// than when the encoder stream unblocks it. It uses the stream's read
// deadline, which no one else uses before the header section is decoded.
type resetWatch struct {
	str *quic.Stream
	br  *bufio.Reader // the stream's reader, which keeps what the watch reads

	mu  sync.Mutex
	err error // the reset seen
}

// resetErr returns the reset the watch saw, if any; a nil watch saw none.
func (w *resetWatch) resetErr() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// start watches until stop is called, calling cancel if the peer resets
// the stream. It reads ahead at most until br is full, or the stream
// ends.
func (w *resetWatch) start(cancel func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := w.br.Buffered() + 1; n <= w.br.Size(); n = w.br.Buffered() + 1 {
			if _, err := w.br.Peek(n); err != nil {
				var se *quic.StreamError
				if errors.As(err, &se) && se.Remote {
					w.mu.Lock()
					w.err = err
					w.mu.Unlock()
					cancel()
				}
				return
			}
		}
	}()
	return func() {
		w.str.SetReadDeadline(time.Unix(1, 0)) // ends a Peek in progress
		<-done
		w.str.SetReadDeadline(time.Time{})
	}
}

// cancelDecoding tells the peer's encoder that this endpoint abandons
// reading stream id: "when it abandons reading of a stream, it generates a
// Stream Cancellation instruction" (RFC 9204, Section 2.2.2.2), so that
// the encoder stops counting references on it. It forgets the stream if
// its section was blocked.
func (c *connection) cancelDecoding(id quic.StreamID) {
	c.qmu.Lock()
	c.dec.CancelStream(uint64(id))
	c.flushDecoderStream()
	c.qmu.Unlock()
}

// resetStream abandons both directions of a request stream with code.
func (c *connection) resetStream(s requestStream, code ErrCode) {
	resetStream(s, code)
	c.cancelDecoding(s.StreamID())
}

// stopReading abandons the receiving direction of a request stream,
// asking the peer to stop sending with code.
func (c *connection) stopReading(s requestStream, code ErrCode) {
	s.CancelRead(quic.StreamErrorCode(code))
	c.cancelDecoding(s.StreamID())
}

// flushEncoderStream queues the pending encoder instructions for the
// encoder stream's writer; the error is the writer's if it stopped.
// c.qmu held.
func (c *connection) flushEncoderStream() error {
	c.insBuf = c.enc.AppendEncoderStream(c.insBuf[:0])
	_, err := c.encW.queue(c.insBuf)
	return err
}

// ackBatch and ackHoldMax bound the Section Acknowledgments decodeSection
// holds back: at most ackBatch-1 of them, for at most ackHoldMax. Each one
// sent alone costs the peer a read of its decoder stream (a goroutine
// wakeup per request with one request in flight, issue 28); held, they go
// out together. They delay only the peer encoder's release of the entries
// those sections reference: insertions are acknowledged at once
// (qpack.Decoder.AppendDecoderStreamBatched).
const (
	ackBatch   = 16
	ackHoldMax = 50 * time.Millisecond
)

// holdAcks arms the timer that flushes held Section Acknowledgments.
// c.qmu held.
func (c *connection) holdAcks() {
	if c.ackArmed {
		return
	}
	c.ackArmed = true
	if c.ackT == nil {
		c.ackT = time.AfterFunc(ackHoldMax, c.flushHeldAcks)
		return
	}
	c.ackT.Reset(ackHoldMax)
}

// flushHeldAcks queues the Section Acknowledgments held back, for the
// decoder stream's writer.
func (c *connection) flushHeldAcks() {
	c.qmu.Lock()
	c.ackArmed = false
	c.flushDecoderStream()
	c.qmu.Unlock()
}

// flushDecoderStream queues the pending decoder instructions for the
// decoder stream's writer; the error is the writer's if it stopped.
// c.qmu held.
func (c *connection) flushDecoderStream() error {
	c.insBuf = c.dec.AppendDecoderStream(c.insBuf[:0])
	_, err := c.decW.queue(c.insBuf)
	return err
}

func (c *connection) acceptUniStreams() {
	for {
		rs, err := c.qc.AcceptUniStream(c.qc.Context())
		if err != nil {
			return
		}
		go c.handleUniStream(rs)
	}
}

// criticalStreamEnded handles the end of a control or QPACK stream: "If
// either control stream is closed at any point, this MUST be treated as a
// connection error of type H3_CLOSED_CRITICAL_STREAM." (RFC 9114, Section
// 6.2.1; RFC 9204, Section 4.2 for the encoder and decoder streams.)
func (c *connection) criticalStreamEnded(err error) {
	if c.qc.Context().Err() != nil {
		return // the connection ended
	}
	var he *Error
	var qe *qpack.Error
	if errors.As(err, &he) || errors.As(err, &qe) {
		c.fail(err)
		return
	}
	var se *quic.StreamError
	if err == io.EOF || err == io.ErrUnexpectedEOF || errors.As(err, &se) {
		c.closeWithError(ErrCodeClosedCriticalStream, "critical stream closed")
	}
}

// claim records that a stream of a type of which only one is allowed has
// been opened by the peer; false means a second one.
func (c *connection) claim(flag *bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *flag {
		return false
	}
	*flag = true
	return true
}

func (c *connection) handleUniStream(rs *quic.ReceiveStream) {
	br := bufio.NewReader(rs)
	typ, err := readVarint(br)
	if err != nil {
		return // reset or closed before its type: nothing to do
	}
	switch typ {
	case streamTypeControl:
		if !c.claim(&c.haveCtrl) {
			c.closeWithError(ErrCodeStreamCreationError, "second control stream")
			return
		}
		c.criticalStreamEnded(c.readControl(br, rs.StreamID()))
	case streamTypeEncoder, streamTypeDecoder:
		flag := &c.haveEnc
		if typ == streamTypeDecoder {
			flag = &c.haveDec
		}
		if !c.claim(flag) {
			c.closeWithError(ErrCodeStreamCreationError, "second QPACK stream")
			return
		}
		c.criticalStreamEnded(c.readQPACKStream(br, typ))
	case streamTypePush:
		if c.isServer {
			// "If a server receives a client-initiated push stream, this
			// MUST be treated as a connection error of type
			// H3_STREAM_CREATION_ERROR." (Section 6.2.2)
			c.closeWithError(ErrCodeStreamCreationError, "push stream from client")
		} else {
			// We never send MAX_PUSH_ID, so any push ID exceeds it
			// (Section 4.6).
			c.closeWithError(ErrCodeIDError, "push stream without MAX_PUSH_ID")
		}
	default:
		if c.uniStream != nil && c.uniStream(c.qc, typ, rs, br) {
			return
		}
		// "Recipients of unknown stream types MUST either abort reading
		// of the stream or discard incoming data without further
		// processing." (Section 6.2)
		io.Copy(io.Discard, br)
	}
}

// readQPACKStream feeds the peer's encoder or decoder stream to the QPACK
// decoder or encoder.
func (c *connection) readQPACKStream(br *bufio.Reader, typ uint64) error {
	buf := make([]byte, 4096)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			c.qmu.Lock()
			var herr, werr error
			if typ == streamTypeEncoder {
				herr = c.dec.HandleEncoderStream(buf[:n])
				// The blocked sections' goroutines wake below and decode
				// again; the decoder's list of unblocked streams is not
				// needed.
				c.unblocked = c.dec.AppendUnblocked(c.unblocked[:0])
				werr = c.flushDecoderStream()
				close(c.decUpdate)
				c.decUpdate = make(chan struct{})
			} else {
				herr = c.enc.HandleDecoderStream(buf[:n])
			}
			c.qmu.Unlock()
			if herr != nil {
				return herr
			}
			if werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
	}
}

// readControl reads the peer's control stream (RFC 9114, Section 6.2.1).
func (c *connection) readControl(br *bufio.Reader, id quic.StreamID) error {
	// "If the first frame of the control stream is any other frame type,
	// this MUST be treated as a connection error of type
	// H3_MISSING_SETTINGS." (Section 6.2.1) Any other: frames of unknown
	// or reserved types, which are skipped later on, are not skipped here.
	typ, length, err := readFrameHeader(br)
	if err == io.EOF {
		return err
	}
	if err != nil {
		return truncated(err)
	}
	if typ != frameSettings {
		return connError(ErrCodeMissingSettings, "first control frame is of type %#x", typ)
	}
	if length > maxPayload(typ) {
		return connError(ErrCodeExcessiveLoad, "SETTINGS frame of %d bytes", length)
	}
	p, err := readPayload(br, length)
	if err != nil {
		return truncated(err)
	}
	f, err := parseFramePayload(typ, p)
	if err != nil {
		return err
	}
	c.traceFrame(id, &f)
	c.qmu.Lock()
	err = c.enc.SetPeerSettings(f.Set.QPACKMaxTableCapacity, f.Set.QPACKBlockedStreams)
	if err == nil {
		err = c.flushEncoderStream()
	}
	c.qmu.Unlock()
	if err != nil {
		return err
	}
	c.peerSettings = f.Set
	close(c.peerSettingsDone)
	var maxPushID uint64
	maxPushIDSeen := false
	for {
		f, err := readFrame(br)
		if err == io.EOF {
			return err // the stream ended between frames: a closed critical stream
		}
		if err != nil {
			return truncated(err)
		}
		c.traceFrame(id, &f)
		switch f.Type {
		case frameGoaway:
			if err := c.handleGoaway(f.ID); err != nil {
				return err
			}
		case frameMaxPushID:
			if !c.isServer {
				return connError(ErrCodeFrameUnexpected, "MAX_PUSH_ID from server")
			}
			// "A MAX_PUSH_ID frame cannot reduce the maximum push ID;
			// receipt of a MAX_PUSH_ID frame that contains a smaller value
			// than previously received MUST be treated as a connection
			// error of type H3_ID_ERROR." (Section 7.2.7) We never push;
			// the limit is only checked.
			if maxPushIDSeen && f.ID < maxPushID {
				return connError(ErrCodeIDError, "MAX_PUSH_ID reduced from %d to %d", maxPushID, f.ID)
			}
			maxPushID, maxPushIDSeen = f.ID, true
		case framePriorityUpdateRequest, framePriorityUpdatePush:
			if err := c.handlePriorityUpdate(&f); err != nil {
				return err
			}
		case frameCancelPush:
			// We never promise pushes and never allow them (no
			// MAX_PUSH_ID), so every push ID is unknown (Section 7.2.3).
			return connError(ErrCodeIDError, "CANCEL_PUSH for unknown push ID %d", f.ID)
		default:
			// SETTINGS again, DATA, HEADERS, PUSH_PROMISE (Sections 7.2.1,
			// 7.2.2, 7.2.4, 7.2.5).
			return connError(ErrCodeFrameUnexpected, "frame %#x on the control stream", f.Type)
		}
	}
}

// handleGoaway applies a GOAWAY frame (RFC 9114, Section 5.2).
func (c *connection) handleGoaway(id uint64) error {
	if !c.isServer && id%4 != 0 {
		// "A client MUST treat a GOAWAY frame containing a stream ID of
		// any other type as a connection error of type H3_ID_ERROR."
		return connError(ErrCodeIDError, "GOAWAY with stream ID %d", id)
	}
	c.mu.Lock()
	if c.goawayRecv && id > c.goawayID {
		c.mu.Unlock()
		// "An endpoint MUST NOT increase the value it sends"; receipt of a
		// larger one is H3_ID_ERROR.
		return connError(ErrCodeIDError, "GOAWAY ID increased from %d to %d", c.goawayID, id)
	}
	c.goawayRecv, c.goawayID = true, id
	fn := c.onGoaway
	c.mu.Unlock()
	if fn != nil {
		fn(id)
	}
	if c.goaway != nil {
		c.goaway(c.qc)
	}
	return nil
}
