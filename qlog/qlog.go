// Package qlog records QUIC connections as qlog traces: JSON Text
// Sequences (".sqlog" files, RFC 7464) of the events defined by
// draft-ietf-quic-qlog-main-schema and draft-ietf-quic-qlog-quic-events,
// which tools such as qvis (https://qvis.quictools.info) display:
// connection start and close, every packet sent, received, dropped or
// lost with its frames, RTT and congestion-window updates, key updates
// and transport parameters, and the HTTP/3 frames and settings of package
// http3 connections (draft-ietf-quic-qlog-h3-events).
//
// Set the hook on a quic.Config:
//
//	conf := &quic.Config{Tracer: qlog.DirTracer("/tmp/qlog")}
//
// or honour the QLOGDIR environment variable, as interop tools do:
//
//	conf := &quic.Config{Tracer: qlog.FromEnv()} // nil when QLOGDIR is unset
//
// Tracing costs one bounds-checked copy of each packet's payload and the
// JSON encoding of its frames, written through a 256 KiB buffer; with no
// tracer set, the connection does no tracing work at all.
package qlog

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/quicstack/quic"
	iqlog "github.com/quicstack/quic/internal/qlog"
)

// A TracerHook makes a connection's tracer: the type of quic.Config's
// Tracer field.
type TracerHook = func(ctx context.Context, isClient bool, odcid quic.ConnectionID) *quic.Tracer

// NewTracer returns a quic.Tracer writing one connection's trace to w.
// The trace ends with the connection's quic:connection_closed event: w is
// written out and closed then, before the Close call that closed the
// connection returns (Conn.CloseWithError, quic.Transport.Close,
// http3.Transport.Close, ...), so that a program that exits right after
// leaves complete traces. What follows the close (packets of the closing
// period, HTTP/3 frames still parsed by the application) is not traced.
// odcid names the trace (its group ID).
func NewTracer(w io.WriteCloser, isClient bool, odcid quic.ConnectionID) *quic.Tracer {
	vantage := "server"
	if isClient {
		vantage = "client"
	}
	title := fmt.Sprintf("quicstack %s %s", vantage, odcid)
	return iqlog.NewTracer(iqlog.NewWriter(w, vantage, odcid.String(), title), isClient)
}

// DirTracer returns a Config.Tracer hook that writes each connection's
// trace to a file in dir (created if needed) named after its original
// destination connection ID and role, such as
// "8f3a...c1_client.sqlog". A connection whose file cannot be created is
// not traced.
func DirTracer(dir string) TracerHook {
	return func(_ context.Context, isClient bool, odcid quic.ConnectionID) *quic.Tracer {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil
		}
		role := "server"
		if isClient {
			role = "client"
		}
		f, err := os.Create(filepath.Join(dir, odcid.String()+"_"+role+".sqlog"))
		if err != nil {
			return nil
		}
		return NewTracer(f, isClient, odcid)
	}
}

// FromEnv returns DirTracer of the directory named by the QLOGDIR
// environment variable, or nil when it is unset or empty.
func FromEnv() TracerHook {
	if dir := os.Getenv("QLOGDIR"); dir != "" {
		return DirTracer(dir)
	}
	return nil
}
