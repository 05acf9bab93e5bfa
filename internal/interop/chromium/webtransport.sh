#!/usr/bin/env bash
# Interop check of WebTransport with a real browser: headless Chromium's
# JavaScript WebTransport API against our example/webtransport echo
# server. The page opens a session (trusting the self-signed certificate
# through serverCertificateHashes), echoes a bidirectional stream, a
# unidirectional stream and a datagram, closes the session with code 7,
# and writes the results into the DOM, which is read through chromedriver. Chromium
# runs in a network namespace with only loopback (unshare -n). Debian's
# Chromium is installed with apt-get when missing. Needs root. Run from
# the repository root: make interop-chromium-webtransport.
set -euo pipefail
if [ "${IN_NETNS:-}" != 1 ]; then
	command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v jq >/dev/null ||
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver jq curl; }
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	go build -o "$dir/server" ./example/webtransport
	IN_NETNS=1 SERVER="$dir/server" DIR="$dir" exec unshare -n "$0"
fi
ip link set lo up
"$SERVER" -listen 127.0.0.1:4433 >"$DIR/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$DIR/log" && break; sleep 0.1; done
spki=$(sed -n 's/.*SPKI SHA-256 (base64): //p' "$DIR/log")
chromium --version
# chromedriver drives the browser, and the page's result is polled for
# up to 90 s of real time: --dump-dom with --virtual-time-budget can dump
# the page before the WebTransport exchange ends on a loaded machine
# (virtual time does not wait for WebTransport).
command -v chromedriver >/dev/null || { echo "FAIL: chromedriver missing (Debian: chromium-driver)"; exit 1; }
chromedriver --port=9515 >"$DIR/chromedriver.log" 2>&1 &
cdpid=$!
trap 'kill $pid $cdpid 2>/dev/null || true' EXIT
wd=http://127.0.0.1:9515
for _ in $(seq 100); do curl -sf "$wd/status" >/dev/null && break; sleep 0.1; done
caps=$(jq -n --arg spki "$spki" --arg ud "$(mktemp -d -p "$DIR")" '{capabilities: {alwaysMatch: {"goog:chromeOptions": {
	binary: "/usr/bin/chromium",
	args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		("--user-data-dir=" + $ud), "--enable-quic", "--origin-to-force-quic-on=127.0.0.1:4433",
		("--ignore-certificate-errors-spki-list=" + $spki),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]}}}}')
sid=$(curl -sf -X POST -H 'Content-Type: application/json' -d "$caps" "$wd/session" | jq -r .value.sessionId)
[ -n "$sid" ] && [ "$sid" != null ] || { echo "FAIL: no chromedriver session"; tail -20 "$DIR/chromedriver.log"; exit 1; }
curl -sf -X POST -H 'Content-Type: application/json' -d '{"url": "https://127.0.0.1:4433/"}' "$wd/session/$sid/url" >/dev/null || true
page=pending
for _ in $(seq 180); do
	page=$(curl -sf -X POST -H 'Content-Type: application/json' \
		-d '{"script": "return document.getElementById(\"result\").textContent", "args": []}' \
		"$wd/session/$sid/execute/sync" | jq -r .value) || page="no page"
	[ "$page" != pending ] && [ "$page" != "no page" ] && break
	sleep 0.5
done
curl -sf -X DELETE "$wd/session/$sid" >/dev/null || true
want='bidi=bidi from chromium; uni=uni from chromium; datagram=datagram from chromium; closed=7'
if ! grep -q "$want" <<<"$page"; then
	echo "FAIL: WebTransport page: $page"
	echo "server log:"; cat "$DIR/log"; echo "chromedriver log:"; tail -20 "$DIR/chromedriver.log"; exit 1
fi
echo "chromium WebTransport: $want"
# The server sees the session end with the page's WT_CLOSE_SESSION.
for _ in $(seq 100); do grep -q 'ended:' "$DIR/log" && break; sleep 0.1; done
grep 'session' "$DIR/log"
grep -q 'ended: webtransport: session closed by the peer with code 7: bye' "$DIR/log" || {
	echo "FAIL: the server did not see the close capsule:"; cat "$DIR/log"; exit 1; }
echo "PASS"
