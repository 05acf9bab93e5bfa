#!/usr/bin/env bash
# Debian's Chromium (installed with apt-get when missing) through
# example/proxy over HTTP/3, in front of example/server's HTTP/2 side:
# the page, a 1 MB fetch() and a POST echo, checked in the page and in
# the proxy's access log (each request arrived over HTTP/3.0). Chromium
# runs in a network namespace with only loopback (unshare -n), so that its
# background requests cannot leave the machine. Needs root. Run from the
# repository root: make interop-chromium-proxy.
set -euo pipefail
if [ "${IN_NETNS:-}" != 1 ]; then
	command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	go build -o "$dir/server" ./example/server
	go build -o "$dir/proxy" ./example/proxy
	mkdir "$dir/www"
	cat >"$dir/www/fetch.html" <<'HTML'
<!DOCTYPE html><html><body><p id="r">pending</p><script>
(async () => {
  const r = await fetch("/bytes/1000000");
  const b = await r.arrayBuffer();
  const e = await fetch("/echo", {method: "POST", body: "chromium through the proxy"});
  const t = await e.text();
  document.getElementById("r").textContent = "fetched " + b.byteLength + " bytes, status " + r.status + "; echo: " + t;
})();
</script></body></html>
HTML
	IN_NETNS=1 DIR="$dir" exec unshare -n "$0"
fi
ip link set lo up
"$DIR/server" -listen 127.0.0.1:8080 -tcp -root "$DIR/www" >"$DIR/server.log" 2>&1 &
spid=$!
"$DIR/proxy" -listen 127.0.0.1:4433 -backend https://127.0.0.1:8080 -backend-insecure >"$DIR/proxy.log" 2>"$DIR/proxy.err" &
ppid=$!
trap 'kill $spid $ppid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -qs 'listening on' "$DIR/server.log" && grep -qs 'listening on' "$DIR/proxy.log" && break; sleep 0.1; done
spki=$(sed -n 's/.*SPKI SHA-256 (base64): //p' "$DIR/proxy.log")
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
# The backend saw the proxy's HTTP/2 request; the proxy saw Chromium's HTTP/3.
if ! grep -q 'arrived over HTTP/2.0' <<<"$page" || ! grep -q '"GET / HTTP/3.0" 200' "$DIR/proxy.log"; then
	echo "FAIL: GET /:"; echo "$page"; cat "$DIR/proxy.log" "$DIR/proxy.err"; tail -20 "$DIR/chromium.log"; exit 1
fi
echo "chromium GET / through the proxy: HTTP/3 to the proxy, HTTP/2 to the backend"
page=$(fetch https://127.0.0.1:4433/fetch.html)
want='fetched 1000000 bytes, status 200; echo: chromium through the proxy'
if ! grep -q "$want" <<<"$page" || ! grep -q '"POST /echo HTTP/3.0" 200' "$DIR/proxy.log" || ! grep -q '"GET /bytes/1000000 HTTP/3.0" 200 1000000' "$DIR/proxy.log"; then
	echo "FAIL: fetch.html:"; echo "$page"; cat "$DIR/proxy.log" "$DIR/proxy.err"; tail -20 "$DIR/chromium.log"; exit 1
fi
echo "chromium fetch.html through the proxy: $want"
echo "proxy access log:"; grep 'HTTP/3.0' "$DIR/proxy.log"
