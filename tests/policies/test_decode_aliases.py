"""`may_alias`: a text it says holds no alias composes to a tree (no node reached twice).

The decoder skips the alias bookkeeping (memoized values, the self-reference and expansion checks)
for such texts, so a miss would let a billion-laughs document be expanded without go-yaml's limits.
Documents come from the kubectl differential's generator (anchors, aliases, merge keys, flow and
block) and from every YAML file of the repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from stockade.policies.decoding.decode import DecodeError, _shared, compose, may_alias
from tests.policies.test_decode_kubectl import HANDWRITTEN, spec_documents

ROOT = Path(__file__).resolve().parents[2]


def reached_twice(text: str) -> bool | None:
    """Whether any document of the text has a node reached twice; None when it does not compose."""
    try:
        return any(node is not None and _shared(node) for node in compose(text))
    except DecodeError:
        return None


def check(text: str) -> None:
    if reached_twice(text):
        assert may_alias(text), text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: &x 1\nb: *x\n", True),
        ("- &x {a: 1}\n- *x\n", True),
        ("{a: &x 1, b: *x}", True),
        ("[&x 1,*x]", True),
        ("[&x 1, {?*x : 1}]", True),  # in a flow collection, '?' is a key indicator even without a space
        ("*x", True),
        ("\ufeff*x", True),
        ("a: &x [1]\nb:\n\t*x", True),
        ('schedule: "*/5 * * * *"\n', False),
        ("verbs: ['*']\nresources: [\"*\"]\n", False),
        ("command: ls a*b\n", False),
        ("args: [a, b*]\n", False),
        ("a: 2 * 3\n", False),
    ],
)
def test_what_may_be_an_alias(text: str, expected: bool) -> None:
    assert may_alias(text) is expected
    check(text)


def test_every_character_before_an_alias() -> None:
    """An alias right after every character, in flow and block collections, as a key and a value."""
    templates = [
        "[&a x, {P*a : 1}]",
        "[&a x, P*a]",
        "[&a x,P*a]",
        "{k: &a x, m: P*a}",
        "{k: &a x, P*a : v}",
        "a: &a x\nb: P*a\n",
        "a: &a x\nP*a : v\n",
        "- &a x\n- P*a\n",
        "a: &a x\nb:\n  P*a\n",
        "[&a x, [P*a]]",
    ]
    characters = [chr(c) for c in range(32, 127)] + ["\t", "\n", "\r", "\x85", "\u2028", "\ufeff"]
    checked = 0
    for template in templates:
        for before in ("", " ", "-", "?", ":", ","):
            for c in characters:
                check(template.replace("P", before + c))
                checked += 1
    assert checked > 5000


def test_handwritten_cases() -> None:
    for text in HANDWRITTEN:
        check(text)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(spec_documents())
def test_generated_documents(text: str) -> None:
    check(text)


def test_the_repository_yaml() -> None:
    checked = 0
    for path in sorted(ROOT.glob("[!.]*/**/*.y*ml")):
        if ".venv" in path.parts or "build" in path.parts or "dist" in path.parts:
            continue
        check(path.read_text(encoding="utf-8", errors="replace"))
        checked += 1
    assert checked > 100
