// Package qlog writes qlog traces of QUIC connections: JSON Text Sequences
// (RFC 7464, ".sqlog" files) following the qlog main schema
// (draft-ietf-quic-qlog-main-schema, QlogFileSeq) and the QUIC event
// definitions (draft-ietf-quic-qlog-quic-events). Package
// github.com/quicstack/quic/qlog exposes it.
//
// Events are encoded by appending to a reused buffer, without reflection
// or allocation per event, and written through a buffered writer.
package qlog

import (
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Schema URIs. Implementations of drafts must identify the event schema
// with the draft number appended (draft-ietf-quic-qlog-quic-events,
// Section 2.1); the QUIC events draft in ../shared/specs follows -12.
const (
	FileSchema          = "urn:ietf:params:qlog:file:sequential"
	SerializationFormat = "application/qlog+json-seq"
	QUICEventSchema     = "urn:ietf:params:qlog:events:quic-13"
	HTTP3EventSchema    = "urn:ietf:params:qlog:events:http3-12"
)

// The header members qvis needs to open a JSON-SEQ file (see NewWriter).
const (
	QvisVersion = "0.3"
	QvisFormat  = "JSON-SEQ"
)

// recordSeparator starts every JSON text of a sequence (RFC 7464).
const recordSeparator = 0x1e

// A Writer writes one trace. Its methods may be called from several
// goroutines. Events are encoded into a buffer; a full buffer is handed
// to a goroutine of the Writer that writes it out while encoding goes on
// in another, so that the connection that traces does not wait for the
// file system.
type Writer struct {
	mu    sync.Mutex
	cur   []byte // the buffer events are encoded into
	start time.Time
	now   func() time.Time
	last  time.Duration // time of the last event: times never go back
	full  chan []byte   // buffers to write, to the write goroutine
	free  chan []byte   // written buffers, back from it
	done  chan struct{} // closed when the write goroutine has ended
	err   error         // the write goroutine's first error; read after done
	c     io.WriteCloser
	open  bool
}

// bufSize is the size of each of the Writer's buffers.
const bufSize = 256 << 10

// NewWriter writes the header of a trace of one connection to w: the
// vantage point ("client" or "server"), the original destination
// connection ID as the group ID (hex), and a title. Close flushes and
// closes w, and ends the goroutine that writes to it; it must be called.
func NewWriter(w io.WriteCloser, vantage, odcid, title string) *Writer {
	return NewWriterAt(w, vantage, odcid, title, time.Now())
}

// NewWriterAt is NewWriter for a trace whose reference time is start
// rather than now: a simulation's, whose events are all logged with
// EventAt and their simulated times.
func NewWriterAt(w io.WriteCloser, vantage, odcid, title string, start time.Time) *Writer {
	qw := &Writer{
		cur: make([]byte, 0, bufSize), start: start, now: time.Now,
		full: make(chan []byte, 1), free: make(chan []byte, 2), done: make(chan struct{}),
		c: w, open: true,
	}
	qw.free <- make([]byte, 0, bufSize)
	go qw.writeLoop()
	b := append(qw.cur, recordSeparator)
	// qlog_version and qlog_format are not in the current draft (which
	// replaced them with file_schema and serialization_format, and whose
	// readers ignore members they do not know), but qvis reads them: it
	// rejects a JSON-SEQ file without them and loads only the versions it
	// knows, of which "0.3" is the latest (qvis commit 72c8c4b,
	// textsequencejsontoqlog.ts and QlogLoader.ts).
	b = append(b, `{"file_schema":"`+FileSchema+`","serialization_format":"`+SerializationFormat+
		`","qlog_version":"`+QvisVersion+`","qlog_format":"`+QvisFormat+`","title":`...)
	b = appendString(b, title)
	b = append(b, `,"trace":{"common_fields":{"ODCID":`...)
	b = appendString(b, odcid)
	b = append(b, `,"group_id":`...)
	b = appendString(b, odcid)
	b = append(b, `,"time_format":"relative_to_epoch","reference_time":{"clock_type":"system","epoch":`...)
	b = appendString(b, qw.start.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	b = append(b, `}},"vantage_point":{"name":"quicstack","type":`...)
	b = appendString(b, vantage)
	b = append(b, `},"event_schemas":["`+QUICEventSchema+`","`+HTTP3EventSchema+`"]}}`+"\n"...)
	qw.cur = b
	return qw
}

// writeLoop writes the buffers handed to it, in order, until full is
// closed. After an error it only returns the buffers.
func (w *Writer) writeLoop() {
	defer close(w.done)
	for b := range w.full {
		if w.err == nil {
			_, w.err = w.c.Write(b)
		}
		w.free <- b[:0]
	}
}

// Event starts an event named name and returns the buffer to append the
// data object's members to (without braces); End finishes it. The Writer
// is locked in between.
func (w *Writer) Event(name string) []byte {
	return w.EventAt(name, time.Time{})
}

// EventAt is Event for an event that happened at t, when the caller
// knows it; the zero t means now. Times are kept in order: an event is
// never logged as earlier than the one before.
func (w *Writer) EventAt(name string, t time.Time) []byte {
	w.mu.Lock()
	if t.IsZero() {
		t = w.now()
	}
	d := max(t.Sub(w.start), w.last)
	w.last = d
	if cap(w.cur)-len(w.cur) < minEventRoom && w.open {
		// Hand the full buffer over and go on in the other one, once
		// the write goroutine has written it.
		w.full <- w.cur
		w.cur = <-w.free
	}
	b := append(w.cur, recordSeparator)
	b = append(b, `{"time":`...)
	b = appendMs(b, d)
	b = append(b, `,"name":"`...)
	b = append(b, name...)
	b = append(b, `","data":{`...)
	return b
}

// End finishes the event begun by Event, whose buffer is b.
func (w *Writer) End(b []byte) {
	if n := len(b); b[n-1] == ',' {
		b = b[:n-1]
	}
	b = append(b, "}}\n"...)
	if w.open {
		w.cur = b
	} else {
		// Closed (the connection closed): events are dropped, and the
		// buffer they were encoded in is kept for the next one.
		w.cur = b[:0]
	}
	w.mu.Unlock()
}

// minEventRoom is the free buffer space an event starts in; larger
// events (an ACK with hundreds of ranges) still work, by growing the
// buffer.
const minEventRoom = 16 << 10

// Close writes out the trace and closes the underlying writer. Events
// after Close are dropped.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open {
		return w.err
	}
	w.open = false
	if len(w.cur) > 0 {
		w.full <- w.cur
	}
	close(w.full)
	<-w.done
	w.cur = nil
	if err := w.c.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}

// Members appended to an event's data: each ends with a comma, which End
// removes after the last one. Keys are passed quoted and with their colon,
// as in Uint(b, `"stream_id":`, 4), so that each member is a few appends.

// Str appends the quoted key, its colon and "value",.
func Str(b []byte, key, v string) []byte {
	b = appendKey(b, key)
	return append(appendString(b, v), ',')
}

// Uint appends "key":n,.
func Uint(b []byte, key string, n uint64) []byte {
	b = appendKey(b, key)
	return append(appendUint(b, n), ',')
}

// appendUint appends n in decimal: digits written backwards into a
// stack array, two at a time, and appended with one copy (faster than
// strconv.AppendUint for the short numbers of qlog, and than appending
// digit by digit).
func appendUint(b []byte, n uint64) []byte {
	if n < 10 {
		return append(b, byte('0'+n))
	}
	var d [20]byte
	i := len(d)
	for n >= 100 {
		q := n / 100
		r := n - q*100
		i -= 2
		d[i], d[i+1] = digitPairs[2*r], digitPairs[2*r+1]
		n = q
	}
	if n >= 10 {
		i -= 2
		d[i], d[i+1] = digitPairs[2*n], digitPairs[2*n+1]
	} else {
		i--
		d[i] = byte('0' + n)
	}
	return append(b, d[i:]...)
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// Bool appends "key":true or false,.
func Bool(b []byte, key string, v bool) []byte {
	b = appendKey(b, key)
	return append(strconv.AppendBool(b, v), ',')
}

// Ms appends a duration in milliseconds: "key":12.345,.
func Ms(b []byte, key string, d time.Duration) []byte {
	b = appendKey(b, key)
	return append(appendMs(b, d), ',')
}

// appendMs appends d in milliseconds with three decimals (microsecond
// resolution), faster than formatting a float.
func appendMs(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	b = appendUint(b, uint64(us/1000))
	f := us % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// Hex appends "key":"hex bytes",.
func Hex(b []byte, key string, v []byte) []byte {
	b = appendKey(b, key)
	b = append(b, '"')
	const digits = "0123456789abcdef"
	for _, x := range v {
		b = append(b, digits[x>>4], digits[x&15])
	}
	return append(b, '"', ',')
}

// Open appends "key":{ (or "key":[ if array); Close closes it.
func Open(b []byte, key string, array bool) []byte {
	b = appendKey(b, key)
	if array {
		return append(b, '[')
	}
	return append(b, '{')
}

// Close ends an object (or array) begun by Open or a bare '{'.
func Close(b []byte, array bool) []byte {
	if n := len(b); b[n-1] == ',' {
		b = b[:n-1]
	}
	if array {
		return append(b, ']', ',')
	}
	return append(b, '}', ',')
}

func appendKey(b []byte, key string) []byte { return append(b, key...) }

// appendString appends s as a JSON string, escaping what JSON requires
// and replacing invalid UTF-8.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// AppendString appends s as a JSON string (for keys and values built by
// callers).
func AppendString(b []byte, s string) []byte { return appendString(b, s) }
