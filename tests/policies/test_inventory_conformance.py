"""Rules decided from the gate's inventory against Kubescape's own cases in
``../shared/corpora/kubescape_regolibrary.jsonl``, each row's objects being a complete inventory (what
an audit or a synced webhook sees):

- STK-SA-005 vs C-0307 ``non-existent-service-account``: an account that is not there does not exist
  (a scan, whose inventory is partial, does not decide: the Rego unit tests check that);
- STK-EXP-001 vs C-0021 ``exposed-sensitive-interfaces-v1``: a LoadBalancer or NodePort Service in
  front of a workload that runs an interface without authentication of its own (the Service's pods
  come from the inventory, as in every gate).

Rows stockade decides the other way on purpose are listed in ``DELIBERATE``; the test checks they do
go the other way.
"""

from __future__ import annotations

from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Operation, Resource
from tests.corpora import corpus_rows, requires_corpus

pytestmark = requires_corpus("kubescape_regolibrary.jsonl")

#: Kubescape rule -> (stockade rule, rows the corpus must have at least)
PEERS = {
    "non-existent-service-account": ("STK-SA-005", 9),
    "exposed-sensitive-interfaces-v1": ("STK-EXP-001", 5),
}
DELIBERATE = {
    "regolibrary/exposed-sensitive-interfaces-v1/workloads2": (
        "Jenkins asks for credentials by default (its setup wizard creates an admin); stockade's "
        "exposure.sensitive_images lists interfaces that have no authentication of their own"
    ),
}
ROWS = [r for r in corpus_rows("kubescape_regolibrary.jsonl") if (r.get("policy") or {}).get("rule") in PEERS]


def _flags(row: dict[str, Any], evaluator: Evaluator) -> bool:
    rule = PEERS[row["policy"]["rule"]][0]
    facts = InventoryFacts(inventory_of(row["objects"], complete=True))
    return any(
        f.rule.id == rule
        for obj in row["objects"]
        for f in evaluator.evaluate(Resource(obj), operation=Operation.AUDIT, facts=facts.facts(obj))
    )


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator.default(parse_config(""))


def test_rows_exist() -> None:
    for peer, (_, least) in PEERS.items():
        assert sum(r["policy"]["rule"] == peer for r in ROWS) >= least, peer
    assert set(DELIBERATE) <= {r["id"] for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row: dict[str, Any], evaluator: Evaluator) -> None:
    kubescape = row["expect"] == "deny"
    assert _flags(row, evaluator) == (not kubescape if row["id"] in DELIBERATE else kubescape)
