// Package hq implements HTTP/0.9 over QUIC, the file protocol of the QUIC
// interop runner (ALPN "hq-interop"): the client opens one bidirectional
// stream per file, sends "GET /path\r\n" and FIN, and the server answers
// with the file's bytes and FIN. The server side adapts an http.Handler,
// so that one handler serves both this protocol and HTTP/3.
package hq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/quicstack/quic"
)

// ALPN is the protocol name of HTTP/0.9 over QUIC in the interop runner.
const ALPN = "hq-interop"

// maxRequestLine bounds the request a client may send.
const maxRequestLine = 8 << 10

// Stream error codes the server resets streams with.
const (
	codeBadRequest quic.StreamErrorCode = 0x10
	codeHTTPStatus quic.StreamErrorCode = 0x1000 // + the HTTP status of a failed response
)

// ServeConn serves requests on c with h until the connection ends.
// Requests reach h as GET requests with Proto "HTTP/0.9"; a response
// with a status of 400 or more resets the stream with code 0x1000 plus
// the status, since HTTP/0.9 has no status line.
func ServeConn(ctx context.Context, c *quic.Conn, h http.Handler) {
	for {
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		go serveStream(c, s, h)
	}
}

func serveStream(c *quic.Conn, s *quic.Stream, h http.Handler) {
	req, err := readRequest(s)
	if err != nil {
		s.CancelRead(codeBadRequest)
		s.CancelWrite(codeBadRequest)
		return
	}
	req = req.WithContext(s.Context())
	req.RemoteAddr = c.RemoteAddr().String()
	st := c.ConnectionState().TLS
	req.TLS = &st
	w := &responseWriter{s: s, header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status >= 400 {
		s.CancelWrite(codeHTTPStatus + quic.StreamErrorCode(w.status))
		return
	}
	s.Close()
}

// readRequest reads "GET /path\r\n" (the line ending and FIN may come in
// either order) and returns it as an http.Request.
func readRequest(s *quic.Stream) (*http.Request, error) {
	b, err := io.ReadAll(io.LimitReader(s, maxRequestLine+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRequestLine {
		return nil, errors.New("hq: request too long")
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	path, ok := bytes.CutPrefix(line, []byte("GET "))
	if !ok || len(path) == 0 || path[0] != '/' {
		return nil, fmt.Errorf("hq: bad request line %q", line)
	}
	u, err := url.ParseRequestURI(string(path))
	if err != nil {
		return nil, err
	}
	return &http.Request{Method: http.MethodGet, URL: u, RequestURI: string(path), Proto: "HTTP/0.9",
		ProtoMajor: 0, ProtoMinor: 9, Header: http.Header{}, Body: http.NoBody, Host: ""}, nil
}

// responseWriter writes only the body: HTTP/0.9 has no status line or
// headers.
type responseWriter struct {
	s      *quic.Stream
	header http.Header
	status int
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.status >= 400 {
		return len(p), nil // the stream is reset instead
	}
	return w.s.Write(p)
}

// Get requests path on a new stream of c and returns the stream to read
// the response body from, to EOF.
func Get(ctx context.Context, c *quic.Conn, path string) (*quic.Stream, error) {
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(s, "GET %s\r\n", path); err != nil {
		return nil, err
	}
	if err := s.CloseWrite(); err != nil {
		return nil, err
	}
	return s, nil
}

// StatusOf returns the HTTP status a server reported by resetting a
// response stream (see ServeConn), or 0.
func StatusOf(err error) int {
	var se *quic.StreamError
	if errors.As(err, &se) && se.Code > codeHTTPStatus && se.Code < codeHTTPStatus+600 {
		return int(se.Code - codeHTTPStatus)
	}
	return 0
}
