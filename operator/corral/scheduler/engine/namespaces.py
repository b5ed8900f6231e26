"""Tenancy: which namespaces' pods this engine serves (``EngineOptions.namespaces`` and
``namespace_selector``).

A pod is served when its namespace is listed, or when a selector is set and the namespace
currently matches it (the Namespace watch, filtered by the selector, keeps that set); with
neither, every namespace is served.
"""

from __future__ import annotations

from corral.k8s import JSON
from corral.k8s.informer import EventType


class ServedNamespaces:
    def __init__(self, namespaces: frozenset[str] | None, selector: str | None) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self._selected: set[str] = set()

    def serves(self, namespace: str) -> bool:
        if self.namespaces is not None and namespace in self.namespaces:
            return True
        if self.selector is not None:
            return namespace in self._selected
        return self.namespaces is None

    def on_namespace(self, kind: EventType, raw: JSON) -> None:
        """The handler of the Namespace watch filtered by ``selector``."""
        name = raw["metadata"]["name"]
        if kind == "DELETED":
            self._selected.discard(name)
        else:
            self._selected.add(name)
