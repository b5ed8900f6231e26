"""Plugin registry: name → factory. In-tree plugins plus out-of-tree ones from entry points.

Out-of-tree contract: a distribution declares, in the entry-point group ``corral.plugins``,
``<PluginName> = package.module:new`` where ``new(args, handle)`` returns the plugin. The name
is what profiles use; it may not shadow an in-tree plugin.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import metadata
from typing import Final

from corral.scheduler.framework.interface import PluginFactory

ENTRY_POINT_GROUP: Final = "corral.plugins"


class RegistryError(Exception):
    pass


class Registry(Mapping[str, PluginFactory]):
    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = {}
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self._factories:
            raise RegistryError(f"a plugin named {name} already exists")
        self._factories[name] = factory

    def merge(self, other: Mapping[str, PluginFactory]) -> Registry:
        merged = Registry(self._factories)
        for name, factory in other.items():
            merged.register(name, factory)
        return merged

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)


def load_out_of_tree(group: str = ENTRY_POINT_GROUP) -> Registry:
    """Factories of installed distributions' ``corral.plugins`` entry points."""
    registry = Registry()
    for entry in metadata.entry_points(group=group):
        try:
            factory = entry.load()
        except Exception as exc:  # any import failure is a configuration problem
            raise RegistryError(f"loading plugin {entry.name} ({entry.value}): {exc}") from exc
        if not callable(factory):
            raise RegistryError(f"plugin {entry.name} ({entry.value}) is not a factory")
        registry.register(entry.name, factory)
    return registry
