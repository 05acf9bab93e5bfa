#!/usr/bin/env bash
# aioquic (PyPI) as the HTTP/3 client of example/proxy in front of
# example/server's HTTP/2 side (TLS, ALPN h2) and in front of an HTTP/1.1
# backend (Python's http.server): GET, POST, and smuggling attempts that
# must be refused (h3proxy.py). Installs aioquic with pip when missing.
# Run from the repository root: make interop-aioquic-proxy.
set -euo pipefail
python3 -c 'import aioquic' 2>/dev/null || python3 -m pip install --quiet aioquic
dir=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/server" ./example/server
go build -o "$dir/proxy" ./example/proxy
wait_line() { for _ in $(seq 200); do grep -qs "$2" "$1" && return 0; sleep 0.1; done; cat "$1"; return 1; }
port_of() { sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$1"; }
python3 -c 'import aioquic; print("aioquic", aioquic.__version__)'

# Backend 1: our example server's TCP side (HTTP/2 over TLS).
"$dir/server" -listen 127.0.0.1:0 -tcp >"$dir/server.log" 2>&1 &
pids+=($!)
wait_line "$dir/server.log" 'listening on'
"$dir/proxy" -listen 127.0.0.1:0 -backend "https://127.0.0.1:$(port_of "$dir/server.log")" -backend-insecure >"$dir/proxy.log" 2>"$dir/proxy.err" &
pids+=($!)
wait_line "$dir/proxy.log" 'listening on'
echo "backend: example/server over HTTP/2"
python3 internal/interop/aioquic/h3proxy.py "$(port_of "$dir/proxy.log")"
grep -c 'HTTP/3.0" 200' "$dir/proxy.log" | sed 's/^/proxy access log: HTTP\/3 requests answered 200: /'

# Backend 2: an HTTP/1.1 server that echoes POST bodies and serves
# /bytes/N, in Python.
cat >"$dir/backend.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        n = int(self.path.rsplit("/", 1)[1]) if self.path.startswith("/bytes/") else 2
        self.send_response(200); self.send_header("Content-Length", str(n)); self.end_headers()
        self.wfile.write(b"a" * n)
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("backend listening on 127.0.0.1:%d" % s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$dir/backend.py" >"$dir/backend.log" 2>&1 &
pids+=($!)
wait_line "$dir/backend.log" 'listening on'
"$dir/proxy" -listen 127.0.0.1:0 -backend "http://127.0.0.1:$(port_of "$dir/backend.log")" >"$dir/proxy2.log" 2>"$dir/proxy2.err" &
pids+=($!)
wait_line "$dir/proxy2.log" 'listening on'
echo "backend: Python http.server over HTTP/1.1"
python3 internal/interop/aioquic/h3proxy.py "$(port_of "$dir/proxy2.log")"
