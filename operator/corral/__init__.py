"""Corral: declarative custom Kubernetes schedulers (a kopf operator and an embedded engine)."""

__version__ = "0.1.0"
