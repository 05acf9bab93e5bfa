# Makefile for github.com/quicstack/quic.
#
#   make test    gofmt check, go vet, go test -race, allocation tests (what CI runs)
#   make fuzz    every fuzz target for FUZZTIME each (default 30s)
#   make bench   every benchmark with -benchmem
#   make cover   test coverage report (coverage.out, coverage.html)
#   make demo    the README's main job: HTTP/3 server and client on loopback
#   make perf    performance table: ours vs quic-go vs quinn-perf vs crypto/tls over TCP
#   make flood   legitimate clients' handshakes under floods of Initials
#   make test-under-load  the root and http3 tests 20 times beside two CPU burners
#   make lifecycle-soak  the lifecycle stress suites for LIFECYCLE_DURATION
#   make contrib the modules under contrib/ (Prometheus collector, Redis anti-replay)
#   make fleet   the multi-namespace fleet test (nftables balancer, three servers)
#   make paths-soak  the randomized path test (NAT rebinding, flaps,
#                migration, attackers) over SEEDS seeds (default 5000)
#   make netns-paths the NAT flap and rebinding sequence over real sockets
#                in network namespaces (root; installs nftables if needed)

GO       ?= go
FUZZTIME ?= 30s
BENCH    ?= .
PKGS     ?= ./...
INTEROP  := internal/interop

.PHONY: all test fmt-check vet unit interop contrib plot fuzz bench cover demo perf

all: test

test: fmt-check vet unit interop contrib plot

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# The race detector makes sync.Pool drop items at random, so allocation
# assertions of pooled code run once more without it, and so do the long
# simulations (NORACE) that skip themselves under it: one goroutine drives
# both ends, so it has nothing to check there.
# The FollowNetwork namespace tests download 50 MB without it (6 MB with).
NORACE := Alloc|TestSimFullWindowLossBursts|TestNetnsFollow
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
	@# WebTransport against quic-go's webtransport-go, a module of its own
	@# (webtransport-go v0.13 builds only with an older quic-go).
	cd $(INTEROP)/webtransport && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	@# CONNECT-UDP against quic-go's masque-go (vendored there: the module
	@# proxy refuses it; see internal/interop/masque/masque-go/ORIGIN.md).
	cd $(INTEROP)/masque && $(GO) vet ./... && $(GO) test -race -count=1 ./...

# The modules under contrib/ have their own go.mod, so that the library
# does not depend on a Redis or Prometheus client. Their tests need
# redis-server (Debian's redis-server, installed when missing) and
# promtool (extracted from Debian's prometheus package into a cache
# directory, without installing the package or its service).
PROMTOOL_DIR ?= $(HOME)/.cache/quicstack-promtool
contrib:
	@command -v redis-server >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }
	@command -v promtool >/dev/null 2>&1 || [ -x $(PROMTOOL_DIR)/usr/bin/promtool ] || { \
		mkdir -p $(PROMTOOL_DIR) && cd $(PROMTOOL_DIR) && { apt-get download prometheus || { apt-get update && apt-get download prometheus; }; } && dpkg-deb -x prometheus_*.deb . ; }
	@for m in contrib/prometheus contrib/redis; do \
		[ -f $$m/go.mod ] || continue; \
		echo "== $$m"; \
		(cd $$m && $(GO) vet ./... && PROMTOOL=$${PROMTOOL:-$$(command -v promtool || echo $(PROMTOOL_DIR)/usr/bin/promtool)} $(GO) test -race -count=1 ./...) || exit 1; \
	done
# The plotting module (gonum/plot, kept out of the library's go.mod).
plot:
	cd internal/plot && $(GO) vet ./... && $(GO) test -count=1 ./...

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

# Legitimate clients' handshake times, and the server's memory, while a
# child process floods the server (default configuration) with 10,000
# client Initials per second of each kind: valid ClientHellos, ones that
# fail at once, and garbage with a valid-looking header
# (internal/interop/flood_test.go; FLOOD_KINDS, FLOOD_RATE and
# FLOOD_CLIENTS change the run). About a minute.
.PHONY: flood
flood:
	@log=$$(mktemp); cd $(INTEROP) && FLOOD=1 $(GO) test -count=1 -run '^TestFlood$$' -timeout 20m -v . >$$log 2>&1; \
	s=$$?; sed -n '/^ *| flood/,/CPUs/p' $$log | sed 's/^ *//'; grep -E '^\s+flood_test.go:[0-9]+: .*(failed|median)' $$log; \
	if [ $$s -ne 0 ] && ! grep -q '| flood' $$log; then tail -30 $$log; fi; rm -f $$log; exit $$s

# The root and http3 packages' tests UNDER_LOAD_COUNT times in a row
# (default 20) while two CPU-burning processes run beside them, as on a
# loaded 2-core CI machine: every test that depends on real time must pass
# (issue 19, item 6). With the race detector, as make test runs them
# (UNDER_LOAD_FLAGS); about 20 s per run of both packages without load,
# several times that with it. UNDER_LOAD_RUN selects tests (a -run regexp).
UNDER_LOAD_COUNT ?= 20
UNDER_LOAD_FLAGS ?= -race
UNDER_LOAD_PKGS  ?= . ./http3
UNDER_LOAD_RUN   ?= .
.PHONY: test-under-load
test-under-load:
	@sh -c 'while :; do :; done' & b1=$$!; sh -c 'while :; do :; done' & b2=$$!; \
	trap 'kill $$b1 $$b2 2>/dev/null' EXIT INT TERM; \
	echo "CPU burners: $$b1 $$b2; $(UNDER_LOAD_COUNT) runs of $(UNDER_LOAD_PKGS)"; \
	log=$$(mktemp /tmp/test-under-load.XXXXXX); \
	$(GO) test $(UNDER_LOAD_FLAGS) -count=$(UNDER_LOAD_COUNT) -timeout 0 -run '$(UNDER_LOAD_RUN)' $(UNDER_LOAD_PKGS) >$$log 2>&1; s=$$?; \
	grep -E -A8 -- '^ *--- FAIL|^panic' $$log; grep -E '^(ok|FAIL)' $$log; \
	echo "test failures: $$(grep -c -- '--- FAIL' $$log) (subtests and their parents included); log: $$log"; \
	if [ $$s -eq 0 ]; then rm -f $$log; fi; exit $$s

# Path MTU discovery over real loopback sockets up to 64 KB packets
# (TestUDPLoopbackJumboPackets), which depends on the machine not starving
# the test of CPU; make test covers it with the simulator and a socket
# test.
.PHONY: test-jumbo
test-jumbo:
	QUIC_TEST_JUMBO=1 $(GO) test -count=1 -run '^TestUDPLoopbackJumboPackets$$' -v .

# Headless Chromium's JavaScript WebTransport API against our
# example/webtransport echo server (a bidirectional stream, a
# unidirectional stream, datagrams and WT_CLOSE_SESSION), in a network
# namespace with only loopback. Needs root and Chromium (installed with
# apt-get when missing); not part of make test.
.PHONY: interop-chromium-webtransport
interop-chromium-webtransport:
	bash internal/interop/chromium/webtransport.sh

# The link emulator's precise check (internal/linkem, needs root): ping's
# RTT within 1 ms of twice the delay, UDP's one-way delay at 8,300
# packets/s within 1 ms, kernel TCP (Cubic and BBR) and UDP within 2% of
# 100 Mbit/s; and our QUIC (Cubic, BBR, NewReno) sharing a 20 Mbit/s
# bottleneck with kernel TCP Cubic within 0.5-2x (TestCheckFairnessTCP).
# About two minutes; the figures are best on a quiet machine.
# Installs Debian's iputils-ping when missing, to check with ping(8) too.
# `make test` runs coarse, load-proof versions (TestPair*).
.PHONY: linkem-check
linkem-check:
	@command -v ping >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y iputils-ping; } || true
	@log=$$(mktemp); LINKEM_CHECK=1 $(GO) test -count=1 -v -run '^TestCheck' -timeout 10m ./internal/linkem >$$log 2>&1; \
	s=$$?; grep -E '^\s+check_linux_test|^(--- |ok|FAIL)' $$log | sed 's/^ *check_linux_test.go:[0-9]*: //'; \
	if [ $$s -ne 0 ]; then tail -20 $$log; fi; rm -f $$log; exit $$s

# The weak-network table (internal/interop/weaknet, needs root): request
# times of our HTTP/3 (Cubic, BBR), quic-go's and net/http's HTTP/1.1 and
# HTTP/2 over TLS 1.3 on kernel TCP, new and reused connections, across
# internal/linkem's emulated link (RTT 100 ms with jitter, 20 Mbit/s,
# random loss in each direction), and the handshakes alone. Writes
# $(WEAKNET_OUT)/weaknet.md, $(WEAKNET_OUT)/weaknet/results.json and the
# plots $(WEAKNET_OUT)/weaknet/*.png (internal/plot's weaknetplot). The
# full table takes about an hour with the cells 40 at once; weaknet-quick
# is a few minutes. The knobs below choose the cells.
WEAKNET_SIZES    ?= 1k,10k,100k,1m
WEAKNET_LOSS     ?= 0,1,5,10,20,30,50
WEAKNET_N        ?= 20
WEAKNET_PROTOS   ?= ours-cubic,ours-bbr,quic-go,h1,h2
WEAKNET_CONNS    ?= new,reused
WEAKNET_PARALLEL ?= 40
WEAKNET_FLAGS    ?=
WEAKNET_OUT      ?= docs
.PHONY: weaknet weaknet-quick ccplots
weaknet:
	@mkdir -p $(WEAKNET_OUT)/weaknet
	cd $(INTEROP) && $(GO) build -o $(abspath $(WEAKNET_OUT))/weaknet/.weaknet ./weaknet
	$(abspath $(WEAKNET_OUT))/weaknet/.weaknet -sizes $(WEAKNET_SIZES) -loss $(WEAKNET_LOSS) -n $(WEAKNET_N) \
		-protos $(WEAKNET_PROTOS) -conns $(WEAKNET_CONNS) -parallel $(WEAKNET_PARALLEL) $(WEAKNET_FLAGS) \
		-md $(WEAKNET_OUT)/weaknet.md -json $(WEAKNET_OUT)/weaknet/results.json
	@rm -f $(WEAKNET_OUT)/weaknet/.weaknet
	cd internal/plot && $(GO) run ./weaknetplot -in $(abspath $(WEAKNET_OUT))/weaknet/results.json -out $(abspath $(WEAKNET_OUT))/weaknet

weaknet-quick:
	$(MAKE) weaknet WEAKNET_SIZES=1k,100k WEAKNET_LOSS=0,5,20 WEAKNET_N=5 WEAKNET_OUT=$(or $(QUICK_OUT),/tmp/weaknet-quick)

# Congestion control over time, from qlog: example/ccsim's flows on a clean
# and a lossy (1%) link of 100 Mbit/s and 40 ms, NewReno, Cubic and BBR side
# by side (docs/ccplots/*.png), drawn by internal/plot's qlogplot.
CCPLOTS_TMP ?= /tmp/ccplots-qlog
ccplots:
	$(GO) run ./example/ccsim -scenario 1bdp,loss1 -qlog $(CCPLOTS_TMP) >/dev/null
	@mkdir -p docs/ccplots
	cd internal/plot && $(GO) run ./qlogplot -o $(CURDIR)/docs/ccplots/clean.png -to 10s -title "100 Mbit/s, 40 ms, 1 BDP" \
		newreno=$(CCPLOTS_TMP)/1bdp-newreno-flow0.sqlog cubic=$(CCPLOTS_TMP)/1bdp-cubic-flow0.sqlog bbr=$(CCPLOTS_TMP)/1bdp-bbr-flow0.sqlog
	cd internal/plot && $(GO) run ./qlogplot -o $(CURDIR)/docs/ccplots/lossy.png -to 10s -title "1% loss" \
		newreno=$(CCPLOTS_TMP)/loss1-newreno-flow0.sqlog cubic=$(CCPLOTS_TMP)/loss1-cubic-flow0.sqlog bbr=$(CCPLOTS_TMP)/loss1-bbr-flow0.sqlog
	@rm -rf $(CCPLOTS_TMP)

# The same pictures from real connections across the emulator: a 5 MB
# response on a reused connection from our server with NewReno, Cubic and
# BBR, at EMU_LOSS percent random loss (default 1) over the weaknet link;
# the server's qlog trace is drawn (docs/ccplots/emulator-<loss>.png).
EMU_LOSS ?= 1
EMU_TMP  ?= /tmp/emuplots-qlog
.PHONY: emuplots
emuplots:
	@rm -rf $(EMU_TMP); mkdir -p docs/ccplots
	cd $(INTEROP) && $(GO) run ./weaknet -protos ours-reno,ours-cubic,ours-bbr -sizes 5m -n 1 -hs 0 -conns reused \
		-loss $(EMU_LOSS) -parallel 1 -qlog $(EMU_TMP) >/dev/null
	cd internal/plot && $(GO) run ./qlogplot -o $(CURDIR)/docs/ccplots/emulator-$(EMU_LOSS).png -title "$(EMU_LOSS)% loss, emulator" \
		newreno=$$(ls -S $(EMU_TMP)/reno-server-* | head -1) cubic=$$(ls -S $(EMU_TMP)/cubic-server-* | head -1) \
		bbr=$$(ls -S $(EMU_TMP)/bbr-server-* | head -1)

# The field's load test (internal/interop/loadtest): LOADTEST_C concurrent
# connections each fetching LOADTEST_SIZE on loopback, ours and quic-go
# each in a process of its own; setup and transfer mean/p99, peak RSS. The
# reference ran 10,000 on 4 cores; the default is scaled to a shared
# 2-core machine (docs/weaknet-analysis.md, "The load test").
# LOADTEST_FLAGS: -v (progress, our Transports' counters), -timeout,
# -sockets, -impls.
LOADTEST_C     ?= 500
LOADTEST_SIZE  ?= 1m
LOADTEST_FLAGS ?=
.PHONY: loadtest
loadtest:
	cd $(INTEROP) && $(GO) build -o /tmp/quicstack-loadtest ./loadtest && /tmp/quicstack-loadtest -c $(LOADTEST_C) -size $(LOADTEST_SIZE) $(LOADTEST_FLAGS)

# The HTTP/3 hostile-peer benchmarks (issue 22): what each resource attack
# costs, against a plain GET's cost in the same run (docs/http3-hardening.md).
.PHONY: bench-h3-hostile
bench-h3-hostile:
	$(GO) test -run '^$$' -bench 'PlainGET|Hostile' -benchmem ./http3

# A small GET with one request in flight, our HTTP/3 against net/http's
# HTTP/2 over TLS in one process on loopback (issue 28): requests per
# second (ns/op), CPU per request (cpu-ns/op, both sides) and allocations.
.PHONY: bench-h3-request
bench-h3-request:
	$(GO) test -run '^$$' -bench 'RequestOneInFlight' -benchmem -count 6 ./http3
# nftables, which the HTTP/3 fallback tests use to block UDP in network
# namespaces (Debian's package; needs root). Without it they skip.
.PHONY: nftables auto-latency
nftables:
	@command -v nft >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nftables; }

# Request latency of http3.AutoTransport, net/http and http3.Transport side
# by side over a 40 ms round trip (linkem), with both protocols available,
# UDP dropped, UDP rejected and TCP only (needs root; about a minute).
auto-latency: nftables
	@log=$$(mktemp); H3_LATENCY=1 $(GO) test -count=1 -run '^TestNetnsLatencyTable$$' -v -timeout 20m ./http3 >$$log 2>&1; \
	s=$$?; sed -n '/request latency/,/^---/p' $$log | sed 's/^ *auto_latency_linux_test.go:[0-9]*: //; s/^        //' | grep -v '^---'; \
	if [ $$s -ne 0 ]; then tail -20 $$log; fi; rm -f $$log; exit $$s

# Loads qlog files of real connections with qvis's own loading code
# (internal/qlog/qvischeck, qvis commit 72c8c4b) under node; installs the
# typescript package from npm on first use. Not part of make test, which
# checks the same header rules in Go (qlog/qvis_test.go).
.PHONY: qvis-check
qvis-check:
	bash internal/qlog/qvischeck/run.sh

# Runs every command README.md and docs/*.md show in ```sh blocks (make test runs
# it too, in go test ./...): see internal/readmecheck for the convention.
.PHONY: readme-check
readme-check:
	$(GO) test -count=1 -v -run 'TestREADMECommands|TestCommonFlags' ./internal/readmecheck

# example/proxy with real clients (not part of make test: they need PyPI
# and Chromium): aioquic's HTTP/3 client through the proxy in front of an
# HTTP/2 and an HTTP/1.1 backend, with smuggling attempts that must be
# refused; Chromium (in a loopback-only network namespace, needs root)
# loading a page, fetch() and a POST through it.
.PHONY: interop-aioquic-proxy interop-chromium-proxy
interop-aioquic-proxy:
	bash internal/interop/aioquic/proxy.sh

interop-chromium-proxy:
	bash internal/interop/chromium/proxy.sh

# The fleet tests (internal/fleettest, needs root): three servers of
# example/fleet in network namespaces behind a balancer namespace running
# the nftables ruleset of quiclb.NFTablesRuleset (a client moving
# mid-download, 0-RTT on another server, a killed server's clients reset
# by a live one), two processes sharing a port through a
# quic.ReusePortGroup, and graceful restarts under load for
# FLEET_RESTART_DURATION (default 60s). Installs Debian's nftables when
# missing. Prints what happened.
FLEET_RESTART_DURATION ?= 60s
.PHONY: fleet
fleet:
	@command -v nft >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nftables; }
	@log=$$(mktemp); FLEET=1 FLEET_RESTART_DURATION=$(FLEET_RESTART_DURATION) $(GO) test -count=1 -v -timeout 15m \
		-run '^(TestFleet|TestTwoProcessesOnePort|TestRollingRestart)$$' ./internal/fleettest >$$log 2>&1; \
	s=$$?; grep -E 'fleet: |^(--- |ok|FAIL|PASS)' $$log | sed 's/^ *[a-z_]*_test.go:[0-9]*: //'; \
	if [ $$s -ne 0 ]; then tail -30 $$log; fi; rm -f $$log; exit $$s

# Handshakes per second and bulk throughput of example/fleet with one
# socket and with a ReusePortGroup (two sockets per generation), clients
# on the same machine (internal/fleettest/measure_test.go).
.PHONY: fleet-bench
fleet-bench:
	@log=$$(mktemp); FLEET_BENCH=1 $(GO) test -count=1 -v -timeout 10m -run '^TestMeasureReusePort$$' ./internal/fleettest >$$log 2>&1; \
	s=$$?; grep -E 'fleet: ' $$log | sed 's/^ *[a-z_]*_test.go:[0-9]*: fleet: //'; \
	if [ $$s -ne 0 ]; then tail -30 $$log; fi; rm -f $$log; exit $$s

# The randomized path test of scenario_path_random_test.go over SEEDS
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
