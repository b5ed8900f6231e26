"""Corral's memo of each node's last allocation search (not in upstream's allocator).

Contract: a search on a node is a function of the node's name and of :class:`SearchInputs`: the
DeviceClasses, the pools reaching the node (slices with the DeviceTaintRules' taints), the specs
of the claims searched for, and which pool devices other claims hold (dedicated, or shared and
how much). Nothing else: no clock (a search past its deadline raises) and no randomness (share
IDs are drawn when an allocation is built, per :class:`~.allocator.Found`). An entry answers only
while all of these are its search's; a search that raised leaves none. The claim objects may
differ: the first pod of each claim asks what the one before it asked, and of all nodes, one
took that claim's devices in between.

The allocator (:meth:`~.allocator.Allocator.search`) builds the inputs and keeps its outcome
here; the plugin keeps one memo across cycles. Used by one thread (the scheduling thread
searches).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Generic, NamedTuple, TypeVar

from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.plugins.dynamic_resources.pools import DeviceID, Pool, SliceIndex

# A pool's use by other claims: its dedicated devices, and each shared one with what it holds.
PoolUse = tuple[frozenset[DeviceID], tuple[tuple[DeviceID, tuple[tuple[str, Fraction], ...]], ...]]
_K = TypeVar("_K")  # what a search kept (the allocator's)


class SearchInputs(NamedTuple):
    """What a node's search depends on besides the node's name: the classes and the node's
    pools by identity (each rebuilt when its kind changes; the pools are the node's, with its
    labels where slices select by them), the claims' specs and each pool's use by value. A
    named tuple: one is made per node searched."""

    classes: Mapping[str, RawObject]
    pools: list[Pool]
    specs: tuple[str, ...]
    use: tuple[PoolUse, ...]

    def same(self, other: SearchInputs) -> bool:
        return (
            self.classes is other.classes
            and self.pools is other.pools
            and self.specs == other.specs
            and self.use == other.use
        )


class Miss:
    """:meth:`Memo.lookup` found no entry that answers."""


class Memo(Generic[_K]):
    """Each node's last search: its inputs and what it kept (``None``: the claims did not fit)."""

    def __init__(self) -> None:
        self._index: SliceIndex | None = None
        self._entries: dict[str, tuple[SearchInputs, _K | None]] = {}
        self.hits = 0
        self.misses = 0

    def lookup(self, index: SliceIndex, node_name: str, inputs: SearchInputs) -> _K | Miss | None:
        if index is not self._index:  # the entries hold the old index's pools: let them go
            self._entries.clear()
            self._index = index
        entry = self._entries.get(node_name)
        if entry is None or not entry[0].same(inputs):
            self.misses += 1
            return Miss()
        self.hits += 1
        return entry[1]

    def record(self, node_name: str, inputs: SearchInputs, kept: _K | None) -> None:
        self._entries[node_name] = (inputs, kept)
