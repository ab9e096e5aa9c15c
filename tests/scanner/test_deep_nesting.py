"""A document nested deeper than the decoders accept (policies/decoding/decode.py MAX_DEPTH) is a one-line
error naming the file in a scan, and a denial in the webhook: never a traceback (the policy engines'
JSON encoders stop near 255 levels, which a JSON manifest could otherwise reach)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from stockade.admission.bounds import malformed
from stockade.cli.main import build
from stockade.policies.decoding.decode import MAX_DEPTH, deeper_than
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS
from tests.reviews import admission_review
from tests.tls_webhook import webhook_client


def _deep(levels: int) -> dict[str, Any]:
    inner: dict[str, Any] = {"a": "x"}
    for _ in range(levels):
        inner = {"n": inner}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "deep", "namespace": "ml"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:1"}], "extra": inner}}},
    }


def test_depth_is_measured_without_recursion() -> None:
    assert not deeper_than(_deep(MAX_DEPTH - 10))
    assert deeper_than(_deep(MAX_DEPTH))
    assert deeper_than(_deep(50_000))  # far beyond Python's recursion limit


def test_scan_of_a_deep_json_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(_deep(600)))
    result = CliRunner().invoke(build(), ["scan", str(path)])
    assert result.exit_code == 2, result.output
    assert f"deep.json: nesting deeper than {MAX_DEPTH} levels" in result.output
    assert "Traceback" not in result.output


def test_webhook_denies_a_deep_object(tmp_path: Path) -> None:
    assert malformed(_deep(600), DEFAULT_WORKLOADS) == f"nesting deeper than {MAX_DEPTH} levels"
    with webhook_client(tmp_path) as client:
        body = json.dumps(admission_review(_deep(600), "ml")).encode()
        r = client.post("/validate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 200
    response = r.json()["response"]
    assert response["allowed"] is False
    assert "nesting deeper than" in response["status"]["message"]


def test_audit_reports_a_deep_object_as_an_error_of_that_object() -> None:
    """Through the real `kubernetes` client against the fake API server of examples/fleet/apiserver.py
    on loopback: a custom resource may keep unknown fields, so a live object can be deeper than any
    decoder would accept. 270 levels: beyond the engines' encoders (255)."""
    from stockade.policies.config.settings import parse_config
    from stockade.policies.evaluate import Evaluator
    from tests.fleet import audit_objects

    deep = _deep(270)
    deep["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    deep["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    result = audit_objects([ns, deep], Evaluator.default(parse_config("")), cluster="c1")
    assert [(e.file, e.message) for e in result.errors] == [
        ("c1/Deployment/ml/deep", f"nesting deeper than {MAX_DEPTH} levels: not evaluated")
    ]


def _depth(value: object) -> int:
    """The deepest collection's depth (the root's is 0; -1 without any), recursively: the reference."""
    if isinstance(value, dict):
        return max([0, *(_depth(v) + 1 for v in value.values())])
    if isinstance(value, list):
        return max([0, *(_depth(v) + 1 for v in value)])
    return -1


def test_depth_agrees_with_a_recursive_count_at_every_limit() -> None:
    import random

    rng = random.Random(7)

    def tree(budget: int) -> object:
        roll = rng.random()
        if budget <= 0 or roll < 0.3:
            return rng.choice(["s", 1, 2.5, True, None, {}, []])
        if roll < 0.65:
            return {f"k{i}": tree(budget - 1) for i in range(rng.randint(1, 3))}
        return [tree(budget - 1) for _ in range(rng.randint(1, 3))]

    for _ in range(300):
        value = tree(rng.randint(0, 9))
        depth = _depth(value)
        for limit in range(0, 11):
            assert deeper_than(value, limit) == (depth >= limit), (value, limit)
