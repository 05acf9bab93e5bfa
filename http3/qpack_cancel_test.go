package http3

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// qpackPeer is a client that speaks HTTP/3 by hand: it writes its encoder
// stream itself and records the server's decoder stream.
type qpackPeer struct {
	qc  *quic.Conn
	enc *quic.SendStream

	mu  sync.Mutex
	dec []byte // the server's decoder stream so far
	got chan struct{}
}

func newQPACKPeer(t *testing.T, e *testEnv) *qpackPeer {
	p := &qpackPeer{qc: bareConn(t, e), got: make(chan struct{}, 1)}
	openUni(t, p.qc, settingsStream(), false)
	p.enc = openUni(t, p.qc, []byte{streamTypeEncoder}, false)
	openUni(t, p.qc, []byte{streamTypeDecoder}, false)
	go func() {
		for {
			rs, err := p.qc.AcceptUniStream(p.qc.Context())
			if err != nil {
				return
			}
			go func() {
				br := bufio.NewReader(rs)
				if typ, err := readVarint(br); err != nil || typ != streamTypeDecoder {
					return
				}
				buf := make([]byte, 256)
				for {
					n, err := br.Read(buf)
					p.mu.Lock()
					p.dec = append(p.dec, buf[:n]...)
					p.mu.Unlock()
					select {
					case p.got <- struct{}{}:
					default:
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}

// decoderInstructions parses the decoder stream so far (instructions with
// values below 64 only).
func (p *qpackPeer) decoderInstructions() (acks, cancels map[uint64]int, increments int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	acks, cancels = map[uint64]int{}, map[uint64]int{}
	for _, b := range p.dec {
		switch {
		case b&0x80 != 0:
			acks[uint64(b&0x7f)]++
		case b&0x40 != 0:
			cancels[uint64(b&0x3f)]++
		default:
			increments += int(b)
		}
	}
	return
}

// waitFor waits until cond holds for the decoder stream, or 5 seconds.
func (p *qpackPeer) waitFor(cond func(acks, cancels map[uint64]int, increments int) bool) bool {
	deadline := time.After(5 * time.Second)
	for {
		if cond(p.decoderInstructions()) {
			return true
		}
		select {
		case <-p.got:
		case <-deadline:
			return false
		}
	}
}

// blockedRequest is a GET whose :authority is the dynamic table entry 0,
// not inserted yet: Required Insert Count 1 (encoded 2 with the server's
// 4096-byte table, RFC 9204, Section 4.5.1.1), Base 1, :method GET,
// :scheme https, :path / from the static table, then relative index 0.
var blockedRequest = []byte{0x02, 0x00, 0xd1, 0xd7, 0xc1, 0x80}

// insertAuthority is the encoder stream that unblocks blockedRequest: Set
// Dynamic Table Capacity 4096 and Insert with Name Reference to the
// static :authority, "localhost".
var insertAuthority = append([]byte{0x3f, 0xe1, 0x1f, 0xc0, 0x09}, "localhost"...)

// Defect 9: "When an endpoint receives a stream reset before the end of a
// stream or before all encoded field sections are processed on that
// stream, or when it abandons reading of a stream, it generates a Stream
// Cancellation instruction" (RFC 9204, Section 2.2.2.2). A request stream
// reset while its header section is blocked is cancelled at once, and
// its section is never decoded or acknowledged afterwards.
func TestQPACKStreamCancellationOnReset(t *testing.T) {
	handled := make(chan string, 4)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handled <- r.Host
	}))
	p := newQPACKPeer(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	str, err := p.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := uint64(str.StreamID())
	str.Write(appendHeadersFrame(nil, blockedRequest))
	str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
	if !p.waitFor(func(_, cancels map[uint64]int, _ int) bool { return cancels[id] > 0 }) {
		t.Fatalf("no Stream Cancellation for the reset stream %d", id)
	}
	// The insertion arrives; a later request that uses it is served, and
	// the reset stream's section stays unacknowledged.
	p.enc.Write(insertAuthority)
	str2, err := p.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	str2.Write(appendHeadersFrame(nil, blockedRequest))
	str2.CloseWrite()
	select {
	case host := <-handled:
		if host != "localhost" {
			t.Errorf("second request: host %q", host)
		}
	case <-ctx.Done():
		t.Fatal("second request not served")
	}
	id2 := uint64(str2.StreamID())
	if !p.waitFor(func(acks, _ map[uint64]int, _ int) bool { return acks[id2] > 0 }) {
		t.Fatalf("no Section Acknowledgment for stream %d", id2)
	}
	if acks, _, _ := p.decoderInstructions(); acks[id] > 0 {
		t.Errorf("the reset stream's section was acknowledged")
	}
	select {
	case host := <-handled:
		t.Errorf("the reset request reached the handler (host %q)", host)
	default:
	}
}

// Defect 9: a server that answers 431 to a header section too large to
// read stops reading the stream, and says so to the client's encoder,
// which may have field sections with dynamic table references on it.
func TestQPACKStreamCancellationAfter431(t *testing.T) {
	e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called")
	}), func(s *Server) { s.MaxHeaderBytes = 2048 })
	p := newQPACKPeer(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	str, err := p.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := uint64(str.StreamID())
	str.Write(append(appendFrameHeader(nil, frameHeaders, 100000), blockedRequest...))
	if !p.waitFor(func(_, cancels map[uint64]int, _ int) bool { return cancels[id] > 0 }) {
		t.Fatal("no Stream Cancellation after 431")
	}
}

// A response header section blocked on the dynamic table, whose stream
// the server then resets, fails the request with that reset (named by its
// HTTP/3 code), not with a cancellation the caller never asked for.
func TestClientBlockedResponseReset(t *testing.T) {
	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			return
		}
		// Required Insert Count 1 (encoded 2), Base 1, :status 200 from
		// the static table (index 25), then a reference to entry 0,
		// which the server never inserts.
		s.str.Write(appendHeadersFrame(nil, []byte{0x02, 0x00, 0xd9, 0x80}))
		time.Sleep(50 * time.Millisecond) // let the section block first
		s.str.CancelWrite(quic.StreamErrorCode(ErrCodeInternalError))
	})
	tr := &Transport{TLSClientConfig: rs.tr.TLSClientConfig}
	defer tr.Close()
	req, _ := http.NewRequest("GET", rs.url+"/", nil)
	_, err := tr.RoundTrip(req)
	var se *quic.StreamError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "H3_INTERNAL_ERROR") {
		t.Errorf("RoundTrip: %v, want the server's reset with H3_INTERNAL_ERROR", err)
	}
}
