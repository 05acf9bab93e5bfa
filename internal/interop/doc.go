// Package interop tests quicstack/quic against other QUIC implementations
// (quic-go and golang.org/x/net/quic) in both roles. It is a separate
// module so that the library's own dependency list stays clean.
//
// Besides the tests (streams, close codes, RFC 9221 datagrams), it holds
// side-by-side benchmarks of quicstack/quic and quic-go on loopback (see
// bench_test.go), which run only with -bench:
//
//	go test -run '^$' -bench . -benchmem -benchtime=2s -count=3
//
// A time-based -benchtime suits all three: the bulk transfer and handshake
// benchmarks scale their iterations to it, and one iteration of the
// idle-connection benchmark (10,000 connections, -args -idleconns=N to
// change) takes longer than 2 s, so it runs once per -count.
//
// TestPerf (perf_test.go, Linux, run by make perf) prints docs/performance.md's
// performance table: ours, quic-go and crypto/tls over TCP, on loopback and
// on a veth pair between two network namespaces.
package interop
