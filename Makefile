# Makefile for github.com/quicstack/quic.
#
#   make test    gofmt check, go vet, go test -race, allocation tests (what CI runs)
#   make fuzz    every fuzz target for FUZZTIME each (default 30s)
#   make bench   every benchmark with -benchmem
#   make cover   test coverage report (coverage.out, coverage.html)
#   make demo    the README's main job: HTTP/3 server and client on loopback
#   make perf    performance table: ours vs quic-go vs crypto/tls over TCP
#   make lifecycle-soak  the lifecycle stress suites for LIFECYCLE_DURATION
#   make paths-soak  the randomized path test (NAT rebinding, flaps,
#                migration, attackers) over SEEDS seeds (default 5000)
#   make netns-paths the NAT flap and rebinding sequence over real sockets
#                in network namespaces (root; installs nftables if needed)

GO       ?= go
FUZZTIME ?= 30s
BENCH    ?= .
PKGS     ?= ./...
INTEROP  := internal/interop

.PHONY: all test fmt-check vet unit interop fuzz bench cover demo perf

all: test

test: fmt-check vet unit interop

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# The race detector makes sync.Pool drop items at random, so allocation
# assertions of pooled code run once more without it, and so do the long
# simulations (NORACE) that skip themselves under it: one goroutine drives
# both ends, so it has nothing to check there.
NORACE := Alloc|TestSimFullWindowLossBursts
# go test's default 10-minute limit per package is a hang detector; on a
# heavily loaded machine the root package's race run comes near it
# (about 2 minutes on an idle 2-core machine), so the limit is 30 minutes.
UNIT_TIMEOUT ?= 30m
unit:
	$(GO) test -race -count=1 -timeout $(UNIT_TIMEOUT) $(PKGS)
	$(GO) test -count=1 -timeout $(UNIT_TIMEOUT) -run '$(NORACE)' $(PKGS)

# The interop module (quic-go and x/net/quic as peers) has its own go.mod so
# that the library's dependency list stays clean. It is tested when present,
# with the race detector, then, without it, the two tests that use quic-go's
# 0-RTT client, which has a data race of its own (see
# features_0rtt_quicgo_client_test.go and the zerortt case).
interop:
	@if [ -f $(INTEROP)/go.mod ]; then \
		cd $(INTEROP) && $(GO) vet ./... && $(GO) test -race -count=1 ./... && \
		$(GO) test -count=1 -run '^(TestFeatures0RTTQuicGoClientOurServer|TestInteropCases)$$/^zerortt$$/^quic-go' ./...; \
	else echo "interop: no $(INTEROP)/go.mod yet, skipping"; fi

# Runs each fuzz target of each package for FUZZTIME. go test accepts only
# one -fuzz target per invocation, so targets are listed first.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$t ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

# The interop module's benchmarks compare this library with quic-go side by
# side (bulk throughput, handshakes per second, memory per idle connection);
# they take a few minutes.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKGS)
	@if [ -f $(INTEROP)/go.mod ]; then \
		cd $(INTEROP) && $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime=2s -count=3 -timeout 30m ./...; \
	fi

cover:
	$(GO) test -count=1 -coverprofile=coverage.out $(PKGS)
	$(GO) tool cover -func=coverage.out | tail -n 1
	$(GO) tool cover -html=coverage.out -o coverage.html

demo:
	$(GO) run ./example/demo

# check-tshark captures a transfer on loopback with tshark and checks that
# the key log written through SSLKEYLOGFILE decrypts it down to STREAM
# frames. It installs Debian's tshark when missing (needs root) and is not
# part of `make test`.
.PHONY: check-tshark
check-tshark:
	@command -v tshark >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y tshark; }
	$(GO) test -tags tshark -count=1 -v -run TestTshark ./internal/tsharktest
# The performance table of docs/performance.md: bulk throughput (loopback, and a veth
# pair of MTU 1500 between two network namespaces when run as root), CPU
# per GB, handshakes per second and idle-connection memory, ours vs
# quic-go vs crypto/tls over TCP in one run (internal/interop/perf_test.go).
perf:
	@log=$$(mktemp); cd $(INTEROP) && $(GO) test -count=1 -run '^TestPerf$$' -perf -timeout 60m -v . >$$log 2>&1; \
	s=$$?; grep -E 'veth: skipped' $$log; sed -n '/^| Measure/,/^[0-9]* CPUs/p' $$log; \
	if [ $$s -ne 0 ]; then tail -40 $$log; fi; rm -f $$log; exit $$s
# The QUIC interop runner's cases on loopback through the impairment relay
# internal/netem (internal/interop/cases_test.go), against ourselves,
# quic-go and x/net/quic in both roles. `make test` runs them with small
# files; interop-matrix prints the results matrix (docs/interop.md's), and
# interop-full uses the runner's file sizes and durations (several minutes).
# INTEROP_TRY_UNBUILT=1 also runs the cells of features not built yet. No
# package argument: in package list mode go test hides a passing test's
# output, and with it the matrix.
.PHONY: interop-matrix interop-full goodput soak interop-aioquic interop-chromium
interop-matrix:
	cd $(INTEROP) && INTEROP_MATRIX=1 $(GO) test -count=1 -run 'TestInteropCases' -timeout 20m

interop-full:
	cd $(INTEROP) && INTEROP_FULL=1 INTEROP_MATRIX=1 $(GO) test -count=1 -run 'TestInteropCases' -timeout 60m

# The runner's goodput measurement: 10 MiB over 10 Mbit/s, 30 ms RTT and a
# 25-packet queue, for each of our congestion controllers and quic-go
# (GOODPUT_RUNS repetitions, default 3; about 3 minutes).
goodput:
	cd $(INTEROP) && GOODPUT=1 $(GO) test -count=1 -run 'TestGoodput' -timeout 30m -v . | grep -E '^\||^(ok|FAIL|---)'

# The lifecycle stress suites (lifecycle_stress_test.go in the root and
# http3 packages: dials, requests, streams and blocked calls while
# Transports, Listeners and Servers close or shut down at random moments)
# run for a few seconds each in `make test`; this runs them, with the race
# detector, for LIFECYCLE_DURATION each (default 2m).
LIFECYCLE_DURATION ?= 2m
.PHONY: lifecycle-soak
lifecycle-soak:
	LIFECYCLE_DURATION=$(LIFECYCLE_DURATION) $(GO) test -race -count=1 -timeout 0 -v -run 'TestLifecycleStress' . ./http3

# HTTP/3 load through the relay with 2% loss for SOAK_DURATION (default
# 10m); checks every answer, the goroutine count and the heap at the end.
SOAK_DURATION ?= 10m
soak:
	cd $(INTEROP) && SOAK_DURATION=$(SOAK_DURATION) $(GO) test -count=1 -run 'TestSoak' -timeout 0 -v .

# Python's aioquic client (installed with pip when missing) against our
# example server: the chacha20 case, which Go's crypto/tls clients cannot
# ask for, and compatible version negotiation from v1 to v2. Not part of
# make test (it needs PyPI).
interop-aioquic:
	bash internal/interop/aioquic/run.sh

# Debian's Chromium (installed with apt-get when missing) loads pages and
# runs fetch() against our example server over HTTP/3, in a network
# namespace with only loopback. Needs root; not part of make test.
interop-chromium:
	bash internal/interop/chromium/run.sh

# HTTP/3 priorities with Chromium (needs root): a page's urgent fetch
# among 20 background ones, through the netem relay, completes first.
.PHONY: interop-chromium-priority
interop-chromium-priority:
	bash internal/interop/chromium/priority.sh

# The link emulator's precise check (internal/linkem, needs root): ping's
# RTT within 1 ms of twice the delay, UDP's one-way delay at 8,300
# packets/s within 1 ms, kernel TCP (Cubic and BBR) and UDP within 2% of
# 100 Mbit/s. About a minute; the figures are best on a quiet machine.
# Installs Debian's iputils-ping when missing, to check with ping(8) too.
# `make test` runs coarse, load-proof versions (TestPair*).
.PHONY: linkem-check
linkem-check:
	@command -v ping >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y iputils-ping; } || true
	@log=$$(mktemp); LINKEM_CHECK=1 $(GO) test -count=1 -v -run '^TestCheck' -timeout 10m ./internal/linkem >$$log 2>&1; \
	s=$$?; grep -E '^\s+check_linux_test|^(--- |ok|FAIL)' $$log | sed 's/^ *check_linux_test.go:[0-9]*: //'; \
	if [ $$s -ne 0 ]; then tail -20 $$log; fi; rm -f $$log; exit $$s
# The HTTP/3 hostile-peer benchmarks (issue 22): what each resource attack
# costs, against a plain GET's cost in the same run (docs/http3-hardening.md).
.PHONY: bench-h3-hostile
bench-h3-hostile:
	$(GO) test -run '^$$' -bench 'PlainGET|Hostile' -benchmem ./http3
# The randomized path test of conn_sim_path_random_test.go over SEEDS
# seeds (make test runs 200): every seed's failure is reported, with the
# command that replays it alone (QUIC_PATH_SEED=n).
SEEDS ?= 5000
.PHONY: paths-soak netns-paths
paths-soak:
	@log=$$(mktemp); QUIC_PATH_SEEDS=$(SEEDS) QUIC_PATH_KEEPGOING=1 $(GO) test -count=1 -run 'TestSimPathRandom$$' -timeout 0 -v . >$$log 2>&1; \
	s=$$?; if [ $$s -ne 0 ]; then grep -v -E '^(=== RUN|    --- PASS)' $$log | tail -200; else grep -E 'seeds:|^ok' $$log; fi; rm -f $$log; exit $$s

# The client's NAT rebinds and flaps back during a transfer over a veth pair
# between network namespaces (nftables SNAT); with the socket-layer tests
# (ICMP errors, ECT(0)-dropping paths, IPv6 link-local). They run in
# make test too when it runs as root; this target installs nftables with
# apt-get when missing.
netns-paths:
	@command -v nft >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nftables; }
	$(GO) test -count=1 -v -run 'TestNetns' .
