"""The bundled examples decide exactly what their comments say, through the whole scan pipeline.

Each violating object in examples/manifests carries a `# stockade-expect: ID…` comment (or
`# stockade-expect (all waived): ID…`); objects under compliant/ and cluster/ must be clean. This
keeps the README demo honest and catches any rule change that moves a verdict.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from stockade.policies.config.settings import load_config
from stockade.policies.evaluate import Evaluator
from stockade.scanner.result import Result
from stockade.scanner.scan import ScanOptions, run_scan
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
EXPECT = re.compile(r"^# stockade-expect( \(all waived\))?:\s*(.*)$")
IDS = re.compile(r"STK-[A-Z]+-\d{3}")

Key = tuple[str, str | None, str]  # kind, namespace, name


def expectations() -> dict[Key, tuple[bool, set[str]]]:
    """(waived?, rule ids) per object that carries a stockade-expect comment."""
    out: dict[Key, tuple[bool, set[str]]] = {}
    for path in sorted((EXAMPLES / "manifests").rglob("*.yaml")):
        if "broken" in path.parts:
            continue
        for chunk in re.split(r"^---\s*$", path.read_text(), flags=re.M):
            lines = chunk.splitlines()
            for i, line in enumerate(lines):
                m = EXPECT.match(line)
                if not m:
                    continue
                ids = set(IDS.findall(m.group(2)))
                for more in lines[i + 1 :]:
                    if not more.startswith("#") or not IDS.search(more) or EXPECT.match(more):
                        break
                    ids |= set(IDS.findall(more))
                obj = yaml.safe_load(chunk)
                md = obj["metadata"]
                out[(obj["kind"], md.get("namespace"), md["name"])] = (m.group(1) is not None, ids)
    return out


@pytest.fixture(scope="module")
def result() -> Result:
    config = load_config(EXAMPLES / "stockade.yaml")
    files = FileSource([str(EXAMPLES / "manifests")], exclude=["broken"])
    return run_scan(files, [], Evaluator.default(config), ScanOptions(config, workers=1), version="test")


def test_every_object_decides_as_its_comment_says(result: Result) -> None:
    expected = expectations()
    assert len(expected) >= 20, "the examples lost their expectations"
    active: dict[Key, set[str]] = defaultdict(set)
    waived: dict[Key, set[str]] = defaultdict(set)
    for f in result.findings:
        key = (f.resource.kind, f.resource.namespace, f.resource.name)
        # what a finding folds (policies/folding.py: a privileged container's other gaps) is decided too
        folded = {m["rule"] for m in f.details.get("folded", ())}
        (waived if f.waived else active)[key].update({f.rule.id, *folded})
    for key, (all_waived, ids) in expected.items():
        if all_waived:
            assert (waived[key], active[key]) == (ids, set()), key
        else:
            assert active[key] == ids, key
    unexpected = {k: v for k, v in active.items() if k not in expected}
    assert unexpected == {}, "objects without a stockade-expect comment must be clean"


def test_compliant_and_cluster_objects_are_clean(result: Result) -> None:
    dirty = [f for f in result.findings if f.file and ("/compliant/" in f.file or "/cluster/" in f.file)]
    assert dirty == []
    assert result.errors == []


def test_exceptions_in_force_and_expired(result: Result) -> None:
    status = {s.spec.name: s.status for s in result.exceptions}
    assert "expired" in status.values() and "active" in status.values()


def test_broken_file_is_reported_with_its_line() -> None:
    (err,) = list(FileSource([str(EXAMPLES / "manifests" / "broken")]))
    assert not hasattr(err, "obj") and err.line is not None  # an InputError at path:line
    assert str(err).startswith(str(EXAMPLES / "manifests" / "broken" / "bad-indent.yaml") + ":")


@pytest.mark.parametrize("fork", [True, False], ids=["forked after reading", "inputs sent to workers"])
def test_parallel_scan_decides_the_same(result: Result, monkeypatch: pytest.MonkeyPatch, fork: bool) -> None:
    """Both parallel paths: workers forked after reading (they build the inputs), and the path of
    platforms without fork (inputs built here and pickled to workers)."""
    import stockade.scanner.scan as scan_module

    monkeypatch.setattr(scan_module, "PARALLEL_FILES", 1)
    monkeypatch.setattr(scan_module, "PARALLEL_OBJECTS", 1)
    if not fork:
        monkeypatch.setattr(scan_module, "can_fork", lambda: False)
    config = load_config(EXAMPLES / "stockade.yaml")
    files = FileSource([str(EXAMPLES / "manifests")], exclude=["broken"])
    options = ScanOptions(config, workers=2)
    parallel = run_scan(files, [], Evaluator.default(config), options, version="test")

    def key(r: Result) -> list[tuple[object, ...]]:
        return sorted((f.rule.id, f.file, f.line, f.message, f.action.value, f.waived) for f in r.findings)

    assert key(parallel) == key(result)


def test_gatekeeper_examples_suite_and_scan() -> None:
    """examples/gatekeeper: the gator suite passes, and its constraints are rules of a scan
    (`make demo` runs both)."""
    from stockade.policies.frameworks.verify import run_suite

    results = list(run_suite(EXAMPLES / "gatekeeper" / "suite.yaml"))
    assert len(results) == 5 and all(r.ok for r in results), [r for r in results if not r.ok]
    evaluator = Evaluator.default(load_config(None), [EXAMPLES / "gatekeeper"])
    scanned = run_scan(
        FileSource([str(EXAMPLES / "gatekeeper" / "samples")]), [], evaluator, ScanOptions(), version="t"
    )
    found = {
        (f.rule.id, f.resource.name, f.action.value) for f in scanned.findings if f.rule.id.startswith("GK-")
    }
    assert found == {
        ("GK-K8sAllowedRepos-org-registry", "notebook", "warn"),
        ("GK-K8sRequiredLabels-namespace-owner", "research", "deny"),
        ("GK-K8sRequiredLabels-namespace-owner", "scratch", "deny"),
    }
