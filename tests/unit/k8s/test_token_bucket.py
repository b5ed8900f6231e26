"""The client-side token bucket: reservations wait in the order they were made, and each one's
wait is told to the observer with its HTTP method (client-go's
rest_client_rate_limiter_duration_seconds), zero waits included; an unlimited bucket observes
nothing, as client-go without a rate limiter."""

from __future__ import annotations

import pytest

from corral.k8s.ratelimit import TokenBucket


@pytest.mark.parametrize(
    ("qps", "burst", "verbs", "observed"),
    [
        pytest.param(
            10.0, 2, ["GET", "POST", "PATCH", "GET"],
            [("GET", 0.0), ("POST", 0.0), ("PATCH", 0.1), ("GET", 0.2)],
            id="burst then queued",
        ),
        pytest.param(5.0, 1, ["PUT"], [("PUT", 0.0)], id="a token saved up"),
        pytest.param(0.0, 1, ["GET", "GET"], [], id="unlimited: no limiter to observe"),
    ],
)  # fmt: skip
def test_each_wait_is_observed_with_its_method(
    qps: float, burst: int, verbs: list[str], observed: list[tuple[str, float]]
) -> None:
    bucket = TokenBucket(qps, burst, clock=lambda: 100.0)  # no time passes
    seen: list[tuple[str, float]] = []
    bucket.observer = lambda verb, seconds: seen.append((verb, round(seconds, 6)))
    delays = [round(bucket.reserve(v), 6) for v in verbs]
    assert seen == observed
    assert [d for _, d in seen] == (delays if observed else [])
