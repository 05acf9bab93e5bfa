// Package hqfiles implements hq-interop, the HTTP/0.9-over-QUIC file protocol
// of the QUIC interop runner (ALPN "hq-interop"): the client opens one
// bidirectional stream per file and sends "GET /<path>\r\n" and FIN; the
// server replies with the file's bytes and FIN. It works over any QUIC
// implementation through the Conn and Stream interfaces; Ours adapts a
// quicstack/quic connection.
package hqfiles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	quic "github.com/quicstack/quic"
)

// ALPN is the application protocol of hq-interop.
const ALPN = "hq-interop"

// maxRequestLine bounds a request line: the interop runner's file names
// are at most 250 characters.
const maxRequestLine = 4096

// Stream is a bidirectional stream.
type Stream interface {
	io.ReadWriter
	// CloseWrite sends FIN.
	CloseWrite() error
}

// Conn opens and accepts bidirectional streams.
type Conn interface {
	OpenStream(ctx context.Context) (Stream, error)
	AcceptStream(ctx context.Context) (Stream, error)
}

// Ours adapts a connection of this library.
func Ours(c *quic.Conn) Conn { return oursConn{c} }

type oursConn struct{ c *quic.Conn }

func (o oursConn) OpenStream(ctx context.Context) (Stream, error) {
	s, err := o.c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (o oursConn) AcceptStream(ctx context.Context) (Stream, error) {
	s, err := o.c.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Files maps a path (without the leading slash) to its content.
type Files func(path string) ([]byte, bool)

// MapFiles serves the files of m.
func MapFiles(m map[string][]byte) Files {
	return func(p string) ([]byte, bool) { b, ok := m[p]; return b, ok }
}

// Serve answers the requests of connection c until accepting a stream
// fails (the connection closed or ctx ended), and returns that error. An
// unknown path or a bad request gets an empty reply.
func Serve(ctx context.Context, c Conn, files Files) error {
	for {
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return err
		}
		go serveStream(s, files)
	}
}

func serveStream(s Stream, files Files) {
	defer s.CloseWrite()
	path, err := ReadRequest(s)
	if err != nil {
		return
	}
	if b, ok := files(path); ok {
		s.Write(b)
	}
}

// ReadRequest reads a request "GET /<path>\r\n" (the line end may be a
// bare "\n") up to the stream's FIN, and returns path without its leading
// slash. Reading to the FIN finishes the stream's receiving part, which
// lets the QUIC stack count the stream as done.
func ReadRequest(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxRequestLine))
	if err != nil {
		return "", fmt.Errorf("hq: reading request: %w", err)
	}
	if len(b) >= maxRequestLine {
		return "", errors.New("hq: request too long")
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	path, ok := strings.CutPrefix(line, "GET /")
	if !ok {
		return "", fmt.Errorf("hq: bad request %.40q", line)
	}
	return path, nil
}

// Get requests each path on its own stream, at most parallel at a time
// (at least 1), and returns the replies by path.
func Get(ctx context.Context, c Conn, paths []string, parallel int) (map[string][]byte, error) {
	out := make(map[string][]byte, len(paths))
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for _, p := range paths {
		sem <- struct{}{}
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			b, err := GetOne(ctx, c, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("hq: GET /%s: %w", p, err)
			}
			out[p] = b
		}()
	}
	wg.Wait()
	return out, firstErr
}

// GetOne requests one path and reads the reply to its FIN.
func GetOne(ctx context.Context, c Conn, path string) ([]byte, error) {
	s, err := c.OpenStream(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(s, "GET /"+path+"\r\n"); err != nil {
		return nil, err
	}
	if err := s.CloseWrite(); err != nil {
		return nil, err
	}
	return io.ReadAll(s)
}
