"""Gatekeeper `gator verify` suites, run on stockade's Gatekeeper engine (`stockade policy verify`).

A suite (`kind: Suite`, `test.gatekeeper.sh/v1alpha1`) lists tests; each names a ConstraintTemplate
file and a constraint file (paths relative to the suite) and cases: an object file, optional
inventory files (what the template sees as `data.inventory`), and assertions. An assertion holds when
the number of violations (those whose message matches the assertion's `message` regex, if given) is
`violations`: `yes` (at least one), `no` (none) or a count; with neither, at least one. Gatekeeper
users keep such suites next to their templates, so the same files prove the same constraints here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stockade.policies.frameworks.common import GatekeeperError, read_documents
from stockade.policies.frameworks.gatekeeper import Gatekeeper, GatekeeperEngine, load_gatekeeper
from stockade.policies.model import namespace_info

SUITE_API = "test.gatekeeper.sh/"


@dataclass(frozen=True)
class CaseResult:
    suite: str
    test: str
    case: str
    ok: bool
    reason: str = ""  # why it failed, or the error


def assertion_holds(assertion: Mapping[str, Any], messages: list[str]) -> tuple[bool, str]:
    """gator's assertion semantics (module docstring); the reason when it does not hold."""
    pattern = assertion.get("message")
    hits = [m for m in messages if pattern is None or re.search(str(pattern), m)]
    want = assertion.get("violations", "yes")
    if want is True or str(want).lower() == "yes":
        return bool(hits), "" if hits else f"expected violations{_about(pattern)}, got none"
    if want is False or str(want).lower() == "no":
        return not hits, "" if not hits else f"expected no violations{_about(pattern)}, got {hits}"
    try:
        count = int(want)
    except (TypeError, ValueError):
        return False, f"violations must be yes, no or a count, not {want!r}"
    return len(hits) == count, "" if len(
        hits
    ) == count else f"expected {count}{_about(pattern)}, got {len(hits)}: {hits}"


def _about(pattern: Any) -> str:
    return f" matching {pattern!r}" if pattern is not None else ""


def run_suite(path: Path, *, prefer: str = "rego") -> Iterator[CaseResult]:
    """Every case of one suite file; an unusable test is one failed result naming the cause."""
    docs = read_documents(path)
    suites = [
        d for d in docs if str(d.get("apiVersion") or "").startswith(SUITE_API) and d.get("kind") == "Suite"
    ]
    if not suites:
        raise GatekeeperError(
            f"{path}: not a gator Suite (kind: Suite, apiVersion: test.gatekeeper.sh/v1alpha1)"
        )
    base = path.parent
    for suite in suites:
        for test in suite.get("tests") or []:
            name = str(test.get("name") or "")
            try:
                engine, gk = _engine(base, test, prefer)
            except GatekeeperError as exc:
                yield CaseResult(str(path), name, "*", False, str(exc))
                continue
            for case in test.get("cases") or []:
                yield _case(path, base, name, case, engine, gk)


def _engine(base: Path, test: Mapping[str, Any], prefer: str = "rego") -> tuple[GatekeeperEngine, Gatekeeper]:
    files = [base / str(test.get(k) or "") for k in ("template", "constraint")]
    for f in files:
        if not f.is_file():
            raise GatekeeperError(f"{f}: no such file")
    gk = load_gatekeeper(files, prefer=prefer)
    if len(gk.constraints) != 1:
        raise GatekeeperError(f"{files[1]}: expected one constraint, found {len(gk.constraints)}")
    return GatekeeperEngine(gk, gk.rules()), gk


def _case(
    path: Path, base: Path, test: str, case: Mapping[str, Any], engine: GatekeeperEngine, gk: Gatekeeper
) -> CaseResult:
    name = str(case.get("name") or "")
    try:
        inventory = [d for f in case.get("inventory") or [] for d in read_documents(base / str(f))]
        objects = read_documents(base / str(case.get("object") or ""))
        if len(objects) != 1:
            raise GatekeeperError(f"{case.get('object')}: expected one object, found {len(objects)}")
        obj = objects[0]
        engine.set_inventory(inventory)
        ns_name = (obj.get("metadata") or {}).get("namespace")
        ns_obj = next(
            (
                o
                for o in inventory
                if o.get("kind") == "Namespace" and (o.get("metadata") or {}).get("name") == ns_name
            ),
            None,
        )
        inp = {"object": obj, "operation": "CREATE", "namespace": namespace_info(ns_obj, ns_name)}
        messages = [v.msg for v in engine.evaluate(inp)]
    except GatekeeperError as exc:
        return CaseResult(str(path), test, name, False, str(exc))
    failures = []
    for assertion in case.get("assertions") or [{"violations": "yes"}]:
        ok, reason = assertion_holds(assertion, messages)
        if not ok:
            failures.append(reason)
    return CaseResult(str(path), test, name, not failures, "; ".join(failures))
