package http3

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The HTTP/2 side of the conformance table: the same malformed requests,
// as raw HTTP/2 frames, sent to net/http's own HTTP/2 server over TLS on
// loopback, to see what it does with them.

// h2Server is net/http's HTTP/2 server with the conformance handler.
type h2Server struct {
	srv *httptest.Server
	obs *handlerObserver
}

// handlerSaw is what the conformance handler saw of a request.
type handlerSaw struct {
	bodyErr error
}

// handlerObserver is the conformance handler: it reports that it started
// and then what it read of the request body, and answers 200, or resets
// the stream (http.ErrAbortHandler) if the body failed.
type handlerObserver struct {
	started chan struct{}
	seen    chan handlerSaw
}

func newHandlerObserver() *handlerObserver {
	return &handlerObserver{started: make(chan struct{}, 16), seen: make(chan handlerSaw, 16)}
}

func (o *handlerObserver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.started <- struct{}{}
	_, err := io.Copy(io.Discard, r.Body)
	o.seen <- handlerSaw{bodyErr: err}
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(200)
}

// waitStarted reports whether the handler started for the request whose
// header section was just sent: it waits until it does, or for a few
// seconds.
func (o *handlerObserver) waitStarted() bool {
	select {
	case <-o.started:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// result returns what the handler saw, if it ran: started tells whether
// it was seen starting (then its report is awaited); otherwise a handler
// that ran has reported before the response that ended the exchange.
func (o *handlerObserver) result(started bool) *handlerSaw {
	if !started {
		select {
		case <-o.started:
			started = true
		default:
			return nil
		}
	}
	select {
	case saw := <-o.seen:
		return &saw
	case <-time.After(10 * time.Second):
		return nil
	}
}

func newH2Server(t *testing.T) *h2Server {
	s := &h2Server{obs: newHandlerObserver()}
	s.srv = httptest.NewUnstartedServer(s.obs)
	s.srv.EnableHTTP2 = true
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // it logs connection errors
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

// h2Result is what became of one HTTP/2 request.
type h2Result struct {
	status   int           // response status, 0 if none
	rst      http2.ErrCode // RST_STREAM code, if the stream was reset
	reset    bool
	goaway   bool // the connection was closed (GOAWAY or end of the connection)
	saw      *handlerSaw
	frameErr string // why the exchange could not be completed, for the log
}

// send sends m as an HTTP/2 request on stream 1 of a new connection and
// waits for the end of the stream or of the connection.
func (s *h2Server) send(t *testing.T, m *message) h2Result {
	conn, err := tls.Dial("tcp", s.srv.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var out bytes.Buffer
	var mu sync.Mutex // orders writes to conn
	out.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&out, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = 16 << 20
	fr.WriteSettings()
	block := func(fields []fieldLine) []byte {
		var b bytes.Buffer
		enc := hpack.NewEncoder(&b)
		enc.SetMaxDynamicTableSizeLimit(0)
		for _, f := range fields {
			enc.WriteField(hpack.HeaderField{Name: f.name, Value: f.value})
		}
		return b.Bytes()
	}
	flush := func() {
		mu.Lock()
		conn.Write(out.Bytes())
		out.Reset()
		mu.Unlock()
	}
	started := false
	if m.h2 != nil {
		m.h2(fr, block)
		flush()
	} else {
		body := len(m.data) > 0 || m.trailer != nil
		writeH2Headers(fr, 1, block(m.fields), !body)
		flush()
		if body {
			// The rest goes once the handler runs, so that what the
			// handler sees is known however the server orders its reset
			// and the handler's report.
			if started = s.obs.waitStarted(); started {
				for i, d := range m.data {
					fr.WriteData(1, i == len(m.data)-1 && m.trailer == nil, []byte(d))
				}
				if m.trailer != nil {
					writeH2Headers(fr, 1, block(m.trailer), true)
				}
				flush()
			}
		}
	}
	var r h2Result
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			r.goaway = true
			r.frameErr = err.Error()
			break
		}
		done := false
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				mu.Lock()
				var ack bytes.Buffer
				http2.NewFramer(&ack, nil).WriteSettingsAck()
				conn.Write(ack.Bytes())
				mu.Unlock()
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == 1 && r.status == 0 {
				r.status, _ = strconv.Atoi(f.PseudoValue("status"))
			}
			done = f.StreamEnded()
		case *http2.DataFrame:
			done = f.StreamID == 1 && f.StreamEnded()
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				r.reset, r.rst, done = true, f.ErrCode, true
			}
		case *http2.GoAwayFrame:
			r.goaway, done = true, true
			r.frameErr = fmt.Sprintf("GOAWAY %v %q", f.ErrCode, f.DebugData())
		}
		if done {
			break
		}
	}
	r.saw = s.obs.result(started)
	return r
}

// writeH2Headers writes a header block as a HEADERS frame and as many
// CONTINUATION frames as the default SETTINGS_MAX_FRAME_SIZE needs.
func writeH2Headers(fr *http2.Framer, id uint32, block []byte, end bool) {
	const max = 16384
	first := block[:min(len(block), max)]
	block = block[len(first):]
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: end, EndHeaders: len(block) == 0})
	for len(block) > 0 {
		n := min(len(block), max)
		fr.WriteContinuation(id, n == len(block), block[:n])
		block = block[n:]
	}
}

// class is what the HTTP/2 server did, in the terms of the table.
func (r h2Result) class() outcomeClass {
	switch {
	case r.saw != nil && r.saw.bodyErr != nil:
		return classBodyError
	case r.saw != nil:
		return classAccepted
	case r.goaway && !r.reset && r.status == 0:
		return classConnError
	case r.reset || r.status >= 400:
		return classRefused
	}
	return classAccepted
}
