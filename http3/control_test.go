package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// bareConn dials the test server with a QUIC connection that speaks no
// HTTP/3 by itself, for sending raw unidirectional streams.
func bareConn(t *testing.T, e *testEnv) *quic.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	qc, err := quic.DialAddr(ctx, e.addr, &tls.Config{RootCAs: e.pool, ServerName: "localhost", NextProtos: []string{"h3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	return qc
}

func openUni(t *testing.T, qc *quic.Conn, b []byte, fin bool) *quic.SendStream {
	t.Helper()
	s, err := qc.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(b); err != nil {
		t.Fatal(err)
	}
	if fin {
		s.CloseWrite()
	}
	return s
}

// closeCode waits for the server to close qc and returns the code.
func closeCode(t *testing.T, qc *quic.Conn) ErrCode {
	t.Helper()
	select {
	case <-qc.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server did not close the connection")
	}
	var ae *quic.ApplicationError
	if err := context.Cause(qc.Context()); !errors.As(err, &ae) || !ae.Remote {
		t.Fatalf("closed with %v", err)
	}
	return ErrCode(ae.Code)
}

// waitServerEncoderStream waits for the first instruction on the
// server's QPACK encoder stream.
func waitServerEncoderStream(t *testing.T, qc *quic.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		rs, err := qc.AcceptUniStream(ctx)
		if err != nil {
			t.Fatalf("no encoder stream from the server: %v", err)
		}
		b := make([]byte, 2)
		rs.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(rs, b); err == nil && b[0] == streamTypeEncoder {
			return
		}
	}
}

func settingsStream() []byte {
	return appendSettingsFrame(appendVarint(nil, streamTypeControl), settings{})
}

func TestControlStreamRules(t *testing.T) {
	e := newTestEnv(t, http.NotFoundHandler())
	for _, tc := range []struct {
		name string
		send func(qc *quic.Conn)
		code ErrCode
	}{
		{"first frame not SETTINGS", func(qc *quic.Conn) {
			openUni(t, qc, appendIDFrame(appendVarint(nil, streamTypeControl), frameGoaway, 0), false)
		}, ErrCodeMissingSettings},
		// Defect 11: "If the first frame of the control stream is any
		// other frame type, this MUST be treated as a connection error
		// of type H3_MISSING_SETTINGS." (RFC 9114, Section 6.2.1), even
		// a frame of a reserved (grease) type that would be ignored
		// later.
		{"grease frame before SETTINGS", func(qc *quic.Conn) {
			b := append(appendFrameHeader(appendVarint(nil, streamTypeControl), 0x21, 1), 0)
			openUni(t, qc, appendSettingsFrame(b, settings{}), false)
		}, ErrCodeMissingSettings},
		{"unknown frame before SETTINGS", func(qc *quic.Conn) {
			b := appendFrameHeader(appendVarint(nil, streamTypeControl), 0x3f, 0)
			openUni(t, qc, appendSettingsFrame(b, settings{}), false)
		}, ErrCodeMissingSettings},
		// Defect 10: "A MAX_PUSH_ID frame cannot reduce the maximum push
		// ID; receipt of a MAX_PUSH_ID frame that contains a smaller
		// value than previously received MUST be treated as a connection
		// error of type H3_ID_ERROR." (RFC 9114, Section 7.2.7)
		{"MAX_PUSH_ID decreases", func(qc *quic.Conn) {
			b := appendIDFrame(settingsStream(), frameMaxPushID, 10)
			openUni(t, qc, appendIDFrame(b, frameMaxPushID, 9), false)
		}, ErrCodeIDError},
		{"second control stream", func(qc *quic.Conn) {
			openUni(t, qc, settingsStream(), false)
			openUni(t, qc, settingsStream(), false)
		}, ErrCodeStreamCreationError},
		{"control stream closed", func(qc *quic.Conn) {
			openUni(t, qc, settingsStream(), true)
		}, ErrCodeClosedCriticalStream},
		{"control stream reset", func(qc *quic.Conn) {
			// SETTINGS with a QPACK table: the server's encoder stream
			// sets its capacity once it has read them, so the stream is
			// known to be the control stream before it is reset (a
			// stream reset before its type arrives is nothing).
			s := openUni(t, qc, appendSettingsFrame(appendVarint(nil, streamTypeControl), settings{QPACKMaxTableCapacity: 4096}), false)
			waitServerEncoderStream(t, qc)
			s.CancelWrite(0x100)
		}, ErrCodeClosedCriticalStream},
		{"encoder stream closed", func(qc *quic.Conn) {
			openUni(t, qc, appendVarint(nil, streamTypeEncoder), true)
		}, ErrCodeClosedCriticalStream},
		{"second decoder stream", func(qc *quic.Conn) {
			openUni(t, qc, appendVarint(nil, streamTypeDecoder), false)
			openUni(t, qc, appendVarint(nil, streamTypeDecoder), false)
		}, ErrCodeStreamCreationError},
		{"duplicate setting", func(qc *quic.Conn) {
			b := appendVarint(nil, streamTypeControl)
			b = appendFrameHeader(b, frameSettings, 4)
			b = append(b, 0x6, 0x1, 0x6, 0x1)
			openUni(t, qc, b, false)
		}, ErrCodeSettingsError},
		{"HTTP/2 setting", func(qc *quic.Conn) {
			b := appendVarint(nil, streamTypeControl)
			b = appendFrameHeader(b, frameSettings, 2)
			b = append(b, 0x2, 0x0)
			openUni(t, qc, b, false)
		}, ErrCodeSettingsError},
		{"second SETTINGS", func(qc *quic.Conn) {
			openUni(t, qc, appendSettingsFrame(settingsStream(), settings{}), false)
		}, ErrCodeFrameUnexpected},
		{"DATA on control stream", func(qc *quic.Conn) {
			openUni(t, qc, appendDataFrameHeader(settingsStream(), 0), false)
		}, ErrCodeFrameUnexpected},
		{"HTTP/2 frame type", func(qc *quic.Conn) {
			openUni(t, qc, appendFrameHeader(settingsStream(), 0x6, 0), false)
		}, ErrCodeFrameUnexpected},
		{"push stream from client", func(qc *quic.Conn) {
			openUni(t, qc, appendVarint(nil, streamTypePush), false)
		}, ErrCodeStreamCreationError},
		{"bad encoder instruction", func(qc *quic.Conn) {
			// Set Dynamic Table Capacity above our maximum (4096).
			openUni(t, qc, []byte{streamTypeEncoder, 0x3f, 0xe1, 0x7f}, false)
		}, ErrCode(0x201)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qc := bareConn(t, e)
			tc.send(qc)
			if code := closeCode(t, qc); code != tc.code {
				t.Errorf("closed with %v, want %v", code, tc.code)
			}
		})
	}
}

// A MAX_PUSH_ID that stays or grows is fine.
func TestMaxPushIDMayRepeatOrGrow(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	cc := rawConn(t, e)
	for _, id := range []uint64{3, 3, 7} {
		cc.writeControl(appendIDFrame(nil, frameMaxPushID, id))
	}
	if status, code := sendRaw(t, cc, requestWith(), nil); status != 200 {
		t.Fatalf("status %d code %v", status, code)
	}
	if cc.qc.Context().Err() != nil {
		t.Fatalf("connection closed: %v", context.Cause(cc.qc.Context()))
	}
}

func TestUnknownStreamAndFramesIgnored(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	cc := rawConn(t, e)
	// A reserved stream type (0x1f*N+0x21) with junk, and unknown frames
	// and settings on the control stream are ignored.
	s := openUni(t, cc.qc, append(appendVarint(nil, 0x1f*3+0x21), "junk"...), false)
	defer s.CancelWrite(0)
	cc.writeControl(append(appendFrameHeader(nil, 0x21, 2), 1, 2))
	data := append(appendFrameHeader(nil, 0x40, 1), 9) // unknown frame on the request stream
	fields, err := requestFields(mustRequest(t, e.url+"/"), false)
	if err != nil {
		t.Fatal(err)
	}
	if status, code := sendRaw(t, cc, fields, data); status != 200 {
		t.Fatalf("status %d code %v", status, code)
	}
	// SETTINGS exchange: the server's values arrived.
	select {
	case <-cc.peerSettingsDone:
	case <-time.After(5 * time.Second):
		t.Fatal("no SETTINGS from the server")
	}
	ps := cc.peerSettings
	if ps.QPACKMaxTableCapacity != ourQPACKMaxTableCapacity || ps.QPACKBlockedStreams != ourQPACKBlockedStreams || ps.MaxFieldSectionSize != defaultMaxFieldSectionSize {
		t.Errorf("server settings %+v", ps)
	}
	if cc.qc.Context().Err() != nil {
		t.Fatalf("connection closed: %v", context.Cause(cc.qc.Context()))
	}
}

func mustRequest(t *testing.T, url string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
