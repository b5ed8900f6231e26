"""A lean HTTP/1.1 transport for the synchronous client's request/answer calls.

Why not urllib3 (which the client still uses for watch streams and behind a proxy): the
scheduler's binding threads write one to three requests per pod, and through urllib3 and
http.client each cost ~0.38 ms of the calling thread's CPU (retry and timeout objects, header
dictionaries, ``email.parser`` for the answer's headers, several wrapper layers). The same
request written whole on a kept-alive socket, its answer read with the socket's buffered
reader, costs ~0.12 ms (both measured against the real API server from 16 threads, event
bodies encoded in both). At ~300 pods/s that is most of a tenth of the scheduler's CPU.

Contract:

- :class:`Transport` talks to one server (``http`` or ``https``) and is thread-safe: each
  exchange takes a kept-alive connection from a stack of idle ones (or opens one), uses it for
  exactly one request and its whole answer, and gives it back.
- An idle connection is reused only if it is not readable (the server has not closed it nor
  sent anything unasked) and has been idle under ``IDLE_SECONDS``; otherwise it is closed and
  another is taken.
- Answers are framed by ``Content-Length``, by chunked coding, or (with neither) by the end
  of the connection, which then is not reused. Interim 1xx answers are skipped. No content
  coding is asked for, so none is accepted.
- Any failure on the wire (connect, TLS, timeout, a short or malformed answer) raises
  :class:`TransportError` and closes that connection. Nothing is retried: a write may have
  reached the server (urllib3 with ``retries=False`` behaved the same).
- ``timeout`` bounds each blocking socket operation (connect, send, each read), as urllib3's
  did, not the exchange as a whole. ``deadline`` (a ``time.monotonic()`` instant) bounds the
  whole exchange instead: every socket operation waits at most until then, so a peer that
  trickles its answer a byte at a time cannot stretch it (:class:`DeadlineError`);
  ``max_answer`` caps the bytes read for one answer, headers included (:class:`TooLargeError`),
  before they are kept. The extender client uses both (it talks to peers it does not control).
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NoReturn, Protocol
from urllib.parse import quote, urlsplit

# Below the API server's IdleTimeout (90 s, apiserver's secure_serving.go), so that a connection
# is not reused just as the server closes it.
IDLE_SECONDS: Final = 80.0
MAX_IDLE: Final = 64  # idle connections kept; more are closed on return
MAX_LINE: Final = 64 * 1024  # a status, header or chunk-size line
MAX_HEADERS: Final = 200
_RECV: Final = 64 * 1024
# RFC 3986 characters a request target may carry as they are; anything else is %-encoded.
_TARGET_SAFE: Final = "!#$%&'()*+,/:;=?@[]~"


class TransportError(Exception):
    """The exchange failed on the wire; the message says where, in one line."""


class TruncatedError(TransportError):
    """The bytes read end before the answer does: on a socket, the connection closed
    mid-answer; on a buffer still filling (:mod:`corral.k8s.aio_transport`), more is due."""


class DeadlineError(TransportError):
    """The whole answer did not arrive by the exchange's deadline."""


class TooLargeError(TransportError):
    """The answer is larger than the exchange allows."""


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    reason: str
    headers: Mapping[str, str]  # names lower-cased; a repeated header keeps its last value
    body: bytes


class Reader(Protocol):
    """What :func:`read_response` reads from: a buffered binary stream."""

    def readline(self, size: int = -1, /) -> bytes: ...

    def read(self, size: int = -1, /) -> bytes: ...


def read_response(reader: Reader, method: str, *, at_eof: bool = True) -> tuple[Response, bool]:
    """Read one whole answer; returns it and whether the connection may carry another.
    ``at_eof``: the reader's end is the connection's (an answer framed by neither length nor
    chunks ends there); otherwise such an answer is :class:`TruncatedError` until it is."""
    while True:
        version, status, reason = _status_line(reader)
        headers = _headers(reader)
        if not 100 <= status < 200:
            break
    if "content-encoding" in headers and headers["content-encoding"] != "identity":
        raise TransportError(f"unasked content coding {headers['content-encoding']!r}")
    keep_alive = version == b"HTTP/1.1" and "close" not in headers.get("connection", "").lower()
    if method == "HEAD" or status in (204, 304):
        body = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        body = _chunked(reader)
    elif "content-length" in headers:
        body = _exactly(reader, _length(headers["content-length"]))
    else:
        if not at_eof:
            raise TruncatedError("answer framed by the end of the connection, not there yet")
        body = reader.read()  # to the end of the connection
        keep_alive = False
    return Response(status, reason, headers, body), keep_alive


def _line(reader: Reader) -> bytes:
    line = reader.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE or not line.endswith(b"\n"):
        _line_error(line)
    return line


def _line_error(line: bytes) -> NoReturn:
    if len(line) > MAX_LINE:
        raise TransportError("answer line too long")
    raise TruncatedError("connection closed mid-answer")


def _status_line(reader: Reader) -> tuple[bytes, int, str]:
    line = reader.readline(MAX_LINE + 1)
    if not line.endswith(b"\n"):
        if len(line) > MAX_LINE:
            raise TransportError("answer line too long")
        raise TruncatedError("connection closed before an answer" if not line else
                        "connection closed mid-answer")  # fmt: skip
    version, _, rest = line.rstrip(b"\r\n").partition(b" ")
    code, _, reason = rest.partition(b" ")
    if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise TransportError(f"malformed status line {line[:80]!r}")
    return version, int(code), reason.decode("latin-1")


def _headers(reader: Reader) -> dict[str, str]:
    headers: dict[str, str] = {}
    readline = reader.readline
    for _ in range(MAX_HEADERS + 1):
        line = readline(MAX_LINE + 1)
        if line in {b"\r\n", b"\n"}:
            return headers
        if len(line) > MAX_LINE or not line.endswith(b"\n"):
            _line_error(line)
        name, colon, value = line.partition(b":")
        if not colon or not name or name[0] in b" \t":
            raise TransportError(f"malformed header line {line[:80]!r}")
        headers[name.decode("latin-1").lower()] = value.strip().decode("latin-1")
    raise TransportError(f"more than {MAX_HEADERS} header lines")


def _length(value: str) -> int:
    if not value.isdigit():
        raise TransportError(f"malformed Content-Length {value[:40]!r}")
    return int(value)


def _exactly(reader: Reader, n: int) -> bytes:
    data = reader.read(n)
    if len(data) != n:
        raise TruncatedError(f"answer body cut short: {len(data)} of {n} bytes")
    return data


def _chunked(reader: Reader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_text = _line(reader).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise TransportError(f"malformed chunk size {size_text[:40]!r}") from None
        if size == 0:
            break
        parts.append(_exactly(reader, size))
        if _line(reader) not in (b"\r\n", b"\n"):
            raise TransportError("chunk not followed by its line end")
    _headers(reader)  # trailers, ignored
    return b"".join(parts)


class _BoundedReader:
    """:class:`Reader` straight over a socket: each ``recv`` waits at most until ``deadline``
    and the bytes received stay within ``max_bytes`` (``None``: unbounded)."""

    __slots__ = ("_buf", "_deadline", "_max", "_sock", "received")

    def __init__(self, sock: socket.socket, deadline: float | None, max_bytes: int | None) -> None:
        self._sock = sock
        self._deadline = deadline
        self._max = max_bytes
        self._buf = bytearray()
        self.received = 0

    @property
    def leftover(self) -> bool:
        return bool(self._buf)

    def _fill(self) -> bool:
        """One ``recv`` into the buffer; ``False`` at the end of the connection."""
        if self._deadline is not None:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise DeadlineError("no whole answer within the deadline")
            self._sock.settimeout(remaining)
        want = _RECV if self._max is None else min(_RECV, self._max + 1 - self.received)
        try:
            data = self._sock.recv(want)
        except TimeoutError:
            raise DeadlineError("no whole answer within the deadline") from None
        if not data:
            return False
        self.received += len(data)
        if self._max is not None and self.received > self._max:
            raise TooLargeError(f"answer larger than {self._max} bytes")
        self._buf += data
        return True

    def _take(self, n: int) -> bytes:
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def readline(self, size: int = -1, /) -> bytes:
        start = 0
        while True:
            end = self._buf.find(b"\n", start)
            if end >= 0 and (size < 0 or end < size):
                return self._take(end + 1)
            if 0 <= size <= len(self._buf):
                return self._take(size)
            start = len(self._buf)
            if not self._fill():
                return self._take(len(self._buf))

    def read(self, size: int = -1, /) -> bytes:
        while (size < 0 or len(self._buf) < size) and self._fill():
            pass
        return self._take(len(self._buf) if size < 0 else size)


class _Connection:
    __slots__ = ("idle_since", "reader", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = sock.makefile("rb")
        self.idle_since = 0.0

    def dropped(self) -> bool:
        """Readable while idle: closed by the server (or it sent something unasked)."""
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return True
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        return bool(poller.poll(0))

    def close(self) -> None:
        try:
            self.reader.close()
        finally:
            self.sock.close()


class Transport:
    """Kept-alive HTTP/1.1 connections to one server; see the module's contract."""

    def __init__(
        self,
        server: str,
        ssl_context: ssl.SSLContext | None,
        *,
        server_hostname: str | None = None,
    ) -> None:
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server {server!r}: expected http(s)://host[:port]")
        if parts.scheme == "https" and ssl_context is None:
            raise ValueError(f"server {server!r}: https needs a TLS context")
        self._tls = ssl_context if parts.scheme == "https" else None
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._sni = server_hostname or self._host
        self._prefix = parts.path.rstrip("/")
        self._host_header = parts.netloc.rpartition("@")[2].encode("ascii")
        self.opened = 0  # connections opened so far (for tests and benchmarks)

    def exchange(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        *,
        timeout: float | None = None,
        deadline: float | None = None,
        max_answer: int | None = None,
    ) -> Response:
        """Send one request (``target``: path and query) and read its whole answer."""
        request = self.encode_request(method, target, headers, body)
        if deadline is not None:
            timeout = _remaining(deadline)
        conn = self._take(timeout)
        try:
            if deadline is not None:
                timeout = _remaining(deadline)
            conn.sock.settimeout(timeout)
            conn.sock.sendall(request)
            if deadline is None and max_answer is None:
                response, keep_alive = read_response(conn.reader, method)
            else:
                bounded = _BoundedReader(conn.sock, deadline, max_answer)
                response, keep_alive = read_response(bounded, method)
                keep_alive = keep_alive and not bounded.leftover
        except TimeoutError as exc:
            conn.close()
            if deadline is not None:
                raise DeadlineError("no whole answer within the deadline") from exc
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        except (OSError, TransportError, ValueError) as exc:
            conn.close()
            if isinstance(exc, TransportError):
                raise
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        if keep_alive:
            self._give_back(conn)
        else:
            conn.close()
        return response

    def close(self) -> None:
        """Close the idle connections; the transport stays usable (it opens new ones)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __del__(self) -> None:
        self.close()

    @property
    def endpoint(self) -> tuple[str, int, ssl.SSLContext | None, str]:
        """Where and how to connect: host, port, TLS context (``None`` for plain HTTP) and the
        name to ask for in the server's certificate."""
        return self._host, self._port, self._tls, self._sni

    def encode_request(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes | None
    ) -> bytes:
        """The request as written on the wire: the target under the server URL's path,
        %-encoded where it must be; ``Host`` and ``Content-Length`` added. Header names and
        values with line breaks are refused (:class:`ValueError`)."""
        path = quote(self._prefix + target, safe=_TARGET_SAFE)
        lines = [f"{method} {path} HTTP/1.1".encode("ascii"), b"Host: " + self._host_header]
        for name, value in headers.items():
            if "\r" in value or "\n" in value or "\r" in name or "\n" in name or ":" in name:
                raise ValueError(f"header {name!r}: line breaks or colons are not allowed")
            lines.append(f"{name}: {value}".encode("latin-1"))
        if body is not None:
            lines.append(b"Content-Length: %d" % len(body))
        lines.append(b"\r\n")
        head = b"\r\n".join(lines)
        return head + body if body else head

    def _take(self, timeout: float | None) -> _Connection:
        now = time.monotonic()
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._open(timeout)
            if now - conn.idle_since < IDLE_SECONDS and not conn.dropped():
                return conn
            conn.close()

    def _give_back(self, conn: _Connection) -> None:
        conn.idle_since = time.monotonic()
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def _open(self, timeout: float | None) -> _Connection:
        try:
            plain = socket.create_connection((self._host, self._port), timeout)
            try:
                plain.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock = (
                    plain
                    if self._tls is None
                    else self._tls.wrap_socket(plain, server_hostname=self._sni)
                )
            except BaseException:
                plain.close()  # a failed handshake leaves the plain socket to us
                raise
        except (OSError, ValueError) as exc:
            raise TransportError(
                f"connecting to {self._host}:{self._port}: {type(exc).__name__}: {exc}"
            ) from exc
        self.opened += 1
        return _Connection(sock)


def _remaining(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineError("no whole answer within the deadline")
    return remaining


def ssl_context_for(configuration: Any) -> ssl.SSLContext | None:
    """The TLS settings of a ``kubernetes`` client configuration (kubeconfig or in-cluster):
    trust (CA file or data, or none when verification is off), client certificate, and the
    name the certificate must carry (``tls_server_name``, ``assert_hostname``); ``None`` for
    plain HTTP."""
    if not str(configuration.host).startswith("https"):
        return None
    if not configuration.verify_ssl:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(
            cafile=configuration.ssl_ca_cert or None,
            cadata=getattr(configuration, "ca_cert_data", None) or None,
        )
        if getattr(configuration, "assert_hostname", None) is False:
            context.check_hostname = False
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


def server_hostname_for(configuration: Any) -> str | None:
    """The name to ask for and check in the server's certificate, if not the URL's host
    (kubeconfig's ``tls-server-name``)."""
    name = getattr(configuration, "tls_server_name", None)
    return str(name) if name else None
