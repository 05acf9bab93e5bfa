package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quicstack/quic"
	"github.com/quicstack/quic/http3/qpack"
)

// Benchmarks of the resource defects of issue 22 (14 to 19): the cost of
// what a hostile peer sends grows linearly with the bytes it sends, and
// is compared with a plain GET's in the same run. Run with
//
//	go test -run '^$' -bench 'Hostile|PlainGET' -benchmem ./http3
//
// (make bench-h3-hostile). cpu-ns/op is the process's CPU time per
// operation, garbage collection included.

// cpuMeter reports cpu-ns/op for the loop it brackets.
type cpuMeter struct{ start int64 }

func startCPU() cpuMeter { return cpuMeter{processCPU()} }

func (m cpuMeter) report(b *testing.B) {
	if b.N > 0 && m.start > 0 {
		b.ReportMetric(float64(processCPU()-m.start)/float64(b.N), "cpu-ns/op")
	}
}

// plainGET is the header section of a browser's GET.
var plainGET = []qpack.HeaderField{
	{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
	{Name: ":authority", Value: "www.example.com"}, {Name: ":path", Value: "/api/v1/items?page=2"},
	{Name: "user-agent", Value: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
	{Name: "accept", Value: "application/json"}, {Name: "accept-encoding", Value: "gzip, deflate, br"},
	{Name: "accept-language", Value: "en-US,en;q=0.5"}, {Name: "cookie", Value: "session=4f1b2c3d5e6f7a8b9c0d"},
}

// serverHeaderBench measures what the server does with one header
// section: decode it with a server connection's decoder (and its field
// checks), build the request. The encoder stream that sets up the
// dynamic table (ins) is processed once.
func serverHeaderBench(b *testing.B, ins, section []byte) {
	c := newConnection(nil, true, 0)
	if err := c.dec.HandleEncoderStream(ins); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(section)))
	b.ReportAllocs()
	defer startCPU().report(b)
	for b.Loop() {
		fields, err := c.decodeHeaders(context.Background(), 0, section, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := newServerRequest(fields, false); err != nil {
			b.Fatal(err)
		}
		c.dec.AppendDecoderStream(nil)
	}
}

// staticSection encodes fields with the static table and literals only.
func staticSection(fields []qpack.HeaderField) []byte {
	return qpack.NewEncoder(qpack.EncoderConfig{DisableDynamicTable: true}).EncodeFieldSection(nil, 0, fields)
}

// referencingSection returns an encoder stream inserting name: value
// (4 KB) and a plain GET's section with n references to it: Required
// Insert Count 1, Base 1, the GET's lines from the static table and
// literals, then n Indexed Field Lines of relative index 0 (one byte
// each).
func referencingSection(name string, n int) (ins, section []byte) {
	value := strings.Repeat("v", 4000)
	enc := qpack.NewEncoder(qpack.EncoderConfig{})
	enc.SetPeerSettings(ourQPACKMaxTableCapacity, 0)
	ins = enc.AppendEncoderStream(nil) // Set Dynamic Table Capacity
	// Insert with Literal Name (RFC 9204, Section 4.3.3), no Huffman.
	ins = appendQPACKInt(ins, 5, 0x40, uint64(len(name)))
	ins = append(ins, name...)
	ins = appendQPACKInt(ins, 7, 0x00, uint64(len(value)))
	ins = append(ins, value...)
	section = []byte{0x02, 0x00}
	get := staticSection(plainGET[:4])
	section = append(section, get[2:]...)
	section = append(section, bytes.Repeat([]byte{0x80}, n)...)
	return ins, section
}

// BenchmarkPlainGET is the baseline: a browser's GET.
func BenchmarkPlainGET(b *testing.B) {
	serverHeaderBench(b, nil, staticSection(plainGET))
}

// Defect 14: n one-byte cookie crumbs (3 bytes each on the wire), and
// for comparison n other one-byte fields (name from the static table too).
func BenchmarkHostileCookieCrumbs(b *testing.B) {
	for _, name := range []string{"cookie", "accept"} {
		for _, n := range []int{5000, 10000, 20000} {
			b.Run(fmt.Sprintf("%s/fields=%d", name, n), func(b *testing.B) {
				fields := append([]qpack.HeaderField{}, plainGET[:4]...)
				for range n {
					fields = append(fields, qpack.HeaderField{Name: name, Value: "c"})
				}
				serverHeaderBench(b, nil, staticSection(fields))
			})
		}
	}
}

// Defects 14 and 19: n one-byte references to one 4 KB dynamic table
// entry, a cookie (joined into one n*4 KB value) or another field (n
// values sharing the entry's string).
func BenchmarkHostileTableReferences(b *testing.B) {
	for _, name := range []string{"cookie", "x-big"} {
		for _, n := range []int{64, 128, 255} {
			b.Run(fmt.Sprintf("%s/refs=%d", name, n), func(b *testing.B) {
				ins, section := referencingSection(name, n)
				serverHeaderBench(b, ins, section)
			})
		}
	}
}

// Defect 14 on the client: a response of n one-byte cookie crumbs.
func BenchmarkHostileResponseCrumbs(b *testing.B) {
	for _, n := range []int{0, 5000, 10000, 20000} {
		b.Run(fmt.Sprintf("crumbs=%d", n), func(b *testing.B) {
			fields := []qpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "text/html"}}
			for range n {
				fields = append(fields, qpack.HeaderField{Name: "cookie", Value: "c"})
			}
			section := staticSection(fields)
			cc := &clientConn{connection: newConnection(nil, false, 0)}
			cc.tls = &tls.ConnectionState{}
			req := &http.Request{Method: "GET"}
			b.SetBytes(int64(len(section)))
			b.ReportAllocs()
			defer startCPU().report(b)
			for b.Loop() {
				fs, err := cc.decodeHeaders(context.Background(), 0, section, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := cc.newResponse(context.Background(), req, nil, nil, fs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Defect 15: a client that advertises 2^20 blocked streams, never
// acknowledges and cancels one stream per request keeps n blocking field
// sections outstanding; each response's header costs the server the same
// whatever n.
func BenchmarkHostileOutstandingSections(b *testing.B) {
	for _, n := range []int{0, 16, 256, 1000} {
		b.Run(fmt.Sprintf("outstanding=%d", n), func(b *testing.B) {
			enc := qpack.NewEncoder(qpack.EncoderConfig{})
			enc.SetPeerSettings(ourQPACKMaxTableCapacity, 1<<20)
			resp := []qpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "text/html; charset=utf-8"},
				{Name: "server", Value: "bench"}, {Name: "cache-control", Value: "no-store"}}
			id, oldest := uint64(0), uint64(0)
			for range n {
				enc.EncodeFieldSection(nil, id, resp)
				id += 4
			}
			enc.AppendEncoderStream(nil)
			dst := make([]byte, 0, 256)
			cancel := make([]byte, 0, 16)
			b.ReportAllocs()
			defer startCPU().report(b)
			for b.Loop() {
				dst = enc.EncodeFieldSection(dst[:0], id, resp)
				id += 4
				if n > 0 {
					cancel = appendQPACKInt(cancel[:0], 6, 0x40, oldest)
					enc.HandleDecoderStream(cancel)
					oldest += 4
				} else {
					enc.HandleDecoderStream(appendQPACKInt(cancel[:0], 6, 0x40, id-4))
				}
				enc.AppendEncoderStream(nil)
			}
			if got := enc.BlockedStreams(); got != n && n > 0 {
				b.Fatalf("%d blocked streams, want %d", got, n)
			}
		})
	}
}

// appendQPACKInt appends a QPACK prefixed integer (RFC 9204, Section
// 4.1.1) with an n-bit prefix after the bits in first.
func appendQPACKInt(b []byte, n uint8, first byte, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(max))
	for v -= max; v >= 128; v >>= 7 {
		b = append(b, byte(v)|0x80)
	}
	return append(b, byte(v))
}

// Defects 16, 17 and 18: a HEADERS frame (header or trailer section)
// declaring 1 MiB of which `sent` bytes arrive: the memory follows what
// arrives. With MaxHeaderBytes 2048 the trailer section is refused from
// its frame header.
func BenchmarkHostileStalledHeadersFrame(b *testing.B) {
	for _, sent := range []int{7, 700, 7000, 70000} {
		b.Run(fmt.Sprintf("declared=1MiB/sent=%d", sent), func(b *testing.B) {
			c := newConnection(nil, true, 0)
			in := append(appendFrameHeader(nil, frameHeaders, 1<<20-1), bytes.Repeat([]byte{'x'}, sent)...)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			defer startCPU().report(b)
			for b.Loop() {
				if _, err := readHeadersFrame(c, stalledReader(in)); err != errStalled {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("trailers/MaxHeaderBytes=2048/declared=1MiB", func(b *testing.B) {
		c := newConnection(nil, true, 2048)
		in := append(dataFrames("abc"), appendFrameHeader(nil, frameHeaders, 1<<20-1)...)
		in = append(in, "1234567"...)
		buf := make([]byte, 16)
		b.ReportAllocs()
		defer startCPU().report(b)
		for b.Loop() {
			bd := &body{c: c, ctx: context.Background(), str: nopStream{}, br: stalledReader(in), contentLength: -1}
			for {
				if _, err := bd.Read(buf); err != nil {
					if err != errHeadersTooLarge {
						b.Fatal(err)
					}
					break
				}
			}
		}
	})
}

// BenchmarkHostileStalledRequestMemory measures what a request stream
// that sends half a HEADERS frame and stalls costs the server: heap and
// goroutine stacks, per stream, over 200 such streams on one connection,
// reported as bytes/stream, with the server cold (no idle handler
// goroutine or pooled buffer to reuse). ReadHeaderTimeout bounds how long it lasts
// (disabled here so that nothing ends during the measurement).
func BenchmarkHostileStalledRequestMemory(b *testing.B) {
	const streams = 200
	e := newTestEnvWith(b, http.NotFoundHandler(), func(s *Server) { s.ReadHeaderTimeout = -1 })
	var perStream float64
	for b.Loop() {
		cc := rawConn(b, e)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		before := memInUse()
		var strs []*quic.Stream
		for range streams {
			str, err := cc.qc.OpenStreamSync(ctx)
			if err != nil {
				b.Fatal(err)
			}
			str.Write(appendFrameHeader(nil, frameHeaders, 200))
			strs = append(strs, str)
		}
		// The streams are all held once the server counts them, and have
		// read what arrived soon after.
		for e.srv.handlers.Load() < streams {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		if perStream == 0 {
			// The first round: later ones reuse the idle handler
			// goroutines and pooled buffers of the first.
			perStream = float64(memInUse()-before) / streams
		}
		for _, s := range strs {
			s.CancelWrite(0x10c)
		}
		cc.qc.CloseWithError(0, "")
		cancel()
		for e.srv.handlers.Load() > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	b.ReportMetric(perStream, "bytes/stream")
}

// memInUse returns the live heap and the goroutine stacks in use.
func memInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}
