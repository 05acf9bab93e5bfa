package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// Raw peers: a server that answers each request stream with whatever a
// test writes, for checking what our client accepts, and helpers to build
// and send field sections and frames by hand.

// hf builds a field list from name, value pairs.
func hf(kv ...string) []qpack.HeaderField {
	var fs []qpack.HeaderField
	for i := 0; i+1 < len(kv); i += 2 {
		fs = append(fs, qpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return fs
}

// goodRequest is the field section of a valid GET, to which tests append.
var goodRequest = []string{":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "/"}

// requestWith returns goodRequest's fields followed by extra.
func requestWith(extra ...string) []qpack.HeaderField {
	return hf(append(append([]string{}, goodRequest...), extra...)...)
}

// rawStream is one request stream of a raw server (newRawServer).
type rawStream struct {
	c      *connection
	str    *quic.Stream
	br     *bufio.Reader
	fields []qpack.HeaderField // the request's header section
	err    error               // why the header section could not be read, if it could not
}

// headers encodes fields as a HEADERS frame of the stream.
func (s *rawStream) headers(t testing.TB, fields []qpack.HeaderField) []byte {
	b, err := s.c.encodeHeaders(s.str.StreamID(), fields)
	if err != nil {
		t.Error(err)
	}
	return b
}

// stopCode writes an endless unknown frame until the client stops the
// stream, and returns the code of its STOP_SENDING; 0 if the client read
// or discarded everything for 10 seconds without stopping.
func (s *rawStream) stopCode() ErrCode {
	s.str.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.str.Write(appendFrameHeader(nil, 0x21, 1<<40)); err == nil {
		buf := make([]byte, 16<<10)
		for err == nil {
			_, err = s.str.Write(buf)
		}
		var se *quic.StreamError
		if errors.As(err, &se) && se.Remote {
			return ErrCode(se.Code)
		}
	}
	return 0
}

// newRawServer starts a server on 127.0.0.1 that serves each request
// stream with serve, after reading and decoding the request's HEADERS
// frame (rawStream.err says why that failed, if it did), and a client
// for it: a testEnv without a Server.
func newRawServer(t *testing.T, serve func(s *rawStream)) *testEnv {
	t.Helper()
	cert, pool := testCert(t)
	l, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{NextProtoH3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			qc, err := l.Accept(ctx)
			if err != nil {
				return
			}
			c := newConnection(qc, true, 0)
			if err := c.start(); err != nil {
				continue
			}
			go func() {
				for {
					str, err := qc.AcceptStream(qc.Context())
					if err != nil {
						return
					}
					go func() {
						br := bufio.NewReader(str)
						f, err := readHeadersFrame(c, br)
						var fields []qpack.HeaderField
						if err == nil {
							fields, err = c.decodeHeaders(str.Context(), str.StreamID(), f.Payload, nil)
						}
						serve(&rawStream{c: c, str: str, br: br, fields: fields, err: err})
					}()
				}
			}()
		}
	}()
	rs := newTestClient(t, l, pool)
	t.Cleanup(cancel)
	return rs
}

// h3Code returns the HTTP/3 code of err: an *Error's, or a stream
// reset's; 0 for anything else.
func h3Code(err error) ErrCode {
	var he *Error
	if errors.As(err, &he) {
		return he.Code
	}
	var se *quic.StreamError
	if errors.As(err, &se) {
		return ErrCode(se.Code)
	}
	return 0
}
