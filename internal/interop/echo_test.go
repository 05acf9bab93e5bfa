package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// duplexStream is what every implementation's stream offers.
type duplexStream interface {
	io.ReadWriter
	CloseWrite() error
}

// peerConn opens and accepts streams and closes with a code.
type peerConn interface {
	openStream(ctx context.Context) (duplexStream, error)
	acceptStream(ctx context.Context) (duplexStream, error)
	closeWithError(code uint64, reason string)
}

// testData returns n deterministic bytes.
func testData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

// serveEcho accepts streams on c and echoes each one back until its FIN.
func serveEcho(ctx context.Context, c peerConn) {
	for {
		s, err := c.acceptStream(ctx)
		if err != nil {
			return
		}
		go func() {
			io.Copy(s, s)
			s.CloseWrite()
			// x/net/quic counts a stream closed, and raises MAX_STREAMS,
			// only once the application also closed its read side.
			if cr, ok := s.(interface{ CloseRead() error }); ok {
				cr.CloseRead()
			}
		}()
	}
}

// echoOnce sends data on a new stream and checks it comes back.
func echoOnce(ctx context.Context, c peerConn, data []byte) error {
	s, err := c.openStream(ctx)
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := s.Write(data)
		if err == nil {
			err = s.CloseWrite()
		}
		errc <- err
	}()
	got, err := io.ReadAll(s)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if err := <-errc; err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("echo of %d bytes came back as %d bytes (sha %x vs %x)", len(data), len(got), sha256.Sum256(data), sha256.Sum256(got))
	}
	return nil
}

// runEchoMatrix checks, between a client and an echoing server: a 10 MB
// echo over one stream (10 MB down and up), and 2,000 concurrent small
// streams through the server's stream limit.
func runEchoMatrix(t *testing.T, client peerConn) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	if err := echoOnce(ctx, client, testData(10<<20)); err != nil {
		t.Fatalf("10 MB echo: %v", err)
	}
	t.Logf("10 MB each way in %v", time.Since(start))

	start = time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 2000)
	sem := make(chan struct{}, 200)
	for i := 0; i < 2000; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := echoOnce(ctx, client, []byte(fmt.Sprintf("stream %d", i))); err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("2000 streams in %v", time.Since(start))
}
