"""Corral's development harness: what this repository's tests, ``hack/dev-cluster``, the demo
and the benchmarks use beyond :mod:`corral.testing`, and what no user of the wheel needs.

It changes the host (the real node, Debian packages), builds things (the control plane, the
node's binaries, the storage components, the image) and runs test drivers (CSI storage, DRA
devices). It is not part of the wheel or the image: it lives in ``hack/corral_dev`` and is
importable from a checkout's ``.venv`` (``make venv`` puts ``hack/`` on its path) and under
pytest (``pythonpath``). The product never imports it (an import-linter contract).
"""
