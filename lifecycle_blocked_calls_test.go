package quic

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestBlockedCallsWake blocks each public call that waits (Read, Write,
// AcceptStream, AcceptUniStream, OpenStreamSync, ReceiveDatagram, Drain,
// Listener.Accept) and checks that each way of ending it from another
// goroutine, locally or by the peer, returns it: cancels, deadlines,
// stream and connection closes, Transport and Listener closes.
func TestBlockedCallsWake(t *testing.T) {
	const window = 16 << 10
	small := &Config{InitialStreamReceiveWindow: window, MaxStreamReceiveWindow: window,
		InitialConnectionReceiveWindow: window, MaxConnectionReceiveWindow: window, MaxIncomingStreams: 2, EnableDatagrams: true}
	type scenario struct {
		name  string
		block func(p *connPair) (func() error, func()) // blocked call, waker
	}
	openAccepted := func(p *connPair) (*Stream, *Stream) {
		s, err := p.client.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("x"))
		ss, err := p.server.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s, ss
	}
	big := make([]byte, 1<<20)
	scenarios := []scenario{
		{"read/CancelRead", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Read(make([]byte, 10)); return err }, func() { s.CancelRead(5) }
		}},
		{"read/SetReadDeadline", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Read(make([]byte, 10)); return err }, func() { s.SetReadDeadline(time.Now().Add(-time.Second)) }
		}},
		{"read/Close", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Read(make([]byte, 10)); return err }, func() { s.Close() }
		}},
		{"read/peer reset", func(p *connPair) (func() error, func()) {
			s, ss := openAccepted(p)
			return func() error { _, err := s.Read(make([]byte, 10)); return err }, func() { ss.CancelWrite(7) }
		}},
		{"read/conn close", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Read(make([]byte, 10)); return err }, func() { p.client.CloseWithError(1, "") }
		}},
		{"read/peer conn close", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Read(make([]byte, 10)); return err }, func() { p.server.CloseWithError(1, "") }
		}},
		{"write/CancelWrite", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Write(big); return err }, func() { s.CancelWrite(5) }
		}},
		{"write/SetWriteDeadline", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Write(big); return err }, func() { s.SetWriteDeadline(time.Now().Add(-time.Second)) }
		}},
		{"write/peer STOP_SENDING", func(p *connPair) (func() error, func()) {
			s, ss := openAccepted(p)
			return func() error { _, err := s.Write(big); return err }, func() { ss.CancelRead(9) }
		}},
		{"write/conn close", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Write(big); return err }, func() { p.client.CloseWithError(1, "") }
		}},
		{"write/peer conn close", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Write(big); return err }, func() { p.server.CloseWithError(1, "") }
		}},
		{"accept/close", func(p *connPair) (func() error, func()) {
			return func() error { _, err := p.server.AcceptStream(context.Background()); return err }, func() { p.server.CloseWithError(1, "") }
		}},
		{"acceptuni/peer close", func(p *connPair) (func() error, func()) {
			return func() error { _, err := p.server.AcceptUniStream(context.Background()); return err }, func() { p.client.CloseWithError(1, "") }
		}},
		{"openstreamsync/close", func(p *connPair) (func() error, func()) {
			openAccepted(p)
			openAccepted(p)
			return func() error { _, err := p.client.OpenStreamSync(context.Background()); return err }, func() { p.client.CloseWithError(1, "") }
		}},
		{"openstreamsync/peer close", func(p *connPair) (func() error, func()) {
			openAccepted(p)
			openAccepted(p)
			return func() error { _, err := p.client.OpenStreamSync(context.Background()); return err }, func() { p.server.CloseWithError(1, "") }
		}},
		{"receivedatagram/close", func(p *connPair) (func() error, func()) {
			return func() error { _, err := p.client.ReceiveDatagram(context.Background()); return err }, func() { p.client.CloseWithError(1, "") }
		}},
		{"drain (WaitAcked's deprecated alias)/close", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			s.Write(make([]byte, 8<<10))
			return func() error { return p.client.Drain(context.Background()) }, func() { p.client.CloseWithError(1, "") }
		}},
		{"read/transport close", func(p *connPair) (func() error, func()) {
			s, _ := openAccepted(p)
			return func() error { _, err := s.Read(make([]byte, 10)); return err }, func() { go p.clientT.Close() }
		}},
		{"accept/listener close", func(p *connPair) (func() error, func()) {
			return func() error { _, err := p.listener.Accept(context.Background()); return err }, func() { p.listener.Close() }
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newConnPair(t, connPairOpts{Mem: true, Client: small, Server: small})
				call, wake := sc.block(p)
				done := make(chan error, 1)
				go func() { done <- call() }()
				synctest.Wait()
				select {
				case err := <-done:
					t.Fatalf("returned before the wake: %v", err)
				default:
				}
				wake()
				time.Sleep(5 * time.Second)
				synctest.Wait()
				select {
				case err := <-done:
					t.Logf("returned %v", err)
				default:
					t.Fatalf("still blocked")
				}
			})
		})
	}
}
