"""Corral: declarative custom Kubernetes schedulers (a kopf operator and an embedded engine)."""

__version__ = "0.1.0"
# The kube-scheduler whose decisions the engine reproduces (the control plane the tests pin in
# corral/testing/versions.env; a unit test keeps the two equal).
KUBERNETES_VERSION = "v1.37.2"
