"""Node order by zone, as upstream's ``nodeTree``: zones in first-seen order, nodes in insertion
order within a zone, listed round-robin across zones (first node of each zone, then the second,
...). This is the order the cycle walks when it samples nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

ZONE: Final = "topology.kubernetes.io/zone"
REGION: Final = "topology.kubernetes.io/region"
LEGACY_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LEGACY_REGION: Final = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: Mapping[str, str]) -> str:
    """Upstream ``utilnode.GetZoneKey``."""
    zone = labels.get(ZONE, labels.get(LEGACY_ZONE, ""))
    region = labels.get(REGION, labels.get(LEGACY_REGION, ""))
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    def __init__(self) -> None:
        self._zones: dict[str, list[str]] = {}  # dicts keep first-seen order
        self._zone_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._zone_of)

    def add(self, name: str, labels: Mapping[str, str]) -> bool:
        """Add or update a node; whether the listing order changed."""
        zone = zone_key(labels)
        if self._zone_of.get(name) == zone:
            return False
        if name in self._zone_of:
            self.remove(name)
        self._zones.setdefault(zone, []).append(name)
        self._zone_of[name] = zone
        return True

    def remove(self, name: str) -> None:
        zone = self._zone_of.pop(name, None)
        if zone is None:
            return
        members = self._zones[zone]
        members.remove(name)
        if not members:
            del self._zones[zone]

    def list(self) -> list[str]:
        zones = list(self._zones.values())
        out: list[str] = []
        depth = 0
        while len(out) < len(self._zone_of):
            for members in zones:
                if depth < len(members):
                    out.append(members[depth])
            depth += 1
        return out
