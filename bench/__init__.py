"""Side-by-side benchmarks of Corral's engine against upstream kube-scheduler, and the
conformance harness comparing their decisions (see docs/benchmarks.md).

Run from the repository root: ``python -m bench run``, ``python -m bench report``,
``python -m bench.conformance``.
"""
