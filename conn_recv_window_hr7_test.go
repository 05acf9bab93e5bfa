package quic

import (
	"bytes"
	"context"
	"io"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// TestSynctestHugeMaxStreamReceiveWindowKeepsData (hostile review of the
// receive path): a server whose MaxStreamReceiveWindow is "no cap"
// (math.MaxUint64) and whose initial stream window is 20 MiB lets the
// client send 18 MiB before it reads. The peer stays within the window it
// was given, so the connection must not fail, and every byte must arrive:
// "A receiver MUST NOT ... [fail a peer] that stays within the limit"
// - "An endpoint MUST terminate a connection with an error of type
// FLOW_CONTROL_ERROR if it receives more data than the largest maximum
// stream data that it has sent" (RFC 9000, Section 19.10) and nothing
// less.
func TestSynctestHugeMaxStreamReceiveWindowKeepsData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true, Server: &Config{
			InitialStreamReceiveWindow: 20 << 20, MaxStreamReceiveWindow: math.MaxUint64,
			InitialConnectionReceiveWindow: 64 << 20, MaxConnectionReceiveWindow: 64 << 20,
		}})
		const size = 18 << 20
		data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
		s, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			s.Write(data)
			s.CloseWrite()
		}()
		ss, err := p.server.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The server reads only once the client sent everything.
		time.Sleep(30 * time.Second)
		got, err := io.ReadAll(ss)
		if err != nil {
			t.Fatalf("read after %d bytes: %v", len(got), err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes, want the %d sent", len(got), len(data))
		}
	})
}

// TestSynctestHugeReceiveWindowsHandshake (hostile review): receive
// windows configured as "unlimited" (math.MaxUint64) are sent in the
// transport parameters as variable-length integers, which hold at most
// 2^62-1 (RFC 9000, Section 16): the handshake must complete and data
// flow, not panic the connection's goroutine.
func TestSynctestHugeReceiveWindowsHandshake(t *testing.T) {
	for _, cfg := range []*Config{
		{InitialConnectionReceiveWindow: math.MaxUint64, MaxConnectionReceiveWindow: math.MaxUint64},
		{InitialStreamReceiveWindow: math.MaxUint64},
	} {
		synctest.Test(t, func(t *testing.T) {
			p := newConnPair(t, connPairOpts{Mem: true, Server: cfg})
			s, err := p.client.OpenStreamSync(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				s.Write([]byte("hello"))
				s.CloseWrite()
			}()
			ss, err := p.server.AcceptStream(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(ss)
			if err != nil || string(got) != "hello" {
				t.Fatalf("read %q, %v; want hello", got, err)
			}
		})
	}
}
