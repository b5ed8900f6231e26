"""Plugin registry: name → factory, names unique.

What fills it (in-tree plugins and the ``corral.plugins`` entry points) is declared in
:mod:`corral.scheduler.config.declarations`; :mod:`corral.scheduler.plugins.registry` builds it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from corral.scheduler.framework.interface import PluginFactory


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
