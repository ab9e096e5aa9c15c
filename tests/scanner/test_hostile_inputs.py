"""Hostile and unusual input: read as Kubernetes reads it, and never a traceback, a hang or a silent pass.

The files of ``tests/data/hostile/`` are the regression corpus of issue 17 (YAML 1.1 booleans and
octals, merge lists, duplicate keys, numeric keys, an impossible date, ``!!set``/``!!binary``, a
``kind: List`` with a broken item, an alias bomb, kube-prometheus' bare ``=``, mkdocs' Python tags,
JSONC, terraform and Bicep); ``tests/data/hostile-repo/`` is a small repository holding a Helm chart
(rendered by the real ``helm``, skipped if it is not installed), docs and a devcontainer. Every
command runs in a subprocess (``python -m stockade.cli.main``), so a traceback or a hang would show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "data" / "hostile"
REPO = ROOT / "tests" / "data" / "hostile-repo"


def stockade(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh process, with a hang guard (a test timeout, not a timing assertion)."""
    return subprocess.run(
        [sys.executable, "-c", "from stockade.cli.main import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


def scan_json(*paths: str, extra: tuple[str, ...] = ()) -> tuple[int, dict[str, Any], str]:
    run = stockade("scan", *paths, "-f", "json", *extra)
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout, run.stderr[-2000:]
    return run.returncode, json.loads(run.stdout), run.stderr


def rules_of(doc: dict[str, Any], name: str) -> set[str]:
    """Every rule that fails the object, those folded into another finding included."""
    found = [f for f in doc["findings"] if f["resource"]["name"] == name]
    return {f["rule"]["id"] for f in found} | {
        m["rule"] for f in found for m in f["details"].get("folded", ())
    }


def test_yaml_1_1_scalars_are_violations_as_kubernetes_reads_them() -> None:
    code, doc, _ = scan_json(str(HOSTILE / "yaml11-booleans.yaml"), str(HOSTILE / "merge-list.yaml"))
    assert code == 1
    assert {"STK-POD-002", "STK-POD-003", "STK-POD-103"} <= rules_of(
        doc, "yaml11"
    )  # hostNetwork, privileged, root
    assert "STK-POD-003" in rules_of(doc, "merged")
    (privileged,) = [
        f for f in doc["findings"] if f["rule"]["id"] == "STK-POD-003" and f["resource"]["name"] == "merged"
    ]
    assert privileged["location"]["line"] == 12


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("duplicate-key.yaml", 12, "duplicate key 'privileged' (first at line 11)"),
        ("alias-bomb.yaml", 7, "excessive aliasing"),
        ("list-bad-item.yaml", 6, "metadata: expected an object, got a string"),
        ("main.tf", None, "unsupported input: terraform HCL"),
        ("main.bicep", None, "unsupported input: Bicep"),
    ],
)
def test_what_kubernetes_refuses_is_one_line_with_its_place(
    name: str, line: int | None, message: str
) -> None:
    code, doc, _ = scan_json(str(HOSTILE / name))
    assert code == 2
    assert any(message in e["message"] and e["line"] == line for e in doc["errors"]), doc["errors"]
    assert all(e["file"].endswith(name) for e in doc["errors"])


def test_files_that_are_not_manifests_are_skipped_and_counted() -> None:
    names = ["values.yaml", "mkdocs.yml", "devcontainer.json", "numeric-keys.yaml", "crd-with-equals.yaml"]
    code, doc, _ = scan_json(*(str(HOSTILE / n) for n in names))
    assert code == 0 and doc["errors"] == []
    skipped = {Path(s["file"]).name for s in doc["skipped_files"]}
    assert skipped == {"values.yaml", "mkdocs.yml", "devcontainer.json"}
    assert doc["summary"]["skipped"] == 3


def test_one_bad_file_never_stops_the_others(tmp_path: Path) -> None:
    for f in HOSTILE.iterdir():
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "deep.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: " + "[" * 300 + "]" * 300 + "\n"
    )
    code, doc, _ = scan_json(str(tmp_path), extra=("--include", "*"))
    assert code == 2
    bad = {Path(e["file"]).name for e in doc["errors"]}
    assert {"duplicate-key.yaml", "alias-bomb.yaml", "list-bad-item.yaml", "main.tf", "main.bicep"} <= bad
    assert "deep.yaml" in bad
    assert "STK-POD-003" in rules_of(doc, "yaml11")  # the good files were still judged


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    shutil.copy(HOSTILE / "yaml11-booleans.yaml", tmp_path / "pod.yaml")
    os.mkfifo(tmp_path / "pipe.yaml")
    code, doc, _ = scan_json(str(tmp_path))
    assert code == 1
    assert [(Path(s["file"]).name, "not a regular file" in s["reason"]) for s in doc["skipped_files"]] == [
        ("pipe.yaml", True)
    ]
    named = stockade("scan", str(tmp_path / "pipe.yaml"))  # named explicitly: still not opened
    assert named.returncode == 2 and "no Kubernetes object found" in named.stdout + named.stderr


def test_no_object_found_is_an_error_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("replicas: 3\n")
    run = stockade("scan", str(tmp_path))
    assert run.returncode == 2 and "no Kubernetes object found" in run.stdout
    assert stockade("scan", str(tmp_path), "--allow-empty").returncode == 0
    assert stockade("rbac", "escalations", str(tmp_path)).returncode == 2
    assert stockade("egress", "reach", str(tmp_path)).returncode == 2


@pytest.mark.parametrize("command", [["rbac", "escalations"], ["egress", "reach"], ["scan"]])
def test_every_reader_survives_the_hostile_corpus(command: list[str], tmp_path: Path) -> None:
    for f in HOSTILE.iterdir():
        run = stockade(*command, str(f))
        assert run.returncode in (0, 1, 2), (f.name, run.returncode)
        assert "Traceback" not in run.stderr + run.stdout, (f.name, run.stderr[-1500:])
        if run.returncode == 2:
            assert run.stderr.strip() or run.stdout.strip(), f.name


def test_duplicate_keys_in_the_config_name_both_lines(tmp_path: Path) -> None:
    config = tmp_path / "stockade.yaml"
    config.write_text("pss:\n  default_level: restricted\nimages: {}\npss:\n  default_level: privileged\n")
    run = stockade("scan", str(HOSTILE / "yaml11-booleans.yaml"), "--config", str(config))
    assert run.returncode == 2
    assert f"{config}:4: duplicate key 'pss' (first at line 1)" in run.stderr + run.stdout
    dated = tmp_path / "dated.yaml"
    dated.write_text(
        "exceptions:\n  - name: x\n    rules: [STK-POD-003]\n    owner: o\n    reason: r\n"
        "    expires: 2026-02-30\n"
    )
    run = stockade("scan", str(HOSTILE / "yaml11-booleans.yaml"), "--config", str(dated))
    assert run.returncode == 2
    assert f"{dated}:6: exceptions.0.expires:" in run.stderr + run.stdout


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm not installed (make test installs it)")
def test_a_repository_with_a_helm_chart_is_read_as_it_is() -> None:
    code, doc, _ = scan_json(str(REPO))
    assert code == 1 and doc["errors"] == []
    privileged = [f for f in doc["findings"] if f["rule"]["id"] == "STK-POD-003"]
    # rendered by helm, reported on the chart's template (the chart is named gpu-trainer, its folder trainer)
    assert [f["location"]["file"] for f in privileged] == [
        str(REPO / "deploy" / "charts" / "trainer" / "templates" / "deployment.yaml")
    ]
    assert {Path(s["file"]).name for s in doc["skipped_files"]} == {"devcontainer.json", "mkdocs.yml"}


def test_a_helm_chart_without_helm_is_an_error_naming_it(tmp_path: Path) -> None:
    env_path = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "helm").exists()
    )
    run = subprocess.run(
        [sys.executable, "-c", "from stockade.cli.main import main; main()", "scan", str(REPO), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": env_path},
    )
    assert run.returncode == 2
    errors = json.loads(run.stdout)["errors"]
    assert [e["file"] for e in errors] == [str(REPO / "deploy" / "charts" / "trainer")]
    assert "needs `helm` on PATH" in errors[0]["message"]


MINIFIED_POD = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c",'


@pytest.mark.parametrize(
    "name, text, error",
    [
        # a trailing comma: kubectl's JSON decoder refuses it too, and the object is a privileged pod
        ("bad.json", MINIFIED_POD + '"image":"x","securityContext":{"privileged":true},}]}}', "invalid JSON"),
        ("cut.json", MINIFIED_POD, "invalid JSON"),
        (
            "deep.json",
            MINIFIED_POD + '"x":' + "[" * 5000 + "]" * 5000 + "}]}}",
            "nesting deeper than 100 levels",
        ),
        ("cut.yaml", MINIFIED_POD, "invalid YAML"),
    ],
)
def test_a_minified_manifest_that_does_not_parse_is_an_error_not_a_skipped_file(
    name: str, text: str, error: str
) -> None:
    """A one-line JSON object starts with "{", not with its apiVersion key: it was skipped as "not JSON
    and no apiVersion or kind key in it", and a directory holding it beside clean manifests passed."""
    from stockade.policies.model import InputError
    from stockade.scanner.sources.text import parse_text

    items = list(parse_text(text, name, json_file=name.endswith(".json")))
    assert len(items) == 1 and isinstance(items[0], InputError), items
    assert error in str(items[0])


def test_a_directory_with_a_broken_minified_manifest_fails(tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "manifests" / "compliant" / "inference" / "vllm-service.yaml", tmp_path)
    (tmp_path / "bad.json").write_text(MINIFIED_POD + '"image":"x",}]}}')
    (tmp_path / "tsconfig.json").write_text('{\n  // JSONC, no manifest\n  "compilerOptions": {},\n}\n')
    code, doc, err = scan_json(str(tmp_path), extra=("--no-config",))
    assert code == 2, err
    assert [e["file"] for e in doc["errors"]] == [str(tmp_path / "bad.json")]
    assert [s["file"] for s in doc["skipped_files"]] == [str(tmp_path / "tsconfig.json")]


@pytest.mark.parametrize(
    "text",
    [
        '{"version": "2.0.0", // tasks\n "tasks": [{"label": "b", "group": {"kind": "build"}}]}\n',
        '{\n  // tasks\n  "version": "2.0.0",\n  "tasks": [\n    {\n      "group": {\n'
        '        "kind": "build"\n      }\n    }\n  ]\n}\n',
    ],
)
def test_jsonc_with_a_kind_key_but_no_api_version_is_still_skipped(text: str) -> None:
    """VS Code's tasks.json: JSONC with `"group": {"kind": "build"}`, minified or with the key on a
    line of its own (which made `stockade scan .` exit 2 on a repository holding .vscode/)."""
    from stockade.scanner.sources.base import Skipped
    from stockade.scanner.sources.text import parse_text

    items = list(parse_text(text, ".vscode/tasks.json", json_file=True))
    assert len(items) == 1 and isinstance(items[0], Skipped)
