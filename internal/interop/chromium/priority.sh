#!/usr/bin/env bash
# Manual check of HTTP/3 priorities (RFC 9218) with a real browser, in the
# way of run.sh: Debian's Chromium, in a network namespace with only
# loopback, loads a page from our example server through the netem relay
# (example/netem: 20 Mbit/s, 10 ms one-way, a 50-datagram queue). The
# page starts 20 background fetches of 200 KB (fetch priority "low"),
# then, once their data flows, one urgent fetch of 500 KB (priority
# "high"), and reports how many had completed when the urgent one did; a
# control run makes the same fetch at priority "low". (The page's clock
# is Chromium's virtual time, so the order is reported, not times.)
# Chromium sends the priorities in the Priority header field (seen: "i"
# for the background, "u=0, i" for the urgent fetch); the check passes if the urgent fetch completes
# before all but 3 of the background ones. (Chromium also holds back
# low-priority requests while a high one is pending; the server's qlog,
# with QLOG=1 KEEP=1, shows its own part: the urgent response, requested
# after four background ones, completing first.) Needs root. Run from
# the repository root: make interop-chromium-priority.
set -euo pipefail
if [ "${IN_NETNS:-}" != 1 ]; then
	command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }
	dir=$(mktemp -d)
	[ -n "${KEEP:-}" ] && echo "keeping $dir" || trap 'rm -rf "$dir"' EXIT
	go build -o "$dir/server" ./example/server
	go build -o "$dir/netem" ./example/netem
	mkdir "$dir/www"
	cat >"$dir/www/priority.html" <<'HTML'
<!DOCTYPE html><html><body><p id="r">pending</p><script>
(async () => {
  const done = [];
  const get = (path, priority, name) => fetch(path, {priority, cache: "no-store"}).then(async r => {
    const b = await r.arrayBuffer();
    done.push(name);
    return b.byteLength;
  });
  // The background fetches start; once the first one's data arrives (so
  // all are in flight; no timer: the page runs in virtual time), the
  // urgent one.
  const bg = [];
  let first;
  const started = new Promise(r => first = r);
  for (let i = 0; i < 20; i++) {
    bg.push(fetch("/bytes/200000?bg=" + i, {priority: "low", cache: "no-store"}).then(async r => {
      const rd = r.body.getReader();
      let n = 0;
      for (;;) {
        const {done: end, value} = await rd.read();
        if (end) break;
        n += value.length;
        first();
      }
      done.push("bg");
      return n;
    }));
  }
  await started;
  const urgent = new URLSearchParams(location.search).get("urgent") || "high";
  const u = await get("/bytes/500000?urgent", urgent, "urgent");
  // Reported at once: the background fetches may still run for long.
  document.getElementById("r").textContent = "urgent fetch (" + urgent + ", " + u + " bytes) completed as number " +
    done.length + " of 21";
})();
</script></body></html>
HTML
	IN_NETNS=1 SERVER="$dir/server" NETEM="$dir/netem" DIR="$dir" exec unshare -n "$0"
fi
ip link set lo up
"$SERVER" -listen 127.0.0.1:4433 -root "$DIR/www" ${QLOG:+-qlog "$DIR/qlog"} >"$DIR/log" 2>&1 &
spid=$!
"$NETEM" -server 127.0.0.1:4433 -listen 127.0.0.1:4434 -bandwidth 20 -delay 10ms -queue 50 >"$DIR/netem.log" 2>&1 &
npid=$!
trap 'kill $spid $npid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$DIR/log" && break; sleep 0.1; done
spki=$(sed -n 's/.*SPKI SHA-256 (base64): //p' "$DIR/log")
chromium --version
load() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d -p "$DIR")" --enable-quic \
		--origin-to-force-quic-on=127.0.0.1:4434 --ignore-certificate-errors-spki-list="$spki" \
		--host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
		--virtual-time-budget=600000 --dump-dom "$1" 2>>"$DIR/chromium.log" | sed -n 's/.*<p id="r">\([^<]*\)<.*/\1/p'
}
# The control: the same fetch at the background's priority.
control=$(load "https://127.0.0.1:4434/priority.html?urgent=low")
echo "chromium priority.html, all low:  $control"
result=$(load "https://127.0.0.1:4434/priority.html")
echo "chromium priority.html, urgent high: $result"
n=$(sed -n 's/.*completed as number \([0-9]*\) of 21.*/\1/p' <<<"$result")
if [ -z "$n" ] || [ "$n" -gt 4 ]; then
	echo "FAIL: the urgent fetch did not complete first"; tail -20 "$DIR/chromium.log"; exit 1
fi
