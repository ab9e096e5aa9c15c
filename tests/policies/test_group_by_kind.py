"""`group_by_kind`: the rules each kind's aggregating query asks, unchanged in content and order by
its set-based bookkeeping (it compared whole Rule dataclasses in lists before)."""

from __future__ import annotations

import dataclasses

from stockade.policies.engines.library import group_by_kind, load_library
from stockade.policies.model import Rule, Severity


def _reference(rules: list[Rule]) -> dict[str, list[Rule]]:
    """The former implementation: list membership by equality."""
    by_kind: dict[str, list[Rule]] = {}
    wildcard = [r for r in rules if "*" in r.kinds]
    for rule in rules:
        for kind in rule.kinds:
            if kind != "*":
                by_kind.setdefault(kind, [])
                if rule not in by_kind[kind]:
                    by_kind[kind].append(rule)
    for kind in by_kind:
        by_kind[kind].extend(r for r in wildcard if r not in by_kind[kind])
    if wildcard:
        by_kind["*"] = list(wildcard)
    return by_kind


def _rule(rule_id: str, *kinds: str) -> Rule:
    return Rule(rule_id, rule_id, "", "test", Severity.LOW, kinds, (), "", f"data.t.{rule_id}", "t.rego")


def _ids(groups: dict[str, list[Rule]]) -> list[tuple[str, list[str]]]:
    return [(kind, [r.id for r in rules]) for kind, rules in groups.items()]


def test_the_library_is_grouped_as_before() -> None:
    rules = list(load_library().rules.values())
    for order in (rules, rules[::-1], sorted(rules, key=lambda r: r.kinds)):
        assert _ids(group_by_kind(order)) == _ids(_reference(order))


def test_wildcards_repeated_kinds_and_rules_listing_their_kind_and_the_wildcard() -> None:
    rules = [
        _rule("A", "Pod", "Pod", "Deployment"),
        _rule("W", "*"),
        _rule("B", "Deployment", "*"),
        _rule("C", "Service"),
        _rule("V", "*", "Pod"),
    ]
    groups = group_by_kind(rules)
    assert _ids(groups) == _ids(_reference(rules))
    assert _ids(groups) == [
        ("Pod", ["A", "V", "W", "B"]),
        ("Deployment", ["A", "B", "W", "V"]),
        ("Service", ["C", "W", "B", "V"]),
        ("*", ["W", "B", "V"]),
    ]
    # a generator is read once, like a list
    assert _ids(group_by_kind(r for r in rules)) == _ids(groups)
    # two rules equal in every field but their id are two rules
    twin = dataclasses.replace(rules[2], id="B2")
    assert [r.id for r in group_by_kind([*rules, twin])["Deployment"]] == ["A", "B", "B2", "W", "V"]
