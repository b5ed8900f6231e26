"""Hypothesis strategies for hostile input: mutated real documents and crafted YAML texts.

A case starts from a known-good document (the samples and examples of this repository), gets a
few mutations (a value replaced by a hostile one, a known key added where it does not belong, a
key dropped), and is then written out as YAML, sometimes with a text-level attack: an alias
bomb, deep nesting, duplicate keys, a truncation, bytes that are not UTF-8, a YAML tag.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from corral.api import types as api_types
from corral.api.catalog import default_catalog
from corral.scheduler.config import args as args_types
from corral.scheduler.config import types as config_types
from corral.scheduler.config.decode import json_name

ROOT = Path(__file__).resolve().parents[3]

# Values that have broken parsers: range edges, overflows, catastrophic regex inputs, absurd
# quantities, YAML 1.1 surprises, names that collide.
HOSTILE: list[Any] = [
    0, -1, 1, 3, 100, 101, 2**31 - 1, 2**31, -(2**31) - 1, 2**63, 2**64, 10**40, -(10**40), 0.5,
    -0.0, 1e308, True, False, None, "", " ", "0", "-1", "true", "null", "1s", "0s", "0", "-5s",
    "15s", "1m30s", "1.5h", "2562047h", "2562048h", "99999999999999h", "1e3s", "1ns", ".5s", "5.s",
    "111s" * 40 + "!", "1" * 130 + "x", "1.1" * 50, "100m", "64Mi", "1e999999999", "9" * 5000,
    "1E-999999999", "99999999999999999999Ei", "0.000000000000000000001n", "-1Gi", "1.5.5", "NaN",
    "Infinity", "a" * 300, "ünïcödé", "x\ny", "*", "kubernetes.io/hostname",
    "topology.kubernetes.io/zone", "no-such-topology-key", "zone", "team-a", "default-scheduler",
    "kube-system", "minimal", "http://127.0.0.1:1/x", "https://", "MostAllocated",
    "RequestedToCapacityRatio", "DoNotSchedule", "ScheduleAnyway", "System", "List", "In",
    "Exists", "NoSchedule",
]  # fmt: skip


def _dataclasses() -> Iterator[type[Any]]:
    for module in (api_types, config_types, args_types):
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if dataclasses.is_dataclass(obj):
                yield obj


def _vocabulary() -> list[str]:
    keys = {json_name(f) for cls in _dataclasses() for f in dataclasses.fields(cls)}
    keys |= set(default_catalog().registry()) if hasattr(default_catalog(), "registry") else set()
    keys |= {"apiVersion", "kind", "metadata", "spec", "status", "name", "args", "items"}
    return sorted(keys)


KEYS = _vocabulary()

_scalars = st.one_of(
    st.sampled_from(HOSTILE),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=12),
    st.floats(allow_nan=False, allow_infinity=False),
)
_json_scalars = st.one_of(
    st.sampled_from([v for v in HOSTILE if not isinstance(v, float) or abs(v) < 1e300]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=12),
)


def _values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )


VALUES = _values(_scalars)
JSON_VALUES = _values(_json_scalars)


def _containers(node: Any) -> Iterator[Any]:
    if isinstance(node, dict | list):
        yield node
        for child in node.values() if isinstance(node, dict) else node:
            yield from _containers(child)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[Any], values: st.SearchStrategy[Any] = VALUES) -> Any:
    """A deep copy of one of ``seeds`` with up to five mutations."""
    doc = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 5))):
        target = draw(st.sampled_from(list(_containers(doc)) or [doc]))
        if isinstance(target, dict):
            op = draw(st.sampled_from(("set", "add", "delete")))
            keys = sorted(target, key=str)
            if op == "delete" and keys:
                del target[draw(st.sampled_from(keys))]
            elif op == "set" and keys:
                target[draw(st.sampled_from(keys))] = draw(values)
            else:
                target[draw(st.sampled_from(KEYS))] = draw(values)
        elif isinstance(target, list):
            if target and draw(st.booleans()):
                target[draw(st.integers(0, len(target) - 1))] = draw(values)
            else:
                target.append(draw(values))
    return doc


def dump(doc: Any) -> str:
    if isinstance(doc, list) and doc and all(isinstance(d, dict) for d in doc):
        return yaml.safe_dump_all(doc, sort_keys=False)
    return yaml.safe_dump(doc, sort_keys=False)


def alias_bomb(levels: int, width: int) -> str:
    """``levels`` anchors, each a list of ``width`` aliases of the previous: width**levels."""
    lines = ["a0: &a0 [lol]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@st.composite
def attacked(draw: st.DrawFn, text: str) -> str | bytes:
    """``text``, or ``text`` with one text-level attack."""
    attack = draw(
        st.sampled_from(
            (
                "none",
                "none",
                "none",
                "bomb",
                "deep",
                "duplicate",
                "truncate",
                "bytes",
                "tag",
                "anchor",
                "huge",
                "flow",
            )
        )
    )
    if attack == "bomb":
        return alias_bomb(draw(st.integers(2, 12)), draw(st.integers(2, 12))) + text
    if attack == "deep":
        depth = draw(st.sampled_from((50, 500, 5000, 50000)))
        return text + "deep: " + "[" * depth + "]" * depth + "\n"
    if attack == "duplicate":
        first = text.split("\n", 1)[0]
        return text + first + "\n"
    if attack == "truncate":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if attack == "bytes":
        return text.encode() + draw(st.sampled_from((b"\xff\xfe", b"\x00", b"\xc3")))
    if attack == "tag":
        tag = draw(
            st.sampled_from(
                (
                    "!!python/object/apply:os.system ['true']",
                    "!!binary aGVsbG8=",
                    "2001-12-14t21:59:43.10-05:00",
                    "!!set {a, b}",
                    "!custom x",
                    "? [a, b]\n: c",
                    "{a: 1}: b",
                    "0x1F",
                    "0o17",
                    "1_000",
                    "!!float 1e400",
                    ".nan",
                    "!!omap [a: 1]",
                )
            )
        )
        return text + f"tagged: {tag}\n"
    if attack == "anchor":
        return "base: &b {x: 1}\n" + text + "merged:\n  <<: *b\n"
    if attack == "huge":
        return text + "huge: " + "x" * (9 * 2**20) + "\n"
    return "{" * draw(st.integers(1, 3)) + text


def texts(seeds: list[Any]) -> st.SearchStrategy[str | bytes]:
    return mutated(seeds).map(dump).flatmap(attacked)


def load_seeds(*paths: str) -> list[Any]:
    docs: list[Any] = []
    for p in paths:
        docs += [d for d in yaml.safe_load_all((ROOT / p).read_text()) if d is not None]
    return docs
