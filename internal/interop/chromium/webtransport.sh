#!/usr/bin/env bash
# Interop check of WebTransport with a real browser: headless Chromium's
# JavaScript WebTransport API against our example/webtransport echo
# server. The page opens a session (trusting the self-signed certificate
# through serverCertificateHashes), echoes a bidirectional stream, a
# unidirectional stream and a datagram, closes the session with code 7,
# and writes the results into the DOM, which --dump-dom prints. Chromium
# runs in a network namespace with only loopback (unshare -n). Debian's
# Chromium is installed with apt-get when missing. Needs root. Run from
# the repository root: make interop-chromium-webtransport.
set -euo pipefail
if [ "${IN_NETNS:-}" != 1 ]; then
	command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
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
page=$(timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$(mktemp -d -p "$DIR")" --enable-quic \
	--origin-to-force-quic-on=127.0.0.1:4433 --ignore-certificate-errors-spki-list="$spki" \
	--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
	--virtual-time-budget=20000 --dump-dom https://127.0.0.1:4433/ 2>"$DIR/chromium.log") || true
want='bidi=bidi from chromium; uni=uni from chromium; datagram=datagram from chromium; closed=7'
if ! grep -q "$want" <<<"$page"; then
	echo "FAIL: WebTransport page:"; echo "$page" | grep -o '<p id="result">[^<]*' || echo "$page"
	echo "server log:"; cat "$DIR/log"; echo "chromium log:"; tail -20 "$DIR/chromium.log"; exit 1
fi
echo "chromium WebTransport: $want"
grep 'session' "$DIR/log"
# The server saw the session end with the page's WT_CLOSE_SESSION.
grep -q 'ended: webtransport: session closed by the peer with code 7: bye' "$DIR/log" || {
	echo "FAIL: the server did not see the close capsule:"; cat "$DIR/log"; exit 1; }
echo "PASS"
