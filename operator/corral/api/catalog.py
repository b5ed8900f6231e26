"""The plugin catalog: every plugin a Corral engine can run, what it extends, what its args
look like and what it needs to read from the API server.

Contract: a view over the plugin declarations of :mod:`corral.scheduler.config.declarations`
(the in-tree ones and the installed ``corral.plugins`` entry points, loaded by its one loader
with its one error policy: a broken entry point, or one reusing a known name, is left out and
reported in :attr:`Catalog.problems`, never raised).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata

from corral.scheduler.config.declarations import (
    ENTRY_POINT_GROUP,
    IN_TREE,
    PluginDeclaration,
    Resource,
    installed,
    load_entry_points,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Catalog",
    "Resource",
    "build_catalog",
    "default_catalog",
]


@dataclass(frozen=True, slots=True)
class Catalog:
    plugins: Mapping[str, PluginDeclaration]
    problems: tuple[str, ...] = field(default=())

    def registry(self) -> dict[str, frozenset[str]]:
        """Plugin name -> extension points, as :mod:`corral.scheduler.config` expects."""
        return {name: info.extension_points for name, info in self.plugins.items()}

    def __contains__(self, name: object) -> bool:
        return name in self.plugins

    def __getitem__(self, name: str) -> PluginDeclaration:
        return self.plugins[name]


def _catalog(plugins: Iterable[PluginDeclaration], problems: Iterable[str]) -> Catalog:
    ordered = sorted(plugins, key=lambda p: p.name)
    return Catalog(plugins={p.name: p for p in ordered}, problems=tuple(problems))


def build_catalog(entry_points: Iterable[metadata.EntryPoint] | None = None) -> Catalog:
    found, problems = load_entry_points(entry_points)
    return _catalog((*IN_TREE, *found), problems)


@functools.cache
def default_catalog() -> Catalog:
    """The catalog of this installation (built-ins plus installed entry points), built once."""
    return _catalog(*installed())
