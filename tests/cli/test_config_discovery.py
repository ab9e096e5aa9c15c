"""Which stockade.yaml a command uses: `--config`, else the nearest `stockade.yaml`/`.stockade.yaml` from
the working directory up to the repository root, announced on stderr; `--no-config` uses none.

Through the installed `stockade` command in a subprocess (stdout and stderr apart, as a user sees them)
in a `git init` repository under the test's directory; a few checks use typer's CliRunner on
`stockade.cli.main.app`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stockade.cli.main import app

STOCKADE = str(Path(sys.executable).parent / "stockade")
#: A pod with several findings under the defaults (registry not allowed, no securityContext, ...)
POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: docker.io/library/nginx:1.27}]
"""


def _config(disabled: str) -> str:
    """A config that disables one rule (how a test sees which file was used)."""
    return f"apiVersion: stockade.io/v1alpha1\nkind: Config\nrules:\n  {disabled}: {{enabled: false}}\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """tmp/outer/repo: a git repository with a subdirectory holding the pod."""
    root = tmp_path / "outer" / "repo"
    (root / "deploy" / "apps").mkdir(parents=True)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    else:  # pragma: no cover - a `.git` directory is what is looked for
        (root / ".git").mkdir()
    (root / "deploy" / "apps" / "pod.yaml").write_text(POD)
    return root


def _scan(cwd: Path, *args: str) -> tuple[int, set[str], str]:
    """Exit code, the rule ids of the findings (JSON on stdout), stderr."""
    done = subprocess.run(
        [STOCKADE, "scan", "pod.yaml", "-f", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode not in (0, 1):
        return done.returncode, set(), done.stderr
    report = json.loads(done.stdout)  # stdout is the report alone
    return done.returncode, _rules(report), done.stderr


def _rules(report: Any) -> set[str]:
    return {str(f["rule"]["id"]) for f in report["findings"]}


def _default_rules(repo: Path) -> set[str]:
    code, rules, err = _scan(repo / "deploy" / "apps", "--no-config")
    assert code == 1 and rules, err
    return rules


def test_a_config_at_the_repository_root_is_used_from_a_subdirectory(repo: Path) -> None:
    defaults = _default_rules(repo)
    rule = sorted(defaults)[0]
    (repo / "stockade.yaml").write_text(_config(rule))
    _, rules, err = _scan(repo / "deploy" / "apps")
    assert rule not in rules and rules == defaults - {rule}, err
    assert err.splitlines()[0] == "stockade: config: ../../stockade.yaml"


def test_the_dot_name_in_the_working_directory(repo: Path) -> None:
    rule = sorted(_default_rules(repo))[0]
    (repo / "deploy" / "apps" / ".stockade.yaml").write_text(_config(rule))
    (repo / "stockade.yaml").write_text(_config("STK-POD-001"))  # farther up: not reached
    _, rules, err = _scan(repo / "deploy" / "apps")
    assert rule not in rules
    assert "stockade: config: ./.stockade.yaml" in err.splitlines()


def test_a_config_above_the_repository_root_is_not_used(repo: Path) -> None:
    defaults = _default_rules(repo)
    (repo.parent / "stockade.yaml").write_text(_config(sorted(defaults)[0]))  # tmp/outer: outside
    _, rules, err = _scan(repo / "deploy" / "apps")
    assert rules == defaults
    assert "stockade: config" not in err


def test_no_config_uses_the_built_in_defaults(repo: Path) -> None:
    defaults = _default_rules(repo)
    (repo / "stockade.yaml").write_text(_config(sorted(defaults)[0]))
    _, rules, err = _scan(repo / "deploy" / "apps", "--no-config")
    assert rules == defaults
    assert "stockade: config" not in err


def test_config_wins_over_the_one_found(repo: Path) -> None:
    defaults = sorted(_default_rules(repo))
    first, second = defaults[0], defaults[1]
    (repo / "stockade.yaml").write_text(_config(first))
    chosen = repo / "deploy" / "chosen.yaml"
    chosen.write_text(_config(second))
    _, rules, err = _scan(repo / "deploy" / "apps", "--config", str(chosen))
    assert first in rules and second not in rules
    assert "stockade: config" not in err  # the user named it


def test_both_names_in_one_directory_is_an_error_naming_both(repo: Path) -> None:
    (repo / "stockade.yaml").write_text(_config("STK-POD-001"))
    (repo / ".stockade.yaml").write_text(_config("STK-POD-002"))
    code, _, err = _scan(repo / "deploy" / "apps")
    assert code == 2
    assert err.strip() == (
        f"stockade: error: both {repo / 'stockade.yaml'} and {repo / '.stockade.yaml'} exist:"
        " remove one, or give --config FILE"
    )


def test_config_and_no_config_together_is_an_error(repo: Path) -> None:
    code, _, err = _scan(repo / "deploy" / "apps", "--no-config", "--config", "x.yaml")
    assert code == 2 and err.strip() == "stockade: error: give --config FILE or --no-config, not both"


def test_every_command_that_takes_config_takes_no_config() -> None:
    runner = CliRunner()
    for command in (
        ["scan"],
        ["audit"],
        ["policy", "bundle"],
        ["webhook", "serve"],
        ["webhook", "manifests"],
        ["webhook", "install"],
        ["webhook", "register"],
    ):
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0 and "--no-config" in result.output, command


def test_webhook_manifests_ships_the_config_it_found(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`stockade init` then `webhook manifests`: the ConfigMap holds that file, not the starter one."""
    monkeypatch.chdir(repo)
    runner = CliRunner()
    assert runner.invoke(app, ["init"]).exit_code == 0
    text = (repo / "stockade.yaml").read_text() + "# this cluster's own\n"
    (repo / "stockade.yaml").write_text(text)
    monkeypatch.chdir(repo / "deploy")
    result = runner.invoke(app, ["webhook", "manifests", "--cert-manager", "-o", "out.yaml"])
    assert result.exit_code == 0, result.output
    assert "stockade: config: ../stockade.yaml" in result.output
    assert "# this cluster's own" in (repo / "deploy" / "out.yaml").read_text()
    result = runner.invoke(app, ["webhook", "manifests", "--cert-manager", "--no-config", "-o", "out.yaml"])
    assert result.exit_code == 0 and "# this cluster's own" not in (repo / "deploy" / "out.yaml").read_text()
