package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
)

// Reliable stream resets (RESET_STREAM_AT,
// draft-ietf-quic-reliable-stream-reset) with quic-go, which implements
// them behind Config.EnableStreamResetPartialDelivery (ours:
// Config.EnableResetStreamAt): in each role, each side resets a stream it
// sends on, keeping a reliable prefix, and the other reads that prefix
// and then the reset's code.

const (
	resetAtReliable = 100_000
	resetAtWritten  = 300_000
)

func resetAtData() []byte {
	b := make([]byte, resetAtWritten)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// readReliablePrefix reads r until an error and checks that it delivered
// at least the reliable prefix, intact, and then the peer's reset; code
// returns the reset's code from the error.
func readReliablePrefix(r io.Reader, code func(error) (uint64, bool)) error {
	data := resetAtData()
	got, err := io.ReadAll(r)
	if err == nil {
		return fmt.Errorf("stream ended with a FIN after %d bytes, not with the reset", len(got))
	}
	if len(got) < resetAtReliable || !bytes.Equal(got, data[:len(got)]) {
		return fmt.Errorf("%d bytes read (intact: %v), want at least the %d reliable ones", len(got), bytes.Equal(got, data[:min(len(got), len(data))]), resetAtReliable)
	}
	if c, ok := code(err); !ok || c != 5 {
		return fmt.Errorf("after %d bytes: %v, want the peer's reset with code 5", len(got), err)
	}
	return nil
}

func oursResetCode(err error) (uint64, bool) {
	var se *ours.StreamError
	if errors.As(err, &se) && se.Remote {
		return uint64(se.Code), true
	}
	return 0, false
}

func quicgoResetCode(err error) (uint64, bool) {
	var se *quicgo.StreamError
	if errors.As(err, &se) && se.Remote {
		return uint64(se.ErrorCode), true
	}
	return 0, false
}

// oursSendResetAt opens a stream on c, writes the data and resets it
// keeping the reliable prefix.
func oursSendResetAt(ctx context.Context, c *ours.Conn) error {
	s, err := c.OpenUniStreamSync(ctx)
	if err != nil {
		return err
	}
	if _, err := s.Write(resetAtData()); err != nil {
		return err
	}
	s.CancelWriteAt(5, resetAtReliable)
	return nil
}

// quicgoSendResetAt does the same with quic-go's API: the data written
// before SetReliableBoundary is delivered despite CancelWrite.
func quicgoSendResetAt(ctx context.Context, c *quicgo.Conn) error {
	s, err := c.OpenUniStreamSync(ctx)
	if err != nil {
		return err
	}
	data := resetAtData()
	if _, err := s.Write(data[:resetAtReliable]); err != nil {
		return err
	}
	s.SetReliableBoundary()
	if _, err := s.Write(data[resetAtReliable:]); err != nil {
		return err
	}
	s.CancelWrite(5)
	return nil
}

// runResetAtExchange resets a stream each way and checks what each
// receiver read.
func runResetAtExchange(t *testing.T, ctx context.Context, o *ours.Conn, q *quicgo.Conn) {
	t.Helper()
	errs := make(chan error, 4)
	go func() { errs <- oursSendResetAt(ctx, o) }()
	go func() { errs <- quicgoSendResetAt(ctx, q) }()
	go func() {
		s, err := q.AcceptUniStream(ctx)
		if err != nil {
			errs <- err
			return
		}
		if err := readReliablePrefix(s, quicgoResetCode); err != nil {
			errs <- fmt.Errorf("quic-go reading our RESET_STREAM_AT: %w", err)
			return
		}
		errs <- nil
	}()
	go func() {
		s, err := o.AcceptUniStream(ctx)
		if err != nil {
			errs <- err
			return
		}
		if err := readReliablePrefix(s, oursResetCode); err != nil {
			errs <- fmt.Errorf("we reading quic-go's RESET_STREAM_AT: %w", err)
			return
		}
		errs <- nil
	}()
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestResetStreamAtOurClientQuicGoServer(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := quicgo.ListenAddr("127.0.0.1:0", stls, &quicgo.Config{EnableStreamResetPartialDelivery: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := acceptOne(ctx, l.Accept)
	c, err := ours.DialAddr(ctx, l.Addr().String(), ctls, &ours.Config{EnableResetStreamAt: true})
	if err != nil {
		t.Fatalf("dial quic-go: %v", err)
	}
	defer c.CloseWithError(0, "")
	if !c.ConnectionState().SupportsResetStreamAt {
		t.Fatal("our client: RESET_STREAM_AT not negotiated")
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("quic-go did not accept")
	}
	defer srv.CloseWithError(0, "")
	if s := srv.ConnectionState().SupportsStreamResetPartialDelivery; !s.Local || !s.Remote {
		t.Fatalf("quic-go server: RESET_STREAM_AT support %+v", s)
	}
	runResetAtExchange(t, ctx, c, srv)
}

func TestResetStreamAtQuicGoClientOurServer(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := ours.ListenAddr("127.0.0.1:0", stls, &ours.Config{EnableResetStreamAt: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := acceptOne(ctx, l.Accept)
	c, err := quicgo.DialAddr(ctx, l.Addr().String(), ctls, &quicgo.Config{EnableStreamResetPartialDelivery: true})
	if err != nil {
		t.Fatalf("quic-go dial: %v", err)
	}
	defer c.CloseWithError(0, "")
	srv := <-accepted
	if srv == nil {
		t.Fatal("our server did not accept")
	}
	defer srv.CloseWithError(0, "")
	if s := c.ConnectionState().SupportsStreamResetPartialDelivery; !s.Local || !s.Remote {
		t.Fatalf("quic-go client: RESET_STREAM_AT support %+v", s)
	}
	runResetAtExchange(t, ctx, srv, c)
}

// Against a quic-go that does not advertise reset_stream_at, CancelWriteAt
// resets the stream with RESET_STREAM: quic-go sees the reset's code, and
// no frame it did not negotiate.
func TestResetStreamAtNotNegotiatedWithQuicGo(t *testing.T) {
	ctls, stls := testTLS(t)
	l, err := quicgo.ListenAddr("127.0.0.1:0", stls, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := acceptOne(ctx, l.Accept)
	c, err := ours.DialAddr(ctx, l.Addr().String(), ctls, &ours.Config{EnableResetStreamAt: true})
	if err != nil {
		t.Fatalf("dial quic-go: %v", err)
	}
	defer c.CloseWithError(0, "")
	if c.ConnectionState().SupportsResetStreamAt {
		t.Fatal("RESET_STREAM_AT negotiated with a quic-go that does not enable it")
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("quic-go did not accept")
	}
	if err := oursSendResetAt(ctx, c); err != nil {
		t.Fatal(err)
	}
	s, err := srv.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(s)
	if code, ok := quicgoResetCode(err); !ok || code != 5 {
		t.Errorf("quic-go read %v, want the reset with code 5", err)
	}
	select {
	case <-srv.Context().Done():
		t.Errorf("quic-go closed the connection: %v", context.Cause(srv.Context()))
	default:
	}
}

// acceptOne accepts one connection with accept in a goroutine of its own
// and sends it on the returned channel, which is closed without a value if
// accepting fails.
func acceptOne[C any](ctx context.Context, accept func(context.Context) (C, error)) chan C {
	accepted := make(chan C, 1)
	go func() {
		c, err := accept(ctx)
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	return accepted
}
