"""aioquic's HTTP/3 client through example/proxy (in front of
example/server's HTTP/2 side): a 3 MB GET and a POST echo must arrive
whole, and requests that could smuggle a second request into HTTP/1.1
(Transfer-Encoding, a connection-specific field, a body longer or shorter
than Content-Length) must be refused with a stream error, never answered.

Usage: python3 h3proxy.py PORT
"""
import asyncio
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import StreamReset


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.waiters = {}
        self.results = {}

    def quic_event_received(self, event):
        if isinstance(event, StreamReset) and event.stream_id in self.waiters:
            self.waiters.pop(event.stream_id).set_result(("reset", event.error_code, b""))
            return
        for e in self.h3.handle_event(event):
            if isinstance(e, HeadersReceived):
                self.results.setdefault(e.stream_id, [None, b""])[0] = dict(e.headers).get(b":status")
            elif isinstance(e, DataReceived):
                self.results.setdefault(e.stream_id, [None, b""])[1] += e.data
            if getattr(e, "stream_ended", False) and e.stream_id in self.waiters:
                status, body = self.results[e.stream_id]
                self.waiters.pop(e.stream_id).set_result(("response", status, body))

    async def request(self, method, path, headers=(), body=b""):
        sid = self._quic.get_next_available_stream_id()
        self.h3.send_headers(sid, [(b":method", method), (b":scheme", b"https"), (b":authority", b"localhost"),
                                   (b":path", path.encode())] + list(headers), end_stream=not body)
        if body:
            self.h3.send_data(sid, body, end_stream=True)
        fut = asyncio.get_running_loop().create_future()
        self.waiters[sid] = fut
        self.transmit()
        return await asyncio.wait_for(fut, 30)


async def main(port):
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_NONE, server_name="localhost")
    failed = False
    async with connect("127.0.0.1", port, configuration=cfg, create_protocol=Client) as c:
        kind, status, body = await c.request(b"GET", "/bytes/3000000")
        print(f"aioquic through the proxy: GET /bytes/3000000 {kind} {status} ({len(body)} bytes)")
        failed |= not (kind == "response" and status == b"200" and len(body) == 3000000)
        kind, status, body = await c.request(b"POST", "/echo", [(b"content-length", b"11")], b"hello proxy")
        print(f"aioquic through the proxy: POST /echo {kind} {status} {body!r}")
        failed |= not (kind == "response" and status == b"200" and body == b"hello proxy")
    smuggled = b"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    for name, headers, body in [
        ("transfer-encoding", [(b"transfer-encoding", b"chunked")], smuggled),
        ("connection", [(b"connection", b"keep-alive")], b""),
        ("body longer than content-length", [(b"content-length", b"3")], smuggled),
        ("body shorter than content-length", [(b"content-length", b"100")], b"short"),
    ]:
        # A connection each: a malformed request may close it.
        async with connect("127.0.0.1", port, configuration=cfg, create_protocol=Client) as c:
            try:
                kind, code, _ = await c.request(b"POST", "/echo", headers, body)
            except Exception as e:  # the connection closed
                kind, code = "closed", repr(e)
            print(f"aioquic through the proxy: {name}: {kind} {code}")
            if kind == "response" and code != b"400":
                failed = True
    if failed:
        print("FAIL")
        sys.exit(1)


asyncio.run(main(int(sys.argv[1])))
