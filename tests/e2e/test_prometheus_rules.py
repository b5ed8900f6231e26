"""The alert rules shipped in config/prometheus pass Prometheus' own tools: `promtool check
rules` (syntax, PromQL, templates) and `promtool test rules` (tests/data/prometheus: each alert
fires on its series with its labels and annotations, after its `for`, and not on healthy ones).
A rule broken on purpose fails the same test, so the test can fail."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from corral_dev.builds import ensure_prometheus

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "config" / "prometheus" / "rules.yaml"
TESTS = ROOT / "tests" / "data" / "prometheus" / "rules_test.yaml"


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    tool = ensure_prometheus() / "promtool"
    return subprocess.run(
        [str(tool), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def rule_groups(tmp_path: Path, *, break_rule: str | None = None) -> Path:
    """The PrometheusRule's groups as a plain rules file next to a copy of the rule tests."""
    groups = yaml.safe_load(RULES.read_text())["spec"]["groups"]
    for group in groups:
        for rule in group["rules"]:
            if rule["alert"] == break_rule:
                rule["expr"] = rule["expr"].replace("corral", "corrall", 1)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    shutil.copy(TESTS, tmp_path / "rules_test.yaml")
    return tmp_path


def test_promtool_checks_the_rules(tmp_path: Path) -> None:
    result = promtool("check", "rules", "rules.yaml", cwd=rule_groups(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 10 rules found" in result.stdout


@pytest.mark.parametrize(
    "broken",
    [pytest.param(None, id="as shipped: passes"),
     pytest.param("CorralProfileStalled", id="a broken rule: fails")],
)  # fmt: skip
def test_promtool_tests_the_rules(tmp_path: Path, broken: str | None) -> None:
    result = promtool(
        "test", "rules", "rules_test.yaml", cwd=rule_groups(tmp_path, break_rule=broken)
    )
    if broken is None:
        assert result.returncode == 0, result.stdout + result.stderr
    else:
        assert result.returncode != 0
        assert f"alertname: {broken}" in result.stdout + result.stderr
