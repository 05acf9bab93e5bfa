package quic

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
)

// Stream.Close closes both directions (io.Closer, net.Conn), unlike
// quic-go's, which closes only the sending one. A Read after Close, and
// a Read that Close interrupts, fail with a *StreamError whose message
// says so and names CloseWrite; the data written before Close still
// reaches the peer with a FIN.
func TestStreamReadAfterCloseSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newConnPair(t, connPairOpts{Mem: true})
		ctx := context.Background()
		got := make(chan string, 1)
		go func() {
			s, err := p.server.AcceptStream(ctx)
			if err != nil {
				got <- err.Error()
				return
			}
			b, err := io.ReadAll(s)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- string(b)
		}()
		s, err := p.client.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("request"))
		blocked := make(chan error, 1)
		go func() {
			_, err := s.Read(make([]byte, 10))
			blocked <- err
		}()
		synctest.Wait()
		s.Close()
		if msg := <-got; msg != "request" {
			t.Errorf("the peer read %q, want the data written before Close", msg)
		}
		for i, err := range []error{<-blocked, func() error { _, err := s.Read(make([]byte, 10)); return err }()} {
			var se *StreamError
			if !errors.As(err, &se) || se.Remote {
				t.Fatalf("read %d: %v, want a local *StreamError", i, err)
			}
			for _, want := range []string{"after Close", "both directions", "CloseWrite"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("read %d: %q does not say %q", i, err, want)
				}
			}
		}
		// CancelRead is not Close: its error stays the plain one.
		s2, err := p.client.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s2.CancelRead(7)
		if _, err := s2.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "after Close") {
			t.Errorf("Read after CancelRead: %v", err)
		}
	})
}
