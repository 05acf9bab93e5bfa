#!/usr/bin/env bash
# Manual interop check with Python's aioquic (PyPI) as the client against
# our example server: the chacha20 case (aioquic can offer only ChaCha20,
# which Go's crypto/tls clients cannot) and compatible version
# negotiation (aioquic starts in v1 and offers v2). Installs aioquic with
# pip when missing. Run from the repository root: make interop-aioquic.
set -euo pipefail
python3 -c 'import aioquic' 2>/dev/null || python3 -m pip install --quiet aioquic
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/server" ./example/server
"$dir/server" -listen 127.0.0.1:0 >"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q 'listening on' "$dir/log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/log")
[ -n "$port" ] || { cat "$dir/log"; exit 1; }
python3 -c 'import aioquic; print("aioquic", aioquic.__version__)'
for cipher in aes chacha20; do
	for versions in v1 v1v2 v2; do
		python3 internal/interop/aioquic/h3get.py "$port" "$cipher" "$versions"
	done
done
