"""Answers with a Retry-After are sent again (client-go's rest client): which ones, how many
times, within which budget, on both clients, against a scripted loopback peer. The waits are
recorded, not slept."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from corral.k8s import ApiError, Client
from corral.k8s.aio import AsyncClient
from corral.k8s.client import RETRY_AFTER_ATTEMPTS
from corral.k8s.ratelimit import TokenBucket
from support.http_peer import OK, Answer, Peer

PeerOf = Callable[[Answer], Peer]


def answer(status: str, retry_after: str | None = None) -> bytes:
    extra = f"Retry-After: {retry_after}\r\n" if retry_after is not None else ""
    return f"HTTP/1.1 {status}\r\n{extra}Content-Length: 0\r\n\r\n".encode()


THROTTLED = answer("429 Too Many Requests", "1")


@pytest.mark.parametrize(
    ("first", "attempts", "fails", "waits"),
    [
        pytest.param(THROTTLED, 2, None, [1.0], id="429 with Retry-After: sent again"),
        pytest.param(answer("503 Service Unavailable", "2"), 2, None, [2.0],
                     id="503 with Retry-After: sent again"),
        pytest.param(answer("504 Gateway Timeout", "0"), 2, None, [0.0],
                     id="5xx with Retry-After 0: at once"),
        pytest.param(answer("429 Too Many Requests"), 1, 429, [],
                     id="429 without Retry-After: fails"),
        pytest.param(answer("409 Conflict", "1"), 1, 409, [], id="409 with Retry-After: fails"),
        pytest.param(answer("429 Too Many Requests", "soon"), 1, 429, [],
                     id="a Retry-After that is not whole seconds: fails"),
        pytest.param(answer("429 Too Many Requests", "40"), 1, 429, [],
                     id="a wait past the request's timeout: fails at once"),
    ],
)  # fmt: skip
def test_which_answers_are_sent_again(
    peer_of: PeerOf, first: bytes, attempts: int, fails: int | None, waits: list[float]
) -> None:
    peer = peer_of(lambda n, head: (first if n == 1 else OK, False))
    sync = Client.from_token(f"http://127.0.0.1:{peer.port}", "t", None)
    slept: list[float] = []
    sync._sleep = slept.append
    if fails is None:
        assert sync.request("POST", "/x", body={}) == {}
    else:
        with pytest.raises(ApiError) as caught:
            sync.request("POST", "/x", body={})
        assert caught.value.status == fails
    assert (peer.served, slept) == (attempts, waits)


def test_gives_up_after_client_gos_ten_retries(peer_of: PeerOf) -> None:
    peer = peer_of(lambda n, head: (answer("429 Too Many Requests", "0"), False))
    sync = Client.from_token(f"http://127.0.0.1:{peer.port}", "t", None)
    with pytest.raises(ApiError, match="429"):
        sync.request("GET", "/x")
    assert peer.served == 1 + RETRY_AFTER_ATTEMPTS


def test_the_event_loop_client_waits_and_takes_a_token_per_attempt(
    peer_of: PeerOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    peer = peer_of(lambda n, head: (THROTTLED if n <= 2 else OK, False))
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float) -> None:
        slept.append(delay)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    bucket = CountingBucket(1000.0, 1000)

    async def main() -> object:
        client = AsyncClient(Client.from_token(f"http://127.0.0.1:{peer.port}", "t", None),
                             bucket=bucket)  # fmt: skip
        try:
            return await client.request("GET", "/x")
        finally:
            await client.close()

    assert asyncio.run(main()) == {}
    assert peer.served == 3
    assert [s for s in slept if s] == [1.0, 1.0]
    assert bucket.reserved == 3


class CountingBucket(TokenBucket):
    reserved = 0

    def reserve(self, verb: str) -> float:
        self.reserved += 1
        return super().reserve(verb)
