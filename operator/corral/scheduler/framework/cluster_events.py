"""Cluster events that can make an unschedulable pod schedulable (upstream ``ClusterEvent``).

Contract: a plugin that can reject pods declares, through ``events_to_register()``, which events
may change its verdict; the queue moves a pod rejected by that plugin back when one occurs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final


class ActionType(enum.IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATION
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
    )
    ALL = ADD | DELETE | UPDATE


NODE: Final = "Node"
POD: Final = "Pod"
# Pods that are not yet bound (upstream ``UnscheduledPod``): updates of pending pods.
UNSCHEDULED_POD: Final = "UnscheduledPod"
# The resource of the queue's own "unschedulable timeout" flush and other catch-all moves.
WILDCARD: Final = "*"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action: ActionType
    label: str = ""

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this (occurring) event is covered by ``registered``."""
        if WILDCARD in (self.resource, registered.resource):
            return self.resource == WILDCARD or bool(self.action & registered.action)
        return self.resource == registered.resource and bool(self.action & registered.action)


UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
NODE_ADD: Final = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
ASSIGNED_POD_DELETE: Final = ClusterEvent(POD, ActionType.DELETE, "AssignedPodDelete")
