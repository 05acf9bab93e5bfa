package interop

import (
	"context"
	"crypto/tls"

	quicgo "github.com/quic-go/quic-go"
	ours "github.com/quicstack/quic"
	xquic "golang.org/x/net/quic"
)

// --- quicstack/quic ---

type ourConn struct{ c *ours.Conn }

func (o ourConn) openStream(ctx context.Context) (duplexStream, error) {
	return o.c.OpenStreamSync(ctx)
}
func (o ourConn) acceptStream(ctx context.Context) (duplexStream, error) {
	return o.c.AcceptStream(ctx)
}
func (o ourConn) closeWithError(code uint64, reason string) {
	o.c.CloseWithError(ours.ApplicationErrorCode(code), reason)
}

// --- quic-go ---

type quicGoConn struct{ c *quicgo.Conn }

type quicGoStream struct{ *quicgo.Stream }

// CloseWrite: quic-go's Close closes only the send direction.
func (s quicGoStream) CloseWrite() error { return s.Stream.Close() }

func (q quicGoConn) openStream(ctx context.Context) (duplexStream, error) {
	s, err := q.c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return quicGoStream{s}, nil
}
func (q quicGoConn) acceptStream(ctx context.Context) (duplexStream, error) {
	s, err := q.c.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return quicGoStream{s}, nil
}
func (q quicGoConn) closeWithError(code uint64, reason string) {
	q.c.CloseWithError(quicgo.ApplicationErrorCode(code), reason)
}

// --- golang.org/x/net/quic ---

type xConn struct{ c *xquic.Conn }

// xStream flushes on every write: x/net/quic buffers until Flush.
type xStream struct{ *xquic.Stream }

func (s xStream) Write(p []byte) (int, error) {
	n, err := s.Stream.Write(p)
	if err == nil {
		err = s.Stream.Flush()
	}
	return n, err
}

func (x xConn) openStream(ctx context.Context) (duplexStream, error) {
	s, err := x.c.NewStream(ctx)
	if err != nil {
		return nil, err
	}
	return xStream{s}, nil
}
func (x xConn) acceptStream(ctx context.Context) (duplexStream, error) {
	s, err := x.c.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return xStream{s}, nil
}
func (x xConn) closeWithError(code uint64, reason string) { x.c.Abort(nil) }

var _ = tls.VersionTLS13
