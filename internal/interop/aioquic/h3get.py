"""HTTP/3 GETs with aioquic's client against one of our servers.

Usage: python3 h3get.py PORT CIPHER VERSIONS

CIPHER is "aes" (aioquic's default suites) or "chacha20" (only
TLS_CHACHA20_POLY1305_SHA256 offered, the interop runner's chacha20 case,
which Go's crypto/tls clients cannot ask for). VERSIONS is "v1" (QUIC v1
only), "v1v2" (start in v1 and offer v2 in version_information: our server
must upgrade, RFC 9368) or "v2" (start in v2). It fetches / and 3 MB and
exits non-zero unless both arrive whole with the cipher and version
expected.
"""
import asyncio
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.packet import QuicProtocolVersion
from aioquic.tls import CipherSuite

V1, V2 = QuicProtocolVersion.VERSION_1, QuicProtocolVersion.VERSION_2


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.waiters = {}
        self.results = {}

    def quic_event_received(self, event):
        for e in self.h3.handle_event(event):
            if isinstance(e, HeadersReceived):
                self.results.setdefault(e.stream_id, [None, b""])[0] = dict(e.headers).get(b":status")
            elif isinstance(e, DataReceived):
                self.results.setdefault(e.stream_id, [None, b""])[1] += e.data
            if getattr(e, "stream_ended", False) and e.stream_id in self.waiters:
                self.waiters.pop(e.stream_id).set_result(self.results[e.stream_id])

    async def get(self, path):
        sid = self._quic.get_next_available_stream_id()
        self.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"),
                                   (b":authority", b"localhost"), (b":path", path.encode())], end_stream=True)
        fut = asyncio.get_running_loop().create_future()
        self.waiters[sid] = fut
        self.transmit()
        return await asyncio.wait_for(fut, 30)


async def main(port, cipher, versions):
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_NONE,
                            server_name="localhost")
    want_cipher = "AES_128_GCM_SHA256"
    if cipher == "chacha20":
        cfg.cipher_suites = [CipherSuite.CHACHA20_POLY1305_SHA256]
        want_cipher = "CHACHA20_POLY1305_SHA256"
    cfg.supported_versions = {"v1": [V1], "v1v2": [V1, V2], "v2": [V2]}[versions]
    want_version = V1 if versions == "v1" else V2
    async with connect("127.0.0.1", port, configuration=cfg, create_protocol=Client) as c:
        status, page = await c.get("/")
        status2, body = await c.get("/bytes/3000000")
        suite = c._quic.tls.key_schedule.cipher_suite.name
        version = c._quic._version
        print(f"aioquic {cipher} {versions}: cipher {suite}, version {version:#x}, "
              f"GET / {status.decode()} ({len(page)} bytes), GET /bytes/3000000 {status2.decode()} ({len(body)} bytes)")
        ok = (status == b"200" and b"HTTP/3.0" in page and status2 == b"200" and len(body) == 3000000
              and suite == want_cipher and version == want_version)
        if not ok:
            print(f"FAIL: want cipher {want_cipher}, version {want_version:#x}, both bodies whole")
            sys.exit(1)


asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
