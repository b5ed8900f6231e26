"""Scheduler backend: the node/pod cache with its columnar snapshot, and the scheduling queue."""
