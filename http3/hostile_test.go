package http3

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// A HEADERS frame that declares more than the server's
// SETTINGS_MAX_FIELD_SECTION_SIZE allows for is answered with 431 at
// once: the server neither waits for nor buffers its payload (here the
// peer sends 4 KB of a declared 1 MiB and then nothing). RFC 9114,
// Section 4.2.2: the limit is on the decoded size, which an encoded
// section cannot exceed by more than Huffman coding's worst expansion.
func TestOversizedHeadersFrameNotBuffered(t *testing.T) {
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called")
	}), func(s *Server) { s.MaxHeaderBytes = 2048 })
	cc := rawConn(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	str, err := cc.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	str.Write(appendFrameHeader(nil, frameHeaders, 1<<20))
	str.Write(make([]byte, 4096))
	str.SetReadDeadline(time.Now().Add(5 * time.Second))
	f, err := readFrame(bufio.NewReader(str))
	if err != nil {
		t.Fatalf("no answer before the frame's end: %v", err)
	}
	fs, err := cc.decodeHeaders(ctx, str.StreamID(), f.Payload, nil)
	if err != nil || len(fs) == 0 || fs[0].Value != "431" {
		t.Fatalf("answer %v, %v; want 431", fs, err)
	}
}

// More blocked request streams than the server's
// SETTINGS_QPACK_BLOCKED_STREAMS is a connection error: "If a decoder
// encounters more blocked streams than it promised to support, it MUST
// treat this as a connection error of type QPACK_DECOMPRESSION_FAILED"
// (RFC 9204, Section 2.1.2). Each request here references a dynamic
// table entry the client never inserts.
func TestQPACKBlockedStreamsBeyondLimit(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called")
	}))
	cc := rawConn(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Required Insert Count 1 (encoded 2, RFC 9204, Section 4.5.1.1),
	// Base 1, then an indexed field line with relative index 0.
	section := []byte{0x02, 0x00, 0x80}
	var strs []*quic.Stream
	for i := 0; i <= ourQPACKBlockedStreams; i++ {
		str, err := cc.qc.OpenStreamSync(ctx)
		if err != nil {
			break // the connection closed
		}
		strs = append(strs, str)
		str.Write(appendHeadersFrame(nil, section))
	}
	select {
	case <-cc.qc.Context().Done():
	case <-ctx.Done():
		t.Fatalf("connection still open with %d blocked streams", len(strs))
	}
	var ae *quic.ApplicationError
	if err := context.Cause(cc.qc.Context()); !errors.As(err, &ae) || ae.Code != quic.ApplicationErrorCode(qpack.ErrDecompressionFailed) || !ae.Remote {
		t.Fatalf("connection closed by %v, want the server's QPACK_DECOMPRESSION_FAILED", err)
	}
	// Up to the limit, blocked streams were accepted.
	if len(strs) < ourQPACKBlockedStreams {
		t.Fatalf("connection closed after %d streams", len(strs))
	}
}
