package http3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/quicstack/quic"
)

// Why *slog.Logger rather than net/http's ErrorLog (*log.Logger): an
// operator filters by level (a handler's panic is an Error, a client's
// malformed request a Debug) and by attribute (remote address, stream ID,
// error code), which a *log.Logger cannot express; slog is in the
// standard library and quic-go's http3.Server has the same field. A
// *log.Logger's output can still be used: slog.New(slog.NewTextHandler(
// logger.Writer(), nil)).

// logPanic logs a handler's panic with its stack, as net/http does
// ("http: panic serving ADDR: VALUE\nSTACK"), unless it is
// http.ErrAbortHandler, the sentinel a handler panics with to abort a
// response silently.
func (sc *serverConn) logPanic(req *http.Request, str *quic.Stream, p any) {
	l := sc.srv.Logger
	if l == nil {
		return
	}
	if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
		return
	}
	const size = 64 << 10
	buf := make([]byte, size)
	buf = buf[:runtime.Stack(buf, false)]
	l.LogAttrs(context.Background(), slog.LevelError, "http3: panic serving "+sc.qc.RemoteAddr().String()+": "+fmt.Sprint(p),
		slog.String("remote", sc.qc.RemoteAddr().String()),
		slog.String("method", req.Method),
		slog.String("uri", req.RequestURI),
		slog.Int64("stream", int64(str.StreamID())),
		slog.String("reset", ErrCodeInternalError.String()),
		slog.String("stack", string(buf)))
}

// logConnError logs the connection errors this endpoint closes a
// connection with (the peer broke the protocol), at level Warn.
func (c *connection) logConnError(code ErrCode, reason string) {
	if c.log == nil {
		return
	}
	c.log.LogAttrs(context.Background(), slog.LevelWarn, "http3: closing the connection with "+code.String()+": "+reason,
		slog.String("remote", c.qc.RemoteAddr().String()),
		slog.String("code", code.String()),
		slog.String("reason", reason))
}

// logf logs msg at level with the connection's remote address.
func (sc *serverConn) logf(level slog.Level, msg string, attrs ...slog.Attr) {
	if l := sc.srv.Logger; l != nil {
		l.LogAttrs(context.Background(), level, msg, append(attrs, slog.String("remote", sc.qc.RemoteAddr().String()))...)
	}
}

// logRejected logs that a request was rejected because
// MaxConcurrentHandlers requests were being served: at level Warn, at
// most once a second (a server at its cap rejects many), with the count
// of rejections since the last message.
func (s *Server) logRejected() {
	n := s.logs.rejected.Add(1)
	if s.Logger == nil {
		return
	}
	now := time.Now().UnixNano()
	last := s.logs.rejectLogged.Load()
	if now-last < int64(time.Second) || !s.logs.rejectLogged.CompareAndSwap(last, now) {
		return
	}
	s.Logger.LogAttrs(context.Background(), slog.LevelWarn,
		"http3: requests rejected with H3_REQUEST_REJECTED: MaxConcurrentHandlers reached",
		slog.Int("max_concurrent_handlers", s.MaxConcurrentHandlers),
		slog.Int64("rejected_total", n))
}

// serverLogState is the Server's logging state.
type serverLogState struct {
	rejected     atomic.Int64 // requests rejected at MaxConcurrentHandlers
	rejectLogged atomic.Int64 // when that was last logged (Unix ns)
}

// requestContext returns the context of a request on str: a child of the
// stream's context or, with Server.ConnContext, of the connection's
// context, also cancelled when the stream's is done.
func (sc *serverConn) requestContext(str *quic.Stream) (context.Context, context.CancelFunc) {
	if sc.ctx == nil {
		return context.WithCancel(str.Context())
	}
	ctx, cancel := context.WithCancel(sc.ctx)
	stop := context.AfterFunc(str.Context(), cancel)
	return ctx, func() { stop(); cancel() }
}
