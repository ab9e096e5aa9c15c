"""STK-SA-005 against Kubescape C-0307 (``non-existent-service-account``) in
``../shared/corpora/kubescape_regolibrary.jsonl``, with the row's objects as a complete inventory (what
an audit or a synced webhook sees: an account that is not there does not exist). A scan, whose
inventory is partial, does not decide (the Rego unit tests check that).
"""

from __future__ import annotations

from typing import Any

import pytest

from stockade.policies.config import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Operation, Resource
from tests.corpora import corpus_rows, requires_corpus

pytestmark = requires_corpus("kubescape_regolibrary.jsonl")

ROWS = [
    r
    for r in corpus_rows("kubescape_regolibrary.jsonl")
    if (r.get("policy") or {}).get("rule") == "non-existent-service-account"
]


def _flags(row: dict[str, Any], evaluator: Evaluator) -> bool:
    facts = InventoryFacts(inventory_of(row["objects"], complete=True))
    return any(
        f.rule.id == "STK-SA-005"
        for obj in row["objects"]
        for f in evaluator.evaluate(Resource(obj), operation=Operation.AUDIT, facts=facts.facts(obj))
    )


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(parse_config(""))


def test_rows_exist() -> None:
    assert len(ROWS) >= 9


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row: dict[str, Any], evaluator: Evaluator) -> None:
    assert _flags(row, evaluator) == (row["expect"] == "deny")
