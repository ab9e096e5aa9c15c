"""Conformance of the reachability engine with np-guard/netpol-analyzer's connectivity lists.

The corpus (``../shared/corpora/netpol_analyzer_complete.jsonl``, see its README) holds
netpol-analyzer's test inputs (workloads, Namespaces, policies) and the ``list`` output it expects:
every allowed ``src => dst : conn``; any pair not listed is denied. For the rows that use plain Kubernetes
NetworkPolicy only (``plain_k8s_netpol_only``), stockade's computed connectivity must equal the
expected list exactly, line for line; so must it for the rows whose policies are AdminNetworkPolicy,
BaselineAdminNetworkPolicy and NetworkPolicy only (``admin_rows``).

Rows whose expected list names workloads absent from the row's objects would be listed in
``INCOMPLETE``; since the corpus was re-extracted with the items of ``PodList``/``NamespaceList`` files,
there are none, and a test asserts so. Rows where stockade's list differs today are in
``KNOWN_DIFFERENT`` as strict xfails, with the reason.
``test_summary`` prints the counts.

The corpus is not part of the repository; the module skips when it is absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from stockade.policies.facts.netpol.reach import Reachability
from tests.corpora import corpus_rows, requires_corpus

CORPUS = "netpol_analyzer_complete.jsonl"

pytestmark = requires_corpus(CORPUS)

# Row id -> why the whole expected list cannot be reproduced from the row's objects. The re-extracted
# corpus carries the items of PodList/NamespaceList files, so no row lacks its workloads any more.
INCOMPLETE: dict[str, str] = {}

# Row id -> why stockade's list differs today (strict xfail: a fix shows up as XPASS and fails the run).
KNOWN_DIFFERENT: dict[str, str] = {}


def rows() -> tuple[Mapping[str, Any], ...]:
    return corpus_rows(CORPUS)


def plain_rows() -> list[Mapping[str, Any]]:
    return [r for r in rows() if r.get("plain_k8s_netpol_only")]


ADMIN_KINDS = {"AdminNetworkPolicy", "BaselineAdminNetworkPolicy", "NetworkPolicy"}


def admin_rows() -> list[Mapping[str, Any]]:
    return [
        r
        for r in rows()
        if not r.get("plain_k8s_netpol_only") and set(r.get("policy_kinds") or ()) <= ADMIN_KINDS
    ]


def expected(row: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    return [(a["src"], a["dst"], a["conn"]) for a in row["expect"]["allowed"]]


def absent_workloads(row: Mapping[str, Any], reach: Reachability) -> set[str]:
    present = {w.key for w in reach.workloads}
    named = {p for src, dst, _ in expected(row) for p in (src, dst) if not p.endswith("[External]")}
    return named - present


def compare(row: Mapping[str, Any]) -> tuple[set[str], set[str], int]:
    """(missing lines, extra lines, lines compared) over the workloads the row's objects hold."""
    reach = Reachability(row["objects"])
    absent = absent_workloads(row, reach)
    want = {f"{s} => {d} : {c}" for s, d, c in expected(row) if s not in absent and d not in absent}
    got = set(reach.connlist())
    return want - got, got - want, len(want)


def _marked(row: Mapping[str, Any]) -> Any:
    reason = KNOWN_DIFFERENT.get(row["id"])
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(row, id=row["id"], marks=marks)


@pytest.mark.parametrize("row", [_marked(r) for r in plain_rows()])
def test_plain_networkpolicy_rows(row: Mapping[str, Any]) -> None:
    missing, extra, _ = compare(row)
    assert not missing and not extra, f"missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}"


@pytest.mark.parametrize("row", admin_rows(), ids=lambda r: r["id"])
def test_admin_network_policy_rows(row: Mapping[str, Any]) -> None:
    assert not absent_workloads(row, Reachability(row["objects"]))
    missing, extra, _ = compare(row)
    assert not missing and not extra, f"missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}"


def test_incomplete_rows_are_exactly_those_missing_workloads() -> None:
    incomplete = {r["id"] for r in plain_rows() if absent_workloads(r, Reachability(r["objects"]))}
    assert incomplete == set(INCOMPLETE)


def test_summary(capsys: pytest.CaptureFixture[str]) -> None:
    plain = plain_rows()
    results = {r["id"]: compare(r) for r in plain}
    exact = [rid for rid, (m, e, _) in results.items() if not m and not e and rid not in INCOMPLETE]
    partial = [rid for rid, (m, e, _) in results.items() if not m and not e and rid in INCOMPLETE]
    lines = sum(n for m, e, n in results.values() if not m and not e)
    with capsys.disabled():
        print(
            f"\nnetpol-analyzer conformance (plain NetworkPolicy): {len(exact)}/{len(plain)} rows equal the "
            f"expected list exactly; {len(partial)}/{len(INCOMPLETE)} incomplete rows equal it on the "
            f"workloads present; {lines} connection lines matched"
        )
    assert len(exact) + len(partial) == len(plain) - len(KNOWN_DIFFERENT)
    assert len(plain) >= 20
    admin = admin_rows()
    admin_exact = [r["id"] for r in admin if compare(r)[:2] == (set(), set())]
    admin_lines = sum(len(expected(r)) for r in admin if r["id"] in admin_exact)
    with capsys.disabled():
        print(
            f"netpol-analyzer conformance (AdminNetworkPolicy / BaselineAdminNetworkPolicy): "
            f"{len(admin_exact)}/{len(admin)} rows equal the expected list exactly ({admin_lines} lines)"
        )
    assert len(admin_exact) == len(admin) and len(admin) >= 25
