"""Consumable capacity arithmetic: upstream's consumable_capacity_test.go tables (the cases with
DRAFractionalCapacityRange off, same names as ids), then Corral's own."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from corral.scheduler.plugins.dynamic_resources import capacity as cap
from corral.scheduler.plugins.dynamic_resources.in_use import ByClaim, InUse, gather
from corral.scheduler.plugins.dynamic_resources.pools import DeviceID

Json = dict[str, Any]
MAX = "9223372036854775807"


def policy(default: str | None = None, **rest: Any) -> Json:
    out: Json = dict(rest)
    if default is not None:
        out["default"] = default
    return out


def capacity(value: str, request_policy: Json | None = None) -> Json:
    out: Json = {"value": value}
    if request_policy is not None:
        out["requestPolicy"] = request_policy
    return out


@pytest.mark.parametrize(
    ("requested", "device_capacity", "want"),
    [
        pytest.param(None, capacity("1", {}), "1", id="empty"),
        pytest.param(
            MAX, capacity("9223372036854775808", policy("0", validRange={"min": "0", "step": "2"})),
            cap.NOT_REPRESENTABLE, id="rounded-value-above-maxint64-is-rejected",
        ),
        pytest.param(
            "18446744073709551619",
            capacity("18446744073709551619", policy("0", validRange={"min": "0", "step": "3"})),
            cap.NOT_REPRESENTABLE, id="request-above-maxint64-is-rejected",
        ),
        pytest.param(
            "9223372036854775806", capacity(MAX, policy("1", validRange={"min": "1", "step": "2"})),
            MAX, id="max-safe-boundary-rounds-to-maxint64",
        ),
        pytest.param(None, capacity("2", policy("1", validRange={"min": "1"})), "1",
                     id="min in range"),
        pytest.param(None, capacity("2", policy("1", validValues=["1"])), "1", id="default in set"),
        pytest.param("2", capacity("2", policy("1", validRange={"min": "1"})), "2",
                     id="more than min in range"),
        pytest.param("1", capacity("2", policy("1", validRange={"min": "2"})), "2",
                     id="less than min in range"),
        pytest.param("2", capacity("3", policy("1", validRange={"min": "1", "step": "2"})), "3",
                     id="with step (round up)"),
        pytest.param("2", capacity("2", policy("1", validRange={"min": "1", "step": "1"})), "2",
                     id="with step (no remaining)"),
        pytest.param("2", capacity("3", policy("1", validValues=["1", "2", "3"])), "2",
                     id="valid value in set"),
        pytest.param("2", capacity("3", policy("1", validValues=["1", "3"])), "3",
                     id="set (round up)"),
        pytest.param("3", capacity("3", policy("1", validValues=["1", "2"])), "3",
                     id="larger than set"),
        # Corral's own: no policy, nothing requested: the whole capacity.
        pytest.param(None, capacity("40Gi"), "40Gi", id="no-policy-no-request-takes-all"),
        pytest.param("5Gi", capacity("40Gi"), "5Gi", id="no-policy-takes-the-request"),
        # Fractional gate off: a fractional request rounds on Value() (ceil) integers.
        pytest.param("1500m", capacity("8", policy("1", validRange={"min": "1", "step": "2"})),
                     "3", id="fractional-request-integer-path"),
        pytest.param("1500Mi",
                     capacity("8Gi", policy("1Gi", validRange={"min": "1Gi", "step": "1Gi"})),
                     "2Gi", id="binary-step-keeps-its-format"),
        pytest.param("1500M",
                     capacity("8G", policy("1G", validRange={"min": "1G", "step": "1G"})),
                     "2G", id="decimal-step-keeps-its-format"),
    ],
)  # fmt: skip
def test_consumed(requested: str | None, device_capacity: Json, want: str) -> None:
    if want == cap.NOT_REPRESENTABLE:
        with pytest.raises(cap.CapacityError, match="cannot be represented"):
            cap.consumed(requested, device_capacity)
        return
    got = cap.consumed(requested, device_capacity)
    assert (got.amount, got.text) == (cap.quantity(want).amount, want)


@pytest.mark.parametrize(
    ("value", "request_policy", "want"),
    [
        pytest.param("1", None, False, id="no constraint"),
        pytest.param("1", policy("1", validRange={"min": "1", "max": "2"}), False,
                     id="less than maximum"),
        pytest.param("2", policy("1", validRange={"min": "1", "max": "1"}), True,
                     id="more than maximum"),
        pytest.param("1", policy("1", validValues=["1"]), False, id="in set"),
        pytest.param("2", policy("1", validValues=["1"]), True, id="not in set"),
        # Corral's own.
        pytest.param("3", policy("2", validRange={"min": "2", "step": "2"}), True,
                     id="off-the-step"),
        pytest.param("4", policy("2", validRange={"min": "2", "step": "2"}), False,
                     id="on-the-step"),
    ],
)  # fmt: skip
def test_violates_policy(value: str, request_policy: Json | None, want: bool) -> None:
    assert cap.violates_policy(cap.quantity(value), request_policy) is want


def test_get_consumed_capacity_from_request() -> None:
    """Upstream's get-consumed-capacity-from-request."""
    capacities = {
        "capacity-0": capacity("2", policy("2", validRange={"min": "1"})),
        "capacity-1": capacity("2", policy("1", validRange={"min": "1"})),
        "dummy": capacity("1"),
    }
    got = cap.for_request({"capacity-0": "1", "dummy": "1"}, capacities)
    assert {k: v.amount for k, v in got.items()} == {
        "capacity-0": 1,
        "capacity-1": 1,
        "dummy": 1,
    }


def test_cmp_request_over_capacity_fatal_beats_soft() -> None:
    """Upstream's cmp-request-over-capacity-fatal-beats-soft: representability is checked for
    every capacity before the soft mismatch of another."""
    capacities = {
        "capacity-0": capacity("1"),
        "capacity-1": capacity(
            "9223372036854775808", policy(None, validRange={"min": "0", "step": "2"})
        ),
    }
    with pytest.raises(cap.CapacityError, match="cannot be represented"):
        cap.fits({"capacity-0": "2", "capacity-1": MAX}, capacities, {}, {})


@pytest.mark.parametrize(
    ("requests", "in_use", "allocating", "want"),
    [
        pytest.param({"mem": "1"}, {}, {}, True, id="room"),
        pytest.param({"mem": "2"}, {"mem": Fraction(3)}, {}, False, id="in-use-leaves-too-little"),
        pytest.param({"mem": "2"}, {}, {"mem": Fraction(3)}, False, id="attempt-took-the-rest"),
        pytest.param({"mem": "1"}, {"mem": Fraction(1)}, {"mem": Fraction(2)}, True,
                     id="exactly-full"),
        pytest.param({"other": "1"}, {}, {}, False, id="unknown-capacity"),
        pytest.param(None, {"mem": Fraction(1)}, {}, False, id="no-request-takes-all"),
    ],
)  # fmt: skip
def test_fits(
    requests: Json | None, in_use: dict[str, Fraction], allocating: dict[str, Fraction], want: bool
) -> None:
    assert cap.fits(requests, {"mem": capacity("4")}, in_use, allocating) is want


@pytest.mark.parametrize(
    ("amount", "fmt", "want"),
    [
        pytest.param(0, cap.BINARY_SI, "0", id="zero"),
        pytest.param(4, cap.BINARY_SI, "4", id="binary-below-1024-is-decimal"),
        pytest.param(2048, cap.BINARY_SI, "2Ki", id="binary-ki"),
        pytest.param(3000, cap.BINARY_SI, "3000", id="binary-not-a-power"),
        pytest.param(3 * 2**30, cap.BINARY_SI, "3Gi", id="binary-gi"),
        pytest.param(3000, cap.DECIMAL_SI, "3k", id="decimal-k"),
        pytest.param(1500, cap.DECIMAL_SI, "1500", id="decimal-not-a-power"),
        pytest.param(20000, cap.DECIMAL_SI, "20k", id="decimal-groups-of-three"),
        pytest.param(2 * 10**9, cap.DECIMAL_EXPONENT, "2e9", id="exponent"),
    ],
)
def test_canonical(amount: int, fmt: str, want: str) -> None:
    assert cap.canonical(amount, fmt) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("1Gi", cap.BINARY_SI, id="binary"),
        pytest.param("1G", cap.DECIMAL_SI, id="decimal"),
        pytest.param("1E", cap.DECIMAL_SI, id="exa-is-decimal"),
        pytest.param("1e3", cap.DECIMAL_EXPONENT, id="exponent"),
        pytest.param("12", cap.DECIMAL_SI, id="plain"),
    ],
)
def test_quantity_format(text: str, want: str) -> None:
    assert cap.quantity_format(text) == want


def test_in_use_gathers_dedicated_and_shared() -> None:
    d1, d2, d3 = (DeviceID("drv", "pool", f"dev-{i}") for i in (1, 2, 3))

    def allocation(*results: Json) -> Json:
        return {"devices": {"results": list(results)}}

    def result(dev: str, **extra: Any) -> Json:
        return {"request": "r", "driver": "drv", "pool": "pool", "device": dev, **extra}

    share = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
    got = gather(
        [
            allocation(result("dev-1"), result("dev-3", adminAccess=True)),
            None,
            allocation(result("dev-2", shareID=share, consumedCapacity={"mem": "1Gi"})),
            allocation(result("dev-2", shareID=share, consumedCapacity={"mem": "512Mi"})),
            allocation(result("dev-3", shareID=share)),
        ]
    )
    assert got == InUse(frozenset({d1}), {d2: {"mem": Fraction(3 * 2**29)}, d3: {}})
    more = got.plus(
        gather([allocation(result("dev-2", shareID=share, consumedCapacity={"mem": "1"}))])
    )
    assert more.shared[d2] == {"mem": Fraction(3 * 2**29 + 1)}
    assert got.shared[d2] == {"mem": Fraction(3 * 2**29)}  # not changed by plus


def _claim(uid: str, version: int, *devices: str, share: str | None = None) -> Json:
    results = [
        {"request": "r", "driver": "drv", "pool": "pool", "device": d,
         **({"shareID": share, "consumedCapacity": {"mem": "1"}} if share else {})}
        for d in devices
    ]  # fmt: skip
    out: dict[str, Any] = {"metadata": {"uid": uid, "resourceVersion": str(version)}}
    if results:
        out["status"] = {"allocation": {"devices": {"results": results}}}
    return out


SHARE = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"


@pytest.mark.parametrize(
    "rounds",
    [
        pytest.param([[_claim("a", 1, "dev-1"), _claim("b", 1)],
                      [_claim("a", 1, "dev-1"), _claim("b", 2, "dev-2")]],
                     id="a claim allocated in a later version"),
        pytest.param([[_claim("a", 1, "dev-1"), _claim("b", 1, "dev-2")],
                      [_claim("b", 1, "dev-2")]],
                     id="a claim that is gone frees its device"),
        pytest.param([[_claim("a", 1, "dev-1")], [_claim("a", 2)]],
                     id="deallocated"),
        pytest.param([[_claim("", 0, "dev-1"), _claim("", 0, "dev-2")],
                      [_claim("", 0, "dev-3")]],
                     id="claims without a uid are read every time"),
        pytest.param([[_claim("a", 1, "dev-1", share=SHARE), _claim("b", 1, "dev-1", share=SHARE)],
                      [_claim("a", 1, "dev-1", share=SHARE)]],
                     id="shares summed, then one gone"),
    ],
)  # fmt: skip
def test_by_claim_gathers_as_gather_does(rounds: list[list[Json]]) -> None:
    """The same answer as gathering every claim afresh, round after round."""
    by_claim = ByClaim()
    for claims in rounds:
        want = gather((c.get("status") or {}).get("allocation") for c in claims)
        assert by_claim.gather(claims) == want


def _random_claim(rng: random.Random, uid: str, version: int) -> Json:
    devices = rng.sample([f"dev-{i}" for i in range(6)], rng.randint(0, 2))
    if rng.random() < 0.3:
        return _claim(uid, version, *devices, share=SHARE)
    return _claim(uid, version, *devices)


@pytest.mark.parametrize("seed", range(10), ids=lambda s: f"seed {s}")
def test_by_claim_kept_by_difference_gathers_as_gather_does(seed: int) -> None:
    """A random walk of the store: claims kept (the same object), replaced by a new version,
    added and deleted; two claims may hold one device (a race the store can show)."""
    rng = random.Random(seed)
    by_claim = ByClaim()
    claims: dict[str, Json] = {}
    for version in range(1, 200):
        for _ in range(rng.randint(1, 3)):
            uid = f"claim-{rng.randrange(12)}"
            if uid in claims and rng.random() < 0.3:
                del claims[uid]
            else:
                claims[uid] = _random_claim(rng, uid, version)
        listed = list(claims.values())
        rng.shuffle(listed)
        want = gather((c.get("status") or {}).get("allocation") for c in listed)
        assert by_claim.gather(listed) == want
        assert by_claim.gather(listed) == want  # nothing changed: the same answer
