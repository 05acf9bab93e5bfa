#!/usr/bin/env bash
# Manual interop check with a real browser: Debian's Chromium (installed
# with apt-get when missing) loads pages from our example server over
# HTTP/3, forced with --origin-to-force-quic-on and trusting the server's
# self-signed certificate by its SPKI hash. Chromium runs in a network
# namespace with only loopback (unshare -n), so that its background
# requests cannot leave the machine. Needs root. Run from the repository
# root: make interop-chromium.
set -euo pipefail
if [ "${IN_NETNS:-}" != 1 ]; then
	command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	go build -o "$dir/server" ./example/server
	mkdir "$dir/www"
	# A page whose script fetches 1 MB and a POST echo over the same
	# connection, and writes what it got into the page.
	cat >"$dir/www/fetch.html" <<'HTML'
<!DOCTYPE html><html><body><p id="r">pending</p><script>
(async () => {
  const r = await fetch("/bytes/1000000");
  const b = await r.arrayBuffer();
  const e = await fetch("/echo", {method: "POST", body: "chromium says hi"});
  const t = await e.text();
  document.getElementById("r").textContent = "fetched " + b.byteLength + " bytes, status " + r.status + "; echo: " + t;
})();
</script></body></html>
HTML
	IN_NETNS=1 SERVER="$dir/server" DIR="$dir" exec unshare -n "$0"
fi
ip link set lo up
"$SERVER" -listen 127.0.0.1:4433 -root "$DIR/www" >"$DIR/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$DIR/log" && break; sleep 0.1; done
spki=$(sed -n 's/.*SPKI SHA-256 (base64): //p' "$DIR/log")
chromium --version
fetch() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d -p "$DIR")" --enable-quic \
		--origin-to-force-quic-on=127.0.0.1:4433 --ignore-certificate-errors-spki-list="$spki" \
		--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
		--virtual-time-budget=10000 --dump-dom "$1" 2>>"$DIR/chromium.log"
}
page=$(fetch https://127.0.0.1:4433/)
if ! grep -q 'arrived over HTTP/3.0' <<<"$page"; then
	echo "FAIL: GET / did not arrive over HTTP/3:"; echo "$page"; tail -20 "$DIR/chromium.log"; exit 1
fi
echo "chromium GET /: $(grep -o 'This request arrived over HTTP/3.0' <<<"$page")"
page=$(fetch https://127.0.0.1:4433/fetch.html)
want='fetched 1000000 bytes, status 200; echo: chromium says hi'
if ! grep -q "$want" <<<"$page"; then
	echo "FAIL: fetch.html:"; echo "$page"; tail -20 "$DIR/chromium.log"; exit 1
fi
echo "chromium fetch.html: $want"
