"""What users of Checkov, kube-linter, the Kyverno CLI and gator type first (issue 40).

Every test runs the installed `stockade` script in a child process (the real entry point: lazy
command loading, help tidying, exit codes), on files written to a temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.workloads import BAD_POD_YAML as BAD

STOCKADE = Path(sys.executable).parent / "stockade"


def run(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STOCKADE), *args],
        env={**os.environ, "COLUMNS": "160", **(env or {})},
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    return f


# ---- 1. --version and -h ------------------------------------------------------------------------


def test_version_option_prints_the_package_version() -> None:
    for option in ("--version", "-V"):
        done = run(option)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"stockade {version('stockade')}\n"
    assert run("version").stdout == f"{version('stockade')}\n"


@pytest.mark.parametrize(
    "command",
    [[], ["scan"], ["audit"], ["policy"], ["policy", "list"], ["rbac", "explain"], ["webhook", "serve"]],
)
def test_dash_h_is_help_on_every_command(command: list[str]) -> None:
    short, long = run(*command, "-h"), run(*command, "--help")
    assert short.returncode == 0, short.stderr
    assert short.stdout == long.stdout
    assert short.stdout.startswith(f"Usage: stockade {' '.join(command)}".rstrip())
    assert "-h, --help" in short.stdout


# ---- 2. shell completion ------------------------------------------------------------------------


def test_completion_script_and_completions_of_a_commands_options() -> None:
    # the shell is named, not detected from the parent process (`sh` under make and CI)
    shown = run("completion", "bash")
    assert shown.returncode == 0, shown.stderr
    assert "_STOCKADE_COMPLETE=complete_bash" in shown.stdout
    assert "compdef" in run("completion", "zsh").stdout
    wrong = run("completion", "tcsh")
    assert wrong.returncode == 2 and "'tcsh' is not one of" in wrong.stderr
    # what the installed script asks when Tab is pressed after `stockade scan --fail`
    asked = {"_STOCKADE_COMPLETE": "complete_bash", "COMP_WORDS": "stockade scan --fail", "COMP_CWORD": "2"}
    done = run(env=asked)
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) == {"--fail-on", "--fail-on-severity"}
    words = {"_STOCKADE_COMPLETE": "complete_bash", "COMP_WORDS": "stockade pol", "COMP_CWORD": "1"}
    assert run(env=words).stdout.split() == ["policy"]


# ---- 3. rule selection on the command line ----------------------------------------------------------


def findings(done: subprocess.CompletedProcess[str]) -> set[str]:
    return {f["rule"]["id"] for f in json.loads(done.stdout)["findings"]}


def test_rule_and_skip_rule_select_the_rules_evaluated(bad: Path) -> None:
    everything = findings(run("scan", str(bad), "-f", "json"))
    assert {"STK-POD-003", "STK-IMG-002"} <= everything
    only = run("scan", str(bad), "-f", "json", "--rule", "STK-POD-*", "--rule", "stk-img-002")
    assert only.returncode == 1, only.stderr
    assert findings(only) == {r for r in everything if r.startswith("STK-POD-")} | {"STK-IMG-002"}
    skipped = run("scan", str(bad), "-f", "json", "--skip-rule", "STK-POD-*", "--skip-rule", "STK-IMG-002")
    assert findings(skipped) == {r for r in everything if not r.startswith("STK-POD-")} - {"STK-IMG-002"}
    # both: the --rule set minus the --skip-rule set; an empty set is a usage error
    both = run("scan", str(bad), "-f", "json", "--rule", "STK-POD-003", "--skip-rule", "STK-POD-00*")
    assert both.returncode == 2 and "leave no rule to run" in both.stderr
    narrow = run("scan", str(bad), "-f", "json", "--rule", "STK-POD-00*", "--skip-rule", "STK-POD-003")
    assert narrow.returncode == 0 and findings(narrow) == set(), narrow.stdout


def test_rule_selection_parallel_workers_and_config_agree(bad: Path, tmp_path: Path) -> None:
    """Worker processes get the selection through the config, like stockade.yaml `rules:`; a rule the
    config turns off stays off."""
    for i in range(4):
        (tmp_path / f"copy{i}.yaml").write_text(BAD.replace("name: bad", f"name: bad{i}"))
    cfg = tmp_path / "stockade.yaml"
    cfg.write_text("images: {allowed_registries: [ghcr.io/]}\nrules:\n  STK-IMG-002: {enabled: false}\n")
    done = run("scan", str(tmp_path), "-f", "json", "--workers", "2", "-c", str(cfg), "--rule", "STK-IMG-*")
    assert done.returncode == 1, done.stderr
    assert findings(done) == {"STK-IMG-001"}
    assert len(json.loads(done.stdout)["findings"]) == 5


def test_unknown_rule_pattern_is_exit_2_with_suggestions(bad: Path) -> None:
    done = run("scan", str(bad), "--rule", "STK-POD-03")
    assert done.returncode == 2
    assert done.stderr.startswith("stockade: error: --rule: 'STK-POD-03' names no rule of the library")
    assert "did you mean" in done.stderr and "STK-POD-003" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    done = run("scan", str(bad), "--skip-rule", "STK-NOPE-*")
    assert done.returncode == 2 and "--skip-rule: 'STK-NOPE-*' names no rule" in done.stderr


# ---- 4. --fail-on-severity ------------------------------------------------------------------------


def test_severity_names_are_the_models() -> None:
    from stockade.cli.scan import FailSeverity
    from stockade.policies.model import Severity

    assert [s.value for s in FailSeverity] == [s.label for s in sorted(Severity)]


def test_fail_on_severity_with_fail_on(tmp_path: Path) -> None:
    """STK-POD-202 is a medium rule that warns, STK-RES-002 a low one that denies (bundled METADATA)."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(BAD)
    listed = {r["id"]: r for r in json.loads(run("policy", "list", "-f", "json").stdout)}
    assert (listed["STK-POD-202"]["severity"], listed["STK-POD-202"]["action"]) == ("medium", "warn")
    assert (listed["STK-RES-002"]["severity"], listed["STK-RES-002"]["action"]) == ("low", "deny")
    low_deny = ["scan", str(pod), "-f", "json", "--rule", "STK-RES-002"]
    medium_warn = ["scan", str(pod), "-f", "json", "--rule", "STK-POD-202"]
    assert run(*low_deny).returncode == 1
    assert run(*low_deny, "--fail-on-severity", "low").returncode == 1
    assert run(*low_deny, "--fail-on-severity", "medium").returncode == 0
    assert run(*medium_warn).returncode == 0  # a warning does not fail under --fail-on deny
    assert run(*medium_warn, "--fail-on", "warn", "--fail-on-severity", "medium").returncode == 1
    assert run(*medium_warn, "--fail-on", "warn", "--fail-on-severity", "high").returncode == 0
    assert run(*medium_warn, "--fail-on", "never", "--fail-on-severity", "info").returncode == 0
    # a severity the config gives the rule counts, not the METADATA's
    cfg = tmp_path / "stockade.yaml"
    cfg.write_text("rules:\n  STK-RES-002: {severity: critical}\n")
    assert run(*low_deny, "-c", str(cfg), "--fail-on-severity", "critical").returncode == 1
    wrong = run(*low_deny, "--fail-on-severity", "severe")
    assert wrong.returncode == 2 and "severe" in wrong.stderr


# ---- 7. pre-commit: files named one by one ------------------------------------------------------

CI_YML = "name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{run: make test}]\n"


def test_named_files_without_kubernetes_objects_pass_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "ci.yml").write_text(CI_YML)
    (tmp_path / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    done = run("scan", "--fail-on", "deny", "ci.yml", "package.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (note,) = done.stderr.strip().splitlines()
    assert note.startswith("stockade: note: no Kubernetes object in the ") and "nothing to check" in note
    # a kustomization.yaml named alone stands for what it builds (rendered with its directory): a
    # commit that changes only it is judged on the objects it makes, and one that cannot build fails
    kustomize = tmp_path / "k"
    kustomize.mkdir()
    (kustomize / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (kustomize / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
    if shutil.which("kubectl") is not None:
        built = run("scan", "--fail-on", "deny", "kustomization.yaml", cwd=kustomize)
        assert built.returncode == 0, built.stdout + built.stderr
        (kustomize / "kustomization.yaml").write_text("resources: [missing.yaml]\n")
        broken = run("scan", "--fail-on", "deny", "kustomization.yaml", cwd=kustomize)
        assert broken.returncode == 2, broken.stdout + broken.stderr
    # a directory, stdin: still an error (a mistyped path in CI must not pass)
    assert run("scan", str(tmp_path)).returncode == 2
    assert run("scan", "-", stdin=CI_YML).returncode == 2


def test_named_broken_manifests_still_fail(tmp_path: Path, bad: Path) -> None:
    (tmp_path / "ci.yml").write_text(CI_YML)
    (tmp_path / "invalid.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n")
    (tmp_path / "refused.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: nope}\n"
    )
    done = run("scan", "ci.yml", "invalid.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "invalid.yaml:4: invalid YAML" in done.stdout
    done = run("scan", "ci.yml", "refused.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "refused.yaml:4: Pod/x: spec.containers" in done.stdout
    assert run("scan", "ci.yml", "missing.yaml", cwd=tmp_path).returncode == 2
    # with a manifest among them, the verdict is the manifest's
    assert run("scan", "--fail-on", "deny", "ci.yml", str(bad), cwd=tmp_path).returncode == 1


# ---- 5. framework and area names, rule ids --------------------------------------------------------


def listed(*args: str) -> list[dict[str, object]]:
    done = run("policy", "list", "-f", "json", *args)
    assert done.returncode == 0, done.stderr
    rules: list[dict[str, object]] = json.loads(done.stdout)
    return rules


def test_policy_list_frameworks_and_areas_in_any_spelling() -> None:
    every = listed()
    nsa = [r["id"] for r in every if "NSA-CISA" in r["frameworks"]]  # type: ignore[operator]
    assert nsa
    for spelling in ("nsa-cisa", "NSA-CISA", "nsa_cisa", "NSA CISA"):
        assert [r["id"] for r in listed("--framework", spelling)] == nsa, spelling
    # the frameworks of `audit --framework`: CIS controls map from the CIS-<id> tags
    cis = [r["id"] for r in every if any(str(t).startswith("CIS-") for t in r["frameworks"])]  # type: ignore[attr-defined]
    assert cis and [r["id"] for r in listed("--framework", "CIS-K8s")] == cis
    pods = [r["id"] for r in every if r["area"] == "pod"]
    assert pods
    for spelling in ("pod", "pods", "Pods", "POD"):
        assert [r["id"] for r in listed("--area", spelling)] == pods, spelling
    both = listed("--area", "rbac", "--framework", "cis-aks")
    assert both and all(r["area"] == "rbac" for r in both)


def test_unknown_framework_area_or_rule_id_suggests_the_closest() -> None:
    done = run("policy", "list", "--framework", "nsa")
    assert done.returncode == 2
    assert done.stderr.startswith("stockade: error: unknown framework 'nsa' (did you mean nsa-cisa?")
    done = run("policy", "list", "--area", "pdo")
    assert done.returncode == 2 and "unknown area 'pdo' (did you mean pod?)" in done.stderr
    assert "choose from " in done.stderr and "rbac" in done.stderr
    done = run("policy", "explain", "STK-POD-03")
    assert done.returncode == 2 and "did you mean" in done.stderr and "STK-POD-003" in done.stderr
    assert run("policy", "explain", "stk-pod-003").stdout.startswith("STK-POD-003 ")
    for d in (run("policy", "list", "--framework", "nsa"), run("policy", "explain", "STK-POD-03")):
        assert len(d.stderr.strip().splitlines()) == 1 and "Traceback" not in d.stderr


# ---- 6. no word split across lines ------------------------------------------------------------------

RBAC_LONG = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: controller-manager-replication-reader}
rules:
- apiGroups: [""]
  resources: [replicationcontrollers, persistentvolumeclaims, secrets]
  verbs: [get, list, watch]
- apiGroups: ["apps"]
  resources: [deployments, statefulsets, daemonsets]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: replication-reader-binding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: controller-manager-replication-reader}
subjects:
- {kind: ServiceAccount, name: replication-controller-sync, namespace: kube-operations}
- {kind: User, name: ann}
"""

BOX = str.maketrans(dict.fromkeys("│┃┏┓┗┛┡┩└┘┌┐─━┼╇╈┳┻┬┴├┤╭╮╰╯", " "))


def words(text: str) -> set[str]:
    """The words of an output, without table rules and the labels of stacked rows (`Binding:`)."""
    return {
        w
        for w in text.translate(BOX).split()
        if not (w.endswith(":") and w[:-1].isalpha() and w[0].isupper())
    }


@pytest.mark.parametrize(
    "args",
    [
        ["rbac", "explain", "ServiceAccount:kube-operations/replication-controller-sync"],
        ["rbac", "explain", "User:ann"],
        ["rbac", "escalations"],
        ["rbac", "who-can", "get", "replicationcontrollers"],
    ],
)
def test_rbac_output_never_splits_a_word(tmp_path: Path, args: list[str]) -> None:
    """At 60 columns (and others around the widths where the table form gives way to stacked rows)
    every word of the output is a word of the same output at a width nothing needs wrapping at."""
    manifest = tmp_path / "rbac.yaml"
    manifest.write_text(RBAC_LONG)
    wide = run(*args, str(manifest), env={"COLUMNS": "2000"})
    assert wide.returncode == 0, wide.stderr
    for columns in (60, 40, 100, 120):
        narrow = run(*args, str(manifest), env={"COLUMNS": str(columns)})
        assert narrow.returncode == 0, narrow.stderr
        assert words(narrow.stdout) <= words(wide.stdout), (
            columns,
            words(narrow.stdout) - words(wide.stdout),
        )
        assert "…" not in narrow.stdout
        for line in narrow.stdout.splitlines():  # only a word longer than the width passes it
            assert len(line) <= columns or len(line.split()) == 1, (columns, line)


def test_scan_and_policy_list_never_split_a_word(bad: Path) -> None:
    for args in (["scan", str(bad)], ["policy", "list"]):
        wide = run(*args, env={"COLUMNS": "2000"})
        for columns in (60, 80, 120):
            narrow = run(*args, env={"COLUMNS": str(columns)})
            assert narrow.returncode == wide.returncode
            assert words(narrow.stdout) <= words(wide.stdout), (
                args,
                columns,
                words(narrow.stdout) - words(wide.stdout),
            )
