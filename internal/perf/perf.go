// Package perf implements the QUIC performance protocol
// (draft-banks-quic-performance, ALPN "perf"): on each bidirectional
// stream the client sends the number of bytes it wants back as an 8-byte
// big-endian integer, then its upload, then FIN; the server discards the
// upload and sends the requested number of bytes, then FIN.
package perf

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/quicstack/quic"
)

// ALPN is the protocol name.
const ALPN = "perf"

// codeBadRequest resets a stream whose request is malformed.
const codeBadRequest quic.StreamErrorCode = 1

// Counters count payload bytes as they move, for progress reports.
type Counters struct {
	Sent, Received atomic.Uint64
}

// chunk is the zero bytes written in each Write.
var chunk = make([]byte, 64<<10)

// ServeConn answers perf requests on c until the connection ends.
// counters, if not nil, counts the bytes served.
func ServeConn(ctx context.Context, c *quic.Conn, counters *Counters) {
	for {
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		go serveStream(s, counters)
	}
}

func serveStream(s *quic.Stream, counters *Counters) {
	if counters == nil {
		counters = new(Counters)
	}
	var hdr [8]byte
	if _, err := io.ReadFull(s, hdr[:]); err != nil {
		s.CancelRead(codeBadRequest)
		s.CancelWrite(codeBadRequest)
		return
	}
	n := binary.BigEndian.Uint64(hdr[:])
	// Discard the upload while sending, so that both directions run at
	// once.
	go io.Copy(io.Discard, countingReader{s, &counters.Received})
	if err := writeN(s, n, &counters.Sent); err != nil {
		return
	}
	s.CloseWrite()
}

type countingReader struct {
	r io.Reader
	n *atomic.Uint64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(uint64(n))
	return n, err
}

// writeN writes n zero bytes to w, counting them.
func writeN(w io.Writer, n uint64, count *atomic.Uint64) error {
	for n > 0 {
		m := min(n, uint64(len(chunk)))
		k, err := w.Write(chunk[:m])
		count.Add(uint64(k))
		if err != nil {
			return err
		}
		n -= uint64(k)
	}
	return nil
}

// RunStream runs one perf request on a new stream of c: it uploads
// upload bytes and downloads download bytes, and fails unless exactly
// that many come back.
func RunStream(ctx context.Context, c *quic.Conn, upload, download uint64, counters *Counters) error {
	if counters == nil {
		counters = new(Counters)
	}
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { s.CancelRead(0); s.CancelWrite(0) })
	defer stop()
	var hdr [8]byte
	binary.BigEndian.PutUint64(hdr[:], download)
	errc := make(chan error, 1)
	go func() {
		if _, err := s.Write(hdr[:]); err != nil {
			errc <- err
			return
		}
		if err := writeN(s, upload, &counters.Sent); err != nil {
			errc <- err
			return
		}
		errc <- s.CloseWrite()
	}()
	got, err := io.Copy(io.Discard, countingReader{s, &counters.Received})
	if err != nil {
		return err
	}
	if err := <-errc; err != nil {
		return err
	}
	if uint64(got) != download {
		return fmt.Errorf("perf: received %d bytes, requested %d", got, download)
	}
	return ctx.Err()
}
