package http3

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
)

// Resource bounds against a hostile peer (issue 22, defects 14 to 19):
// what a peer can make us allocate or compute grows with the bytes it
// sends, not with the lengths it declares or the references it repeats.

// allocatedBy returns the bytes allocated while fn runs. The test's
// goroutine is the only one allocating much meanwhile.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// trickle is a reader that returns its bytes and then reports that the
// stream stalled: the peer sent nothing more.
type trickle struct{ r io.Reader }

var errStalled = errors.New("the peer stalled")

func (t *trickle) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err == io.EOF {
		err = errStalled
	}
	return n, err
}

// stalledReader returns a buffered reader over b that then stalls.
func stalledReader(b []byte) *bufio.Reader {
	return bufio.NewReaderSize(&trickle{bytes.NewReader(b)}, 4096)
}

// Defect 16 (and 18 on the client, which reads response headers the same
// way): a HEADERS frame that declares 1 MiB and delivers 7 bytes costs
// about the 7 bytes, not the megabyte.
func TestHeadersFrameMemoryFollowsArrivedBytes(t *testing.T) {
	for _, isServer := range []bool{true, false} {
		c := newConnection(nil, isServer, 0) // 1 MiB limit: frames up to 1 MiB are read
		in := append(appendFrameHeader(nil, frameHeaders, 1<<20-1), "1234567"...)
		var err error
		n := allocatedBy(func() { _, err = readHeadersFrame(c, stalledReader(in)) })
		if err != errStalled {
			t.Fatalf("server %v: %v", isServer, err)
		}
		if n > 256<<10 {
			t.Errorf("server %v: a HEADERS frame declaring 1 MiB with 7 bytes sent allocated %d bytes", isServer, n)
		}
		// A frame that does arrive whole is read whole.
		full := appendHeadersFrame(nil, bytes.Repeat([]byte{'x'}, 300<<10))
		f, err := readHeadersFrame(c, bufio.NewReader(bytes.NewReader(full)))
		if err != nil || len(f.Payload) != 300<<10 {
			t.Fatalf("server %v: whole frame: %d bytes, %v", isServer, len(f.Payload), err)
		}
	}
}

// Defect 17: trailers are bounded by MaxHeaderBytes as header sections
// are: a trailer section declared above what the limit allows is refused
// before its payload is read or allocated.
func TestTrailersBoundedByMaxHeaderBytes(t *testing.T) {
	c := newConnection(nil, true, 2048)
	in := append(dataFrames("abc"), appendFrameHeader(nil, frameHeaders, 1<<20-1)...)
	in = append(in, "1234567"...)
	b := &body{c: c, ctx: context.Background(), str: nopStream{}, br: stalledReader(in), contentLength: -1}
	var got []byte
	var err error
	n := allocatedBy(func() { got, err = io.ReadAll(b) })
	if string(got) != "abc" || err != errHeadersTooLarge {
		t.Fatalf("read %q, %v; want the content and H3_EXCESSIVE_LOAD", got, err)
	}
	if n > 256<<10 {
		t.Errorf("a trailer section declaring 1 MiB above a 2 KiB limit allocated %d bytes", n)
	}
}

// nopStream is a requestStream that accepts everything.
type nopStream struct{}

func (nopStream) Read([]byte) (int, error)         { return 0, io.EOF }
func (nopStream) Write(p []byte) (int, error)      { return len(p), nil }
func (nopStream) StreamID() quic.StreamID          { return 0 }
func (nopStream) CancelRead(quic.StreamErrorCode)  {}
func (nopStream) CancelWrite(quic.StreamErrorCode) {}
func (nopStream) CloseWrite() error                { return nil }

// heapAfterGC returns the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Defects 16 and 17 end to end: 100 request streams that each declare a
// 1 MiB HEADERS frame (or, with MaxHeaderBytes 2048, a 1 MiB trailer
// section) and send a few bytes of it leave the server's heap almost as
// it was. The handlers' goroutines have read what arrived by the time a
// later request on the same connection is answered.
func TestStalledHeadersServerHeap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxHdr  int
		request func(t *testing.T, cc *clientConn, str *quic.Stream) []byte
	}{
		{"headers", 0, func(*testing.T, *clientConn, *quic.Stream) []byte {
			return append(appendFrameHeader(nil, frameHeaders, 1<<20-1), "1234567"...)
		}},
		{"trailers", 2048, func(t *testing.T, cc *clientConn, str *quic.Stream) []byte {
			hdr, err := cc.encodeHeaders(str.StreamID(), requestWith())
			if err != nil {
				t.Fatal(err)
			}
			b := append(append(hdr, dataFrames("abc")...), appendFrameHeader(nil, frameHeaders, 1<<20-1)...)
			return append(b, "1234567"...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnvWith(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
			}), func(s *Server) { s.MaxHeaderBytes = tc.maxHdr })
			cc := rawConn(t, e)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			before := heapAfterGC()
			var strs []*quic.Stream
			for range 100 {
				str, err := cc.qc.OpenStreamSync(ctx)
				if err != nil {
					t.Fatal(err)
				}
				strs = append(strs, str)
				str.Write(tc.request(t, cc, str))
			}
			if status, code := sendRaw(t, cc, requestWith(), nil); status != 200 {
				t.Fatalf("request after the stalled ones: status %d, code %v", status, code)
			}
			grown := int64(heapAfterGC()) - int64(before)
			t.Logf("heap grew by %d KiB for 100 stalled streams", grown>>10)
			if grown > 20<<20 {
				t.Errorf("heap grew by %d MiB for 100 streams of 7 bytes each", grown>>20)
			}
			for _, s := range strs {
				s.CancelWrite(0x10c)
			}
		})
	}
}

// Defect 18 end to end: a server that answers 50 requests with HEADERS
// frames declaring 1 MiB and sends 7 bytes of each leaves the client's
// heap almost as it was. (50 stays below the server's stream limit, 100.)
func TestStalledHeadersClientHeap(t *testing.T) {
	release := make(chan struct{})
	rs := newRawServer(t, func(s *rawStream) {
		if s.err != nil {
			return
		}
		if fieldValue(s.fields, ":path") == "/last" {
			s.str.Write(s.headers(t, hf(":status", "204")))
			s.str.CloseWrite()
			return
		}
		s.str.Write(append(appendFrameHeader(nil, frameHeaders, 1<<20-1), "1234567"...))
		<-release
		s.str.CancelWrite(0x10c)
	})
	defer close(release)
	if resp, err := rs.client.Get(rs.url + "/last"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	before := heapAfterGC()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const stalled = 50
	done := make(chan struct{}, stalled)
	for range stalled {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", rs.url+"/stall", nil)
			if resp, err := rs.client.Do(req); err == nil {
				resp.Body.Close()
			}
			done <- struct{}{}
		}()
	}
	// The stalled requests are in flight once a later one is answered on
	// the same connection; by then their responses' 7 bytes were read.
	for {
		rs.tr.mu.Lock()
		cc := rs.tr.conns[rs.addr].cc
		rs.tr.mu.Unlock()
		cc.mu.Lock()
		active := cc.active
		cc.mu.Unlock()
		if active == stalled {
			break
		}
		runtime.Gosched()
	}
	if resp, err := rs.client.Get(rs.url + "/last"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	grown := int64(heapAfterGC()) - int64(before)
	t.Logf("client heap grew by %d KiB for %d stalled responses", grown>>10, stalled)
	if grown > 10<<20 {
		t.Errorf("client heap grew by %d MiB for %d responses of 7 bytes each", grown>>20, stalled)
	}
	cancel()
	for range stalled {
		<-done
	}
}

// Defect 14: cookie crumbs are joined once (RFC 9114, Section 4.2.1:
// "If there are multiple cookie field lines after decompression, these
// MUST be concatenated into a single byte string using the two-byte
// delimiter of "; " (ASCII 0x3b, 0x20) before being passed into a
// context other than HTTP/2 or HTTP/3"), so that the work and memory grow
// with the size of the result, not with its square: on the server, for
// 5,000 one-byte crumbs or for 255 references to one 4 KB crumb, and on
// the client for a response's crumbs.
func TestCookieCrumbsJoinedOnce(t *testing.T) {
	big := string(bytes.Repeat([]byte{'c'}, 4000))
	for _, tc := range []struct {
		name   string
		crumb  string
		n      int
		maxMiB uint64 // allocation allowed: a few times the joined size
	}{
		{"5000 one-byte crumbs", "c", 5000, 1},
		{"255 references to a 4 KB crumb", big, 255, 8},
	} {
		fields := requestWith()
		for range tc.n {
			fields = append(fields, hf("cookie", tc.crumb)...)
		}
		want := strings.TrimSuffix(strings.Repeat(tc.crumb+"; ", tc.n), "; ")
		var req *http.Request
		var err error
		n := allocatedBy(func() { req, err = newServerRequest(fields, false) })
		if err != nil || req.Header.Get("Cookie") != want || len(req.Header["Cookie"]) != 1 {
			t.Fatalf("server, %s: %v, cookie of %d bytes", tc.name, err, len(req.Header.Get("Cookie")))
		}
		if n > tc.maxMiB<<20 {
			t.Errorf("server, %s: %d MiB allocated for a %d KiB cookie", tc.name, n>>20, len(want)>>10)
		}
		cc := &clientConn{connection: newConnection(nil, false, 0)}
		cc.tls = &tls.ConnectionState{}
		resp := append(hf(":status", "200"), fields[len(goodRequest)/2:]...)
		var r *http.Response
		n = allocatedBy(func() {
			r, err = cc.newResponse(context.Background(), &http.Request{Method: "GET"}, nil, nil, resp)
		})
		if err != nil || r.Header.Get("Cookie") != want {
			t.Fatalf("client, %s: %v", tc.name, err)
		}
		if n > tc.maxMiB<<20 {
			t.Errorf("client, %s: %d MiB allocated for a %d KiB cookie", tc.name, n>>20, len(want)>>10)
		}
	}
}
