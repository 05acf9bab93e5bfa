package http3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

func TestParsePriority(t *testing.T) {
	def := defaultPriority
	for _, tc := range []struct {
		in   string
		want quic.Priority
		ok   bool
	}{
		{"", def, true},
		{"u=0", quic.Priority{Urgency: 0}, true},
		{"u=7, i", quic.Priority{Urgency: 7, Incremental: true}, true},
		{"i, u=5", quic.Priority{Urgency: 5, Incremental: true}, true},
		{"i=?0", def, true},
		{"i=?1,u=1", quic.Priority{Urgency: 1, Incremental: true}, true},
		{"u=1, u=2", quic.Priority{Urgency: 2}, true}, // the last wins
		{"u=2;foo=bar;x", quic.Priority{Urgency: 2}, true},
		// "unknown priority parameters, priority parameters with
		// out-of-range values, or values of unexpected types MUST be
		// ignored" (RFC 9218, Section 4).
		{"u=8", def, true},
		{"u=-1", def, true},
		{"u=1.5", def, true},
		{`u="1"`, def, true},
		{"u=tok", def, true},
		{"i=1", def, true},
		{"i=(a b)", def, true},
		{"foo=:AAAA:, u=6", quic.Priority{Urgency: 6}, true},
		{"x-y.z*=?0, u=0", quic.Priority{Urgency: 0}, true},
		// Not a Dictionary: the whole field is ignored.
		{"u=1,", def, false},
		{"U=1", def, false},
		{"u=1 i", def, false},
		{"u=", def, false},
		{`u="unterminated`, def, false},
		{"u=1234567890123456", def, false},
		{"u=(1 2", def, false},
		{",u=1", def, false},
	} {
		got, ok := parsePriority(tc.in, def)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parsePriority(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	// A response's field changes only the parameters it carries
	// (RFC 9218, Section 8).
	if got, _ := parsePriority("u=1", quic.Priority{Urgency: 5, Incremental: true}); got != (quic.Priority{Urgency: 1, Incremental: true}) {
		t.Errorf("merge: %+v", got)
	}
}

func TestPriorityUpdateFrameRoundTrip(t *testing.T) {
	for _, p := range []quic.Priority{{}, {Urgency: 7, Incremental: true}, defaultPriority, {Urgency: 3, Incremental: true}} {
		b := appendPriorityUpdateFrame(nil, 1<<20, p)
		f, n, err := parseFrame(b)
		if err != nil || n != len(b) || f.Type != framePriorityUpdateRequest || f.ID != 1<<20 {
			t.Fatalf("%+v: parsed %+v, %d of %d, %v", p, f, n, len(b), err)
		}
		if got, ok := parsePriority(string(f.Payload), defaultPriority); !ok || got != p {
			t.Errorf("%+v: field %q parses as %+v", p, f.Payload, got)
		}
	}
}

func FuzzParsePriority(f *testing.F) {
	for _, s := range []string{"u=0", "u=7, i", "i=?0;a=1", `a="x\"y", u=2`, "u=(1 2);p, i", "foo=:AAA=:", "u=1.25", ",", "u=1,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := parsePriority(s, defaultPriority)
		if p.Urgency > 7 {
			t.Fatalf("%q: urgency %d", s, p.Urgency)
		}
		if !ok && p != defaultPriority {
			t.Fatalf("%q: not parsed but %+v", s, p)
		}
		// What this package writes parses back to the same value.
		if ok {
			if q, ok := parsePriority(string(appendPriorityValue(nil, p)), defaultPriority); !ok || q != p {
				t.Fatalf("%+v written as %q parses as %+v", p, appendPriorityValue(nil, p), q)
			}
		}
	})
}

// streamPriority returns the priority of the QUIC stream a handler's
// response goes on.
func streamPriority(w http.ResponseWriter) quic.Priority {
	return w.(*responseWriter).str.Priority()
}

// The server sends a response at the priority of the request's Priority
// field, merged with the handler's (RFC 9218, Sections 4 and 8).
func TestServerPriorityFromRequestAndResponse(t *testing.T) {
	seen := make(chan [2]quic.Priority, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := streamPriority(w)
		if v := r.URL.Query().Get("resp"); v != "" {
			w.Header().Set("Priority", v)
		}
		w.WriteHeader(200)
		seen <- [2]quic.Priority{before, streamPriority(w)}
	}))
	for _, tc := range []struct {
		req, resp    string
		before, want quic.Priority
	}{
		{"", "", defaultPriority, defaultPriority},
		{"u=1, i", "", quic.Priority{Urgency: 1, Incremental: true}, quic.Priority{Urgency: 1, Incremental: true}},
		{"u=5, i", "u=1", quic.Priority{Urgency: 5, Incremental: true}, quic.Priority{Urgency: 1, Incremental: true}},
		{"u=9, i=2", "", defaultPriority, defaultPriority}, // out of range, wrong type: ignored
		{"garbage;;", "i", defaultPriority, quic.Priority{Urgency: 3, Incremental: true}},
		{"u=0", "nonsense(", quic.Priority{Urgency: 0}, quic.Priority{Urgency: 0}},
	} {
		req, _ := http.NewRequest("GET", e.url+"/?resp="+tc.resp, nil)
		if tc.req != "" {
			req.Header.Set("Priority", tc.req)
		}
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got := <-seen
		if got[0] != tc.before || got[1] != tc.want {
			t.Errorf("request %q, response %q: priority %+v, then %+v; want %+v, then %+v", tc.req, tc.resp, got[0], got[1], tc.before, tc.want)
		}
	}
}

// UpdatePriority reprioritizes a response in flight with a PRIORITY_UPDATE
// frame (RFC 9218, Section 7.2), which the server applies to the stream.
func TestUpdatePriorityInFlight(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		// Wait (bounded) for the client's update, and report what the
		// stream's priority became.
		for i := 0; i < 1000 && streamPriority(w) == defaultPriority; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		fmt.Fprintf(w, "%+v", streamPriority(w))
	}))
	ctx, h := WithPriorityHandle(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/", nil)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := h.Update(quic.Priority{Urgency: 6, Incremental: true}); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if want := fmt.Sprintf("%+v", quic.Priority{Urgency: 6, Incremental: true}); string(b) != want {
		t.Errorf("server saw %s, want %s", b, want)
	}
}

// An update made before the request is sent goes right after it.
func TestUpdatePriorityBeforeSending(t *testing.T) {
	seen := make(chan quic.Priority, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 1000 && streamPriority(w) != (quic.Priority{Urgency: 0}); i++ {
			time.Sleep(5 * time.Millisecond)
		}
		seen <- streamPriority(w)
	}))
	ctx, h := WithPriorityHandle(context.Background())
	h.Update(quic.Priority{Urgency: 0})
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/", nil)
	req.Header.Set("Priority", "u=7")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-seen; got != (quic.Priority{Urgency: 0}) {
		t.Errorf("server applied %+v, want the update's u=0", got)
	}
}

// serverConnOf returns the server's only connection.
func serverConnOf(t *testing.T, e *testEnv) *serverConn {
	t.Helper()
	for range 1000 {
		e.srv.mu.Lock()
		for sc := range e.srv.conns {
			e.srv.mu.Unlock()
			return sc
		}
		e.srv.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no server connection")
	return nil
}

// pendingUpdates returns the PRIORITY_UPDATE values the server keeps for
// streams not opened yet.
func pendingUpdates(sc *serverConn) map[quic.StreamID]string {
	sc.prio.mu.Lock()
	defer sc.prio.mu.Unlock()
	m := map[quic.StreamID]string{}
	for k, p := range sc.prio.pending {
		m[k] = string(appendPriorityValue(nil, p))
	}
	if len(sc.prio.order) > maxPendingPriorityUpdates {
		m[-1] = "order too long"
	}
	return m
}

// "Servers SHOULD buffer the most recently received PRIORITY_UPDATE frame
// and apply it once the referenced stream is opened." (RFC 9218, Section
// 7) It overrides the request's Priority field.
func TestPriorityUpdateBeforeRequest(t *testing.T) {
	seen := make(chan quic.Priority, 1)
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- streamPriority(w)
	}))
	cc := rawConn(t, e)
	sc := serverConnOf(t, e)
	cc.writeControl(appendPriorityUpdateFrame(nil, 0, quic.Priority{Urgency: 7}))
	cc.writeControl(appendPriorityUpdateFrame(nil, 0, quic.Priority{Urgency: 2, Incremental: true})) // the latest counts
	for i := 0; i < 1000 && pendingUpdates(sc)[0] != "u=2, i"; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if got := pendingUpdates(sc); got[0] != "u=2, i" {
		t.Fatalf("pending updates %v", got)
	}
	status, code := sendRaw(t, cc, requestWith("priority", "u=0"), nil)
	if status != 200 || code != 0 {
		t.Fatalf("status %d, code %v", status, code)
	}
	if got := <-seen; got != (quic.Priority{Urgency: 2, Incremental: true}) {
		t.Errorf("response priority %+v, want the update's", got)
	}
	if got := pendingUpdates(sc); len(got) != 0 {
		t.Errorf("pending updates left: %v", got)
	}
}

// A flood of PRIORITY_UPDATE frames for streams not opened yet costs
// constant memory: the server keeps at most maxPendingPriorityUpdates.
func TestPriorityUpdateFloodBounded(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	cc := rawConn(t, e)
	sc := serverConnOf(t, e)
	var b []byte
	const n = 20000
	for i := range n {
		b = appendPriorityUpdateFrame(b, quic.StreamID(4*(i+1)), quic.Priority{Urgency: uint8(i % 8)})
		if len(b) > 32<<10 {
			cc.writeControl(b)
			b = b[:0]
		}
	}
	b = appendPriorityUpdateFrame(b, 8, quic.Priority{Urgency: 1}) // the last
	cc.writeControl(b)
	for i := 0; i < 2000 && pendingUpdates(sc)[8] != "u=1"; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	got := pendingUpdates(sc)
	if len(got) > maxPendingPriorityUpdates || got[8] != "u=1" {
		t.Errorf("%d updates pending (want at most %d), stream 8's %q", len(got), maxPendingPriorityUpdates, got[8])
	}
	// The connection still serves.
	if status, code := sendRaw(t, cc, requestWith(), nil); status != 200 {
		t.Errorf("status %d, code %v", status, code)
	}
}

// PRIORITY_UPDATE frames where they do not belong are connection errors
// (RFC 9218, Section 7.2).
func TestPriorityUpdateMisplaced(t *testing.T) {
	t.Run("on a request stream", func(t *testing.T) {
		// "Receiving a PRIORITY_UPDATE frame on a stream other than the
		// client control stream MUST be treated as a connection error of
		// type H3_FRAME_UNEXPECTED."
		e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
		cc := rawConn(t, e)
		str, err := cc.qc.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		hdr, _ := cc.encodeHeaders(str.StreamID(), requestWith())
		str.Write(append(hdr, appendPriorityUpdateFrame(nil, str.StreamID(), quic.Priority{Urgency: 1})...))
		if code := closeCode(t, cc.qc); code != ErrCodeFrameUnexpected {
			t.Errorf("closed with %v, want H3_FRAME_UNEXPECTED", code)
		}
	})
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		// "If a server receives a PRIORITY_UPDATE (type=0xF0700) for a
		// stream ID that is not a request stream, this MUST be treated
		// as a connection error of type H3_ID_ERROR."
		{"for a unidirectional stream", appendPriorityUpdateFrame(nil, 2, quic.Priority{})},
		{"for a server stream", appendPriorityUpdateFrame(nil, 1, quic.Priority{})},
		// "If a server receives a PRIORITY_UPDATE (type=0xF0701) with a
		// push ID that is greater than the maximum push ID or that has
		// not yet been promised, this MUST be treated as a connection
		// error of type H3_ID_ERROR."
		{"for a push", append(appendFrameHeader(nil, framePriorityUpdatePush, 4), 0, 'u', '=', '1')},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			cc := rawConn(t, e)
			cc.writeControl(tc.frame)
			if code := closeCode(t, cc.qc); code != ErrCodeIDError {
				t.Errorf("closed with %v, want H3_ID_ERROR", code)
			}
		})
	}
	t.Run("malformed", func(t *testing.T) {
		// A Prioritized Element ID that does not fit the frame.
		e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		cc := rawConn(t, e)
		cc.writeControl(append(appendFrameHeader(nil, framePriorityUpdateRequest, 1), 0x40))
		if code := closeCode(t, cc.qc); code != ErrCodeFrameError {
			t.Errorf("closed with %v, want H3_FRAME_ERROR", code)
		}
	})
	t.Run("malformed field ignored", func(t *testing.T) {
		e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		cc := rawConn(t, e)
		v := "u=(("
		cc.writeControl(append(append(appendFrameHeader(nil, framePriorityUpdateRequest, uint64(1+len(v))), 0), v...))
		if status, code := sendRaw(t, cc, requestWith(), nil); status != 200 {
			t.Errorf("status %d, code %v", status, code)
		}
	})
	t.Run("from the server", func(t *testing.T) {
		// "If a client receives a PRIORITY_UPDATE frame, this MUST be
		// treated as a connection error of type H3_FRAME_UNEXPECTED."
		rs := newRawServer(t, func(s *rawStream) {
			s.c.writeControl(appendPriorityUpdateFrame(nil, s.str.StreamID(), quic.Priority{Urgency: 1}))
			// No response: the request ends with the connection.
			s.str.SetReadDeadline(time.Now().Add(10 * time.Second))
			io.Copy(io.Discard, s.str)
		})
		r := clientGet(t, rs, "/")
		var ae *quic.ApplicationError
		if !errors.As(r.err, &ae) || ae.Remote || ErrCode(ae.Code) != ErrCodeFrameUnexpected {
			t.Errorf("request failed with %v; want the client to close the connection with H3_FRAME_UNEXPECTED", r.err)
		}
	})
}

// What a client makes the server keep for streams not opened yet is the
// priority, not the frame: 64 updates of 16 KiB each (a valid Priority
// field with an unknown parameter, which "MUST be ignored", RFC 9218,
// Section 4) must not pin a megabyte per connection ("Holding
// PRIORITY_UPDATE frames for each stream requires server resources, which
// can be bounded by local implementation policy", Section 7).
func TestPriorityUpdatePendingKeepsNoPayload(t *testing.T) {
	e := newTestEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	cc := rawConn(t, e)
	sc := serverConnOf(t, e)
	pad := "u=1, x=\"" + strings.Repeat("a", 15<<10) + "\""
	for i := range maxPendingPriorityUpdates {
		id := quic.StreamID(4 * (i + 1))
		b := appendFrameHeader(nil, framePriorityUpdateRequest, uint64(varintLen(uint64(id))+len(pad)))
		b = appendVarint(b, uint64(id))
		cc.writeControl(append(b, pad...))
	}
	last := quic.StreamID(4 * maxPendingPriorityUpdates)
	for i := 0; i < 2000 && pendingUpdates(sc)[last] == ""; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	got := pendingUpdates(sc)
	if len(got) != maxPendingPriorityUpdates {
		t.Fatalf("%d updates pending, want %d", len(got), maxPendingPriorityUpdates)
	}
	total := 0
	for id, v := range got {
		total += len(v)
		if p, ok := parsePriority(v, defaultPriority); !ok || p != (quic.Priority{Urgency: 1}) {
			t.Fatalf("stream %d: pending %q does not say u=1", id, v[:min(len(v), 20)])
		}
	}
	if total > 64*maxPendingPriorityUpdates {
		t.Errorf("pending updates keep %d bytes of frame payload, want the priorities only", total)
	}
}
