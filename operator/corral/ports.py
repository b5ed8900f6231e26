"""Ports for servers this machine starts: the operator's local engines and the test harness.

A port the kernel picks (bind to port 0) comes from its ephemeral range, the one it also gives
outgoing connections; between picking it and the server binding it, any connection may take it
as its source port, and the server fails with "address already in use" (a benchmark run was lost
that way). So ports are drawn below that range.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path
from typing import Final

EPHEMERAL_RANGE: Final = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Listening ports are drawn from this many ports just below the kernel's ephemeral range.
_BELOW_EPHEMERAL: Final = 12_000


def ephemeral_range(path: Path = EPHEMERAL_RANGE) -> tuple[int, int]:
    """The ports the kernel gives outgoing connections (Linux's default when unreadable)."""
    try:
        low, high = (int(v) for v in path.read_text().split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def free_port(address: str = "127.0.0.1", *, ephemeral: tuple[int, int] | None = None) -> int:
    """A currently free TCP port on ``address`` for a server about to start.

    Drawn at random below the kernel's ephemeral range: a port the kernel picks (bind to 0) is
    an ephemeral one, which any outgoing connection may take as its source port before the
    server binds it (a benchmark lost a run to kube-apiserver's "bind: address already in
    use" that way). Falls back to the kernel's choice when the range leaves no room below it.
    """
    low, _ = ephemeral or ephemeral_range()
    first = max(1025, low - _BELOW_EPHEMERAL)
    rng = random.SystemRandom()
    for _ in range(64 if low - first >= 1000 else 0):
        port = rng.randrange(first, low)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((address, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        chosen: int = sock.getsockname()[1]
        return chosen
