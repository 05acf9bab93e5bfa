package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// TestEncoderStreamBlockedRequestsProceed: a peer that never reads our
// QPACK encoder stream leaves it blocked on flow control for good. That
// stream is a critical stream, but the requests below never need its
// bytes: the peer allows no blocked streams, so no field section may
// reference an entry the peer has not acknowledged ("An encoder MUST limit
// the number of streams that could become blocked to the value of
// SETTINGS_QPACK_BLOCKED_STREAMS at all times.", RFC 9204, Section 2.1.2).
// Requests
// must proceed; before the encoder-stream writes left the QPACK lock, the
// first request that produced an insertion wrote it under the lock and
// every other request waited for that lock behind the blocked stream.
func TestEncoderStreamBlockedRequestsProceed(t *testing.T) {
	cert, pool := testCert(t)
	// A small stream window: the peer grants no more credit on streams it
	// does not read.
	l, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{NextProtoH3}},
		&quic.Config{InitialStreamReceiveWindow: 16 << 10, MaxStreamReceiveWindow: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go serveIgnoringEncoderStream(l)

	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"}}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	url := "https://" + l.Addr().String() + "/"
	get := func(ctx context.Context, cookie string) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && string(b) != "ok" {
			err = fmt.Errorf("body %q", b)
		}
		return err
	}
	if err := get(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	c := clientConnOf(t, tr)
	<-c.peerSettingsDone

	// Fill the encoder stream's send buffer with Set Dynamic Table
	// Capacity instructions of one byte each (capacity 0; the peer never
	// reads them), then leave a writer blocked with more: the stream is
	// blocked on flow control from now on.
	enc := c.encStream
	// The connection's own writer must be done with what the first
	// request queued first: the deadline below would fail its write.
	c.encW.mu.Lock()
	queued := c.encW.queued
	c.encW.mu.Unlock()
	if err := c.encW.wait(context.Background(), queued); err != nil {
		t.Fatal(err)
	}
	noops := []byte(strings.Repeat("\x20", 64<<10))
	enc.SetWriteDeadline(time.Unix(1, 0)) // writes what fits without waiting
	for {
		if _, err := enc.Write(noops); err != nil {
			break
		}
	}
	enc.SetWriteDeadline(time.Time{})
	go enc.Write(noops) // returns when the connection closes

	// Requests whose cookies the encoder inserts into the dynamic table,
	// producing encoder-stream instructions. A generous bound only turns
	// the old deadlock into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- get(ctx, fmt.Sprintf("session=%d-%s", i, strings.Repeat("v", 600)))
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// Closing the connection ends the blocked write and the stall.
		t.Fatal("requests stalled behind the blocked encoder stream")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("request while the encoder stream is blocked: %v", err)
		}
	}
}

// clientConnOf returns the one connection tr has.
func clientConnOf(t *testing.T, tr *Transport) *clientConn {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, call := range tr.conns {
		if call.cc != nil {
			return call.cc
		}
	}
	t.Fatal("no connection")
	return nil
}

// serveIgnoringEncoderStream is an HTTP/3 server that advertises a QPACK
// dynamic table but no blocked streams, never reads the peer's
// unidirectional streams (so the client's encoder stream gets no more
// flow-control credit than the initial window) and answers every request
// with 200 "ok", encoded with the static table only.
func serveIgnoringEncoderStream(l *quic.Listener) {
	for {
		qc, err := l.Accept(context.Background())
		if err != nil {
			return
		}
		go func() {
			ctrl, err := qc.OpenUniStream()
			if err != nil {
				return
			}
			ctrl.Write(appendSettingsFrame(appendVarint(nil, streamTypeControl), settings{QPACKMaxTableCapacity: 4096}))
			go func() {
				var held []*quic.ReceiveStream // never read
				for {
					rs, err := qc.AcceptUniStream(qc.Context())
					if err != nil {
						return
					}
					held = append(held, rs)
				}
			}()
			enc := qpack.NewEncoder(qpack.EncoderConfig{}) // static only: no peer settings
			dec := qpack.NewDecoder(qpack.DecoderConfig{MaxTableCapacity: 4096})
			var mu sync.Mutex
			for {
				str, err := qc.AcceptStream(qc.Context())
				if err != nil {
					return
				}
				go func() {
					defer str.Close()
					br := bufio.NewReader(str)
					typ, length, err := readFrameHeader(br)
					if err != nil || typ != frameHeaders {
						return
					}
					p, err := readPayload(br, length)
					if err != nil {
						return
					}
					mu.Lock()
					_, err = dec.DecodeFieldSection(uint64(str.StreamID()), p, nil)
					block := enc.EncodeFieldSection(nil, uint64(str.StreamID()), []qpack.HeaderField{{Name: ":status", Value: "200"}})
					mu.Unlock()
					if err != nil {
						str.CancelWrite(quic.StreamErrorCode(ErrCodeInternalError))
						return
					}
					b := appendHeadersFrame(nil, block)
					b = append(appendFrameHeader(b, frameData, 2), "ok"...)
					str.Write(b)
				}()
			}
		}()
	}
}
