"""Shared fixtures: the real local control plane and its clients (see corral.testing), and the
test tiers (markers, given by where a test lives; docs/architecture.md#tests):

- ``e2e``: everything under tests/e2e (the real local control plane);
- ``realnode``: tests/e2e/realnode (the machine's one real node);
- ``conformance``: Corral's decisions and configuration handling against the pinned upstream
  kube-scheduler's (:data:`CONFORMANCE`);
- ``slow``: unit tests that take tens of seconds each on 2 cores (:data:`SLOW`);
- ``faults``: the long fault tests of tests/e2e/faults (marked in their files), deselected
  unless pytest runs with ``--faults`` (``make faults``); the fast ones run in every tier that
  takes tests/e2e;
- ``upgrade``: the previous release upgraded on the real node (:data:`UPGRADE`: it builds that
  release's image and takes about 10 minutes, so ``make upgrade`` runs it, not ``make test``);
- ``since_kube``: needs a feature of that Kubernetes minor (marked in their files); against an
  older control plane (``hack/compat``) a strict xfail (:mod:`support.kube_versions`);
- ``browser``: renders the --html pages in headless Chromium (marked in their files; ``make
  browser``, so a fresh CI machine never installs Chromium).

``make unit`` is tests/unit without ``slow``, ``conformance`` and ``browser``; ``make test`` runs
all but the long fault tests, ``upgrade`` and ``browser``.
"""

import pytest

from support.kube_versions import expected_failure

pytest_plugins = ["corral.testing.pytest_plugin", "corral_dev.pytest_plugin", "support.http_peer"]

CONFORMANCE = (
    "/tests/e2e/test_conformance.py",
    "/tests/e2e/test_config_acceptance_upstream.py",
    "/tests/e2e/test_default_profile_upstream.py",
    "/tests/unit/benchharness/test_upstream_decisions.py",
)
# Each builds or installs a wheel, or runs hundreds of fuzz or property cases.
SLOW = (
    "/tests/unit/fuzz/",
    "/tests/unit/packaging/",
    "/tests/unit/render/test_render_hostile.py",
    "/tests/unit/scheduler/plugins/test_out_of_tree_example.py",
)

UPGRADE = ("/tests/e2e/realnode/test_real_lifecycle.py",)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--faults",
        action="store_true",
        help="also run the long fault tests (marked faults; `make faults`)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.path)
        if "/tests/e2e/" in path:
            item.add_marker(pytest.mark.e2e)
        if "/tests/e2e/realnode/" in path:
            item.add_marker(pytest.mark.realnode)
        if any(c in path for c in CONFORMANCE):
            item.add_marker(pytest.mark.conformance)
        if any(s in path for s in SLOW):
            item.add_marker(pytest.mark.slow)
        if any(u in path for u in UPGRADE):
            item.add_marker(pytest.mark.upgrade)
        # A feature newer than the control plane (hack/compat): expected to fail there.
        if (xfail := expected_failure(item)) is not None:
            item.add_marker(xfail)
    # The long fault tests run with --faults only: `make test` keeps within CI's budget.
    if not config.getoption("--faults"):
        long = [item for item in items if item.get_closest_marker("faults")]
        if long:
            config.hook.pytest_deselected(items=long)
            items[:] = [item for item in items if not item.get_closest_marker("faults")]
