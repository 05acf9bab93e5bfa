#!/usr/bin/env bash
# Loads qlog files of a real connection (client and server, QUIC and
# HTTP/3) with qvis's own loading code under node (check.js). Installs the
# typescript package (5.x, which has the transpileModule API) from npm into
# QVIS_CACHE (default ~/.cache/quicstack-qvischeck) when missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cache=${QVIS_CACHE:-$HOME/.cache/quicstack-qvischeck}
if [ ! -f "$cache/node_modules/typescript/package.json" ]; then
	mkdir -p "$cache"
	npm install --prefix "$cache" --no-save --no-audit --no-fund typescript@5 >/dev/null
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
QLOG_TEST_KEEP="$out" go test -count=1 -run '^(TestDirTracerLoopback|TestHTTP3Events)$' ./qlog >/dev/null
ls "$out"/*.sqlog >/dev/null
TS_PATH="$cache/node_modules/typescript" node "$here/check.js" "$out"/*.sqlog
