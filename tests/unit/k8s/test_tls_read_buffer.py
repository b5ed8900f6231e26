"""asyncio's TLS read buffer is 64 KiB in the engine (256 KiB per connection by default), and
an answer many times that size still arrives whole over the lean async transport."""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import ssl
from pathlib import Path

import pytest

from corral.k8s import aio
from corral.k8s.aio_transport import AsyncTransport
from corral.k8s.certs import issue


def test_every_asyncio_tls_connection_gets_the_smaller_buffer() -> None:
    assert aio.TLS_READ_BUFFER == 64 << 10
    assert asyncio.sslproto.SSLProtocol.max_size == aio.TLS_READ_BUFFER


@pytest.mark.parametrize("size", [pytest.param(1, id="tiny"), pytest.param(3 << 20, id="3MiB")])
def test_a_large_answer_arrives_whole_over_tls(tmp_path: Path, size: int) -> None:
    ca, cert, key = issue(["127.0.0.1"])
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    trusted = ssl.create_default_context(cadata=ca.decode())
    body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        writer.write(head + body)
        await writer.drain()
        writer.close()

    async def main() -> bytes:
        server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=served)
        port = server.sockets[0].getsockname()[1]
        transport = AsyncTransport(f"https://127.0.0.1:{port}", trusted)
        try:
            response = await transport.exchange("GET", "/big", {"Host": "127.0.0.1"})
            return bytes(response.body)
        finally:
            transport.close()
            server.close()

    assert asyncio.run(main()) == body
