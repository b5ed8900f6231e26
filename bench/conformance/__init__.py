"""Conformance: does a candidate scheduler decide like upstream kube-scheduler?

See ``harness`` (lockstep method), ``compare`` (tie-aware verdicts), ``generate`` (scenarios)
and docs/benchmarks/conformance.md.
"""
