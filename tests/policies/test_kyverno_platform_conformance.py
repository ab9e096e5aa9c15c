"""Issue 23's rules against Kyverno's own cases in ``../shared/corpora/kyverno_policies.jsonl``:
``best-practices/require-ro-rootfs`` (STK-POD-202), ``best-practices/disallow-latest-tag``
(STK-IMG-002) and ``other/deny-secret-service-account-token-type`` (STK-SA-003), both harnesses
(``kyverno test`` rows and chainsaw admission rows).

A row agrees when stockade's rule reports some object of the row exactly when Kyverno denies it.
Rows stockade decides the other way on purpose are listed in ``DELIBERATE``; the test checks they do
go the other way.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Operation, Resource
from tests.corpora import corpus_rows, requires_corpus

pytestmark = requires_corpus("kyverno_policies.jsonl")

POLICIES = {
    "best-practices/require-ro-rootfs": "STK-POD-202",
    "best-practices/disallow-latest-tag": "STK-IMG-002",
    "other/deny-secret-service-account-token-type": "STK-SA-003",
}
# row id -> why stockade decides it the other way
DELIBERATE: dict[str, str] = {}


def _policy(row: dict[str, Any]) -> str | None:
    for path in (row.get("policy") or {}).get("paths") or ():
        folder = path.rsplit("/", 1)[0]
        if folder in POLICIES:
            return folder
    for folder in POLICIES:
        if f"/{folder.split('/', 1)[1]}/" in row["id"]:
            return folder
    return None


ROWS = [r for r in corpus_rows("kyverno_policies.jsonl") if r["expect"] != "skip" and _policy(r)]


@cache
def _evaluator() -> Evaluator:
    return Evaluator.default(parse_config(""))


def _flags(row: dict[str, Any]) -> bool:
    rule = POLICIES[_policy(row) or ""]
    objects = [*row["objects"], *(row.get("context_objects") or ())]
    facts = InventoryFacts(inventory_of(objects))
    for obj in row["objects"]:
        found = _evaluator().evaluate(Resource(obj), operation=Operation.SCAN, facts=facts.facts(obj))
        if any(f.rule.id == rule for f in found):
            return True
    return False


def test_every_policy_has_rows() -> None:
    assert {_policy(r) for r in ROWS} == set(POLICIES)
    assert len(ROWS) >= 30


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row: dict[str, Any]) -> None:
    kyverno = row["expect"] == "deny"
    assert _flags(row) == (not kyverno if row["id"] in DELIBERATE else kyverno)


def test_summary() -> None:
    agree = sum(_flags(r) == (r["expect"] == "deny") for r in ROWS)
    print(f"issue 23 rules vs Kyverno: {agree}/{len(ROWS)} rows agree")
    assert agree + len(DELIBERATE) == len(ROWS)
