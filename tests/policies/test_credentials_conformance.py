"""STK-CRED-001 against the peers' own cases for plaintext credentials in ``../shared/corpora``:
Kubescape C-0012 (``rule-credentials-in-env-var``, ``rule-credentials-configmap``) and Polaris
(``sensitiveContainerEnvVar``, ``sensitiveConfigmapContent``).

A row agrees when stockade reports STK-CRED-001 on some object of the row exactly when the peer
denies. Rows stockade decides the other way on purpose are listed in ``DELIBERATE`` with the reason,
and the test checks they do go the other way (so the list cannot go stale). Rows whose peer input
(``postureControlInputs``) changes what the peer looks for are evaluated like any other: stockade has
no such knob, and its verdict is the one a user gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.model import Operation, Resource
from tests.corpora import corpus_rows, requires_corpus

pytestmark = requires_corpus("kubescape_regolibrary.jsonl", "polaris.jsonl")

PEER_RULES = {
    "kubescape_regolibrary.jsonl": ("rule", ("rule-credentials-in-env-var", "rule-credentials-configmap")),
    "polaris.jsonl": ("polaris_check", ("sensitiveContainerEnvVar", "sensitiveConfigmapContent")),
}


@dataclass(frozen=True)
class Deliberate:
    reason: str
    rows: tuple[str, ...]


DELIBERATE = (
    Deliberate(
        "Kubescape C-0207 cases (envFrom a Secret) filed under C-0012's rule: the values come from a "
        "Secret, so nothing is in plaintext; STK-CRED-001 is about values written into the manifest",
        (
            "regolibrary/rule-credentials-in-env-var/cronjob-envfrom-secretref",
            "regolibrary/rule-credentials-in-env-var/cronjob-initcontainer-envfrom-secretref",
            "regolibrary/rule-credentials-in-env-var/pod-envfrom-secretref",
            "regolibrary/rule-credentials-in-env-var/pod-initcontainer-envfrom-secretref",
            "regolibrary/rule-credentials-in-env-var/workloads-envfrom-secretref",
            "regolibrary/rule-credentials-in-env-var/workloads-initcontainer-envfrom-secretref",
        ),
    ),
    Deliberate(
        "AKIAIOSFODNN7EXAMPLE is AWS's published documentation example, nobody's key: stockade never "
        "reports published example and emulator values",
        (
            "regolibrary/rule-credentials-in-env-var/env-value-akia-key",
            "regolibrary/rule-credentials-configmap/env-value-akia-key",
        ),
    ),
    Deliberate(
        'Kubescape matches sensitive words as substrings of any value ("JWT", "_key_"): a variable '
        "named some-name holding the word JWT or my_key_value holds no credential; stockade needs a "
        "credential's format, or a credential's name with a value",
        (
            "regolibrary/rule-credentials-in-env-var/deployment",
            "regolibrary/rule-credentials-in-env-var/pod",
        ),
    ),
    Deliberate(
        "values of fewer than 4 characters (pwd: hi, XXXX under aws_access_key_id, an identifier and "
        "not a secret) are placeholders, not credentials",
        ("regolibrary/rule-credentials-configmap/test",),
    ),
)
EXPECTED_OTHER_WAY = {row for d in DELIBERATE for row in d.rows}


def _rows() -> list[dict[str, Any]]:
    out = []
    for corpus, (key, rules) in PEER_RULES.items():
        out += [r for r in corpus_rows(corpus) if (r.get("policy") or {}).get(key) in rules]
    return out


ROWS = _rows()


@cache
def _evaluator() -> Evaluator:
    return Evaluator.default(parse_config(""))


def _flags(row: dict[str, Any]) -> bool:
    objects = row["objects"]
    facts = InventoryFacts(inventory_of(objects))
    for obj in objects:
        found = _evaluator().evaluate(Resource(obj), operation=Operation.SCAN, facts=facts.facts(obj))
        if any(f.rule.id == "STK-CRED-001" for f in found):
            return True
    return False


def test_the_peers_have_cases() -> None:
    assert len(ROWS) >= 30


def test_deliberate_rows_exist() -> None:
    ids = {r["id"] for r in ROWS}
    assert ids >= EXPECTED_OTHER_WAY, EXPECTED_OTHER_WAY - ids


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_row(row: dict[str, Any]) -> None:
    peer = row["expect"] == "deny"
    expected = not peer if row["id"] in EXPECTED_OTHER_WAY else peer
    assert _flags(row) == expected


def test_summary() -> None:
    agree = sum(_flags(r) == (r["expect"] == "deny") for r in ROWS)
    print(f"STK-CRED-001 vs Kubescape C-0012 and Polaris: {agree}/{len(ROWS)} rows agree")
    assert agree + len(EXPECTED_OTHER_WAY) == len(ROWS)
