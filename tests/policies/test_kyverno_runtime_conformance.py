"""Conformance of the sandbox rules with the runtime rows of the Kyverno policy library.

``../shared/corpora/kyverno_policies.jsonl`` (see its README) holds kyverno/policies' test cases; the rows
with ``rule_area: runtime`` are those of ``psp-migration/restrict-runtimeClassName``: a Pod may only set
``runtimeClassName`` to ``prodclass`` or ``expclass``, and one that sets none passes. Both its test
harnesses are in the corpus (the Kyverno CLI test and the chainsaw admission test), with the same pods.

Mapping: Kyverno's list of allowed classes is stockade's list of approved sandbox classes, and Kyverno's
rule applies to every Pod, which stockade expresses as "every workload is high-risk". So each row's Pod is
evaluated through the public pipeline with ``sandbox.baremetal.classes: [prodclass, expclass]`` and a
selector matching every namespace, and is "flagged" when STK-RT-001 fires. Rows that stockade decides
differently on purpose are in ``DELIBERATE`` with the reason; the test asserts stockade's own verdict for
them. ``test_summary`` prints the counts. The module skips when the corpus is absent.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from stockade.policies.config.settings import parse_config
from stockade.policies.evaluate import Evaluator, namespace_info
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.kinds.workloads import WORKLOAD_KINDS
from stockade.policies.model import Resource

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "kyverno_policies.jsonl"

pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason=f"conformance corpus not found: {CORPUS}")


@dataclass(frozen=True)
class Peer:
    """A Kyverno policy, the stockade rule that decides the same control, and the config that makes the
    two comparable."""

    rule: str
    config: Mapping[str, Any]


# Kyverno policy name (expect_detail[].policy, or the policy file's folder) -> stockade.
KYVERNO: dict[str, Peer] = {
    "restrict-runtimeclass": Peer(
        "STK-RT-001",
        {
            "sandbox": {
                "profile": "baremetal",
                "selectors": [{"namespaces": ["*"]}],
                "baremetal": {"classes": ["prodclass", "expclass"]},
            }
        },
    ),
}
POLICY_FOLDERS = {"restrict-runtimeClassName": "restrict-runtimeclass"}

# Row id suffix -> why stockade decides it the other way (the row's verdict is then stockade's opposite).
DELIBERATE: dict[str, str] = {
    "goodpod01": (
        "a Pod without runtimeClassName passes Kyverno (it only restricts the value when present); for a "
        "workload stockade treats as high-risk, no runtimeClassName means the host kernel's runc, which is "
        "exactly what STK-RT-001 reports (for workloads that are not high-risk stockade does not restrict "
        "runtime classes at all)"
    ),
}


@dataclass(frozen=True)
class Row:
    id: str
    policy: str
    objects: tuple[dict[str, Any], ...]
    expect: str

    def __str__(self) -> str:
        return self.id


def policy_of(raw: Mapping[str, Any]) -> str:
    for detail in raw.get("expect_detail") or ():
        if isinstance(detail, Mapping) and detail.get("policy"):
            return str(detail["policy"])
    folder = str(raw["id"]).split("/")[2]
    return POLICY_FOLDERS.get(folder, folder)


def load_rows() -> list[Row]:
    if not CORPUS.exists():
        return []
    rows = []
    with CORPUS.open() as fh:
        for line in fh:
            raw = json.loads(line)
            if raw.get("rule_area") != "runtime" or raw.get("expect") not in ("allow", "deny"):
                continue
            objects = tuple(o for o in raw["objects"] if o.get("kind") in WORKLOAD_KINDS)
            rows.append(Row(str(raw["id"]), policy_of(raw), objects, str(raw["expect"])))
    return rows


ROWS = load_rows()


@cache
def evaluator(policy: str) -> Evaluator:
    return Evaluator.default(parse_config(yaml.safe_dump(dict(KYVERNO[policy].config))))


def flagged(row: Row) -> bool:
    peer = KYVERNO[row.policy]
    ev = evaluator(row.policy)
    inventory = inventory_of(row.objects)
    hits = set()
    for obj in row.objects:
        ns = obj.get("metadata", {}).get("namespace") or "default"
        found = ev.evaluate(
            Resource(obj), namespace=namespace_info(None, ns), facts=facts_for(obj, inventory)
        )
        # the rows do not set automountServiceAccountToken: STK-RT-007's automounted-token finding in
        # their high-risk pods is not what the peer's row decides
        hits |= {
            f.rule.id
            for f in found
            if f.rule.id.startswith("STK-RT-")
            and not (f.rule.id == "STK-RT-007" and list(f.path[-1:]) == ["automountServiceAccountToken"])
        }
    assert hits <= {peer.rule}, f"other sandbox rules fired: {hits}"
    return peer.rule in hits


def deliberate_reason(row: Row) -> str | None:
    return next((why for suffix, why in DELIBERATE.items() if row.id.endswith(suffix)), None)


def expected(row: Row) -> bool:
    peer_flags = row.expect == "deny"
    return not peer_flags if deliberate_reason(row) else peer_flags


def test_corpus_has_rows_for_every_mapping() -> None:
    assert len(ROWS) >= 8
    assert {r.policy for r in ROWS} == set(KYVERNO), "a runtime row's policy is not mapped"
    for suffix in DELIBERATE:
        assert any(r.id.endswith(suffix) for r in ROWS), f"deliberate row {suffix} is not in the corpus"


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_row(row: Row) -> None:
    assert row.objects, "a runtime row without a workload"
    assert flagged(row) == expected(row), deliberate_reason(row) or f"Kyverno expects {row.expect}"


def test_summary(capsys: pytest.CaptureFixture[str]) -> None:
    counts: Counter[str] = Counter()
    for row in ROWS:
        agrees = flagged(row) == (row.expect == "deny")
        counts["matched" if agrees else "deliberate"] += 1
    lines = [
        f"kyverno runtime rows: {len(ROWS)}, matched {counts['matched']}, "
        f"deliberately different {counts['deliberate']}",
        *(f"  {suffix}: {why}" for suffix, why in DELIBERATE.items()),
    ]
    assert counts["matched"] + counts["deliberate"] == len(ROWS)
    assert counts["deliberate"] == sum(1 for r in ROWS if deliberate_reason(r))
    with capsys.disabled():  # shown in every run, -q included
        print("\n" + "\n".join(lines))
