"""The compiled type check (shape._validator, pydantic-core) against the walk it stands in for
(shape._check): it may only say "well typed" where the walk finds nothing, and for values a JSON
parser makes it must say so wherever the walk does (else the fast path would never be taken).

Values are generated from the client models themselves, every field of every kind with its right
type or, at random, another: null, booleans, integers past 64 bits, NaN, strings, lists, maps,
maps with integer keys, tuples, read-only mappings, subclasses of str and int."""

from __future__ import annotations

import enum
import math
import random
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.policies.decoding import shape
from stockade.scanner.sources.files import FileSource

ROOT = Path(__file__).resolve().parents[2]


class _Text(str):
    pass


class _Level(enum.IntEnum):
    ONE = 1


ODD: list[Any] = [None, True, False, 0, -1, 2**70, 1.5, math.nan, math.inf, "s", "", [], {}, ["x"], [1]]
ODD += [{"k": "v"}, {1: "x"}, ("a",), types.MappingProxyType({"k": "v"}), _Text("t"), _Level.ONE]


def _json_typed(value: Any) -> bool:
    """What orjson.loads can return: exact dicts with str keys, lists, str, int64, float, bool, None."""
    t = type(value)
    if t is dict:
        return all(type(k) is str and _json_typed(v) for k, v in value.items())
    if t is list:
        return all(_json_typed(v) for v in value)
    if t is int:
        return -(2**63) <= value < 2**64
    if t is float:
        return math.isfinite(value)
    return t in (str, bool, type(None))


def _value(kind: str, rng: random.Random, depth: int = 0) -> Any:
    if rng.random() < 0.12 or depth > 7:
        return rng.choice(ODD)
    form, inner, fields = shape._form(kind)
    if kind == "object" or form == shape._ANY:
        return rng.choice(ODD)
    if form == shape._STR:
        return rng.choice(["text", 3, 2.5])
    if form == shape._BOOL:
        return True
    if form == shape._NUM:
        return rng.choice([7, 0.5]) if kind == "float" else 7
    if form == shape._LIST:
        return [_value(inner, rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if form == shape._DICT:
        return {f"k{i}": _value(inner, rng, depth + 1) for i in range(rng.randint(0, 3))}
    assert fields is not None
    names = rng.sample(sorted(fields), min(len(fields), rng.randint(0, 6)))
    out: dict[Any, Any] = {name: _value(fields[name][0], rng, depth + 1) for name in names}
    if rng.random() < 0.2:
        out["notAField"] = rng.choice(ODD)
    return out


def _walk(value: Any, kind: str, strict: bool) -> list[Any]:
    out: list[Any] = []
    shape._check(value, kind, [], strict, out)
    return out


MODELS = sorted(shape._models())
ROOTS = [*sorted(set(shape._schema()["kinds"].values())), "V1PodSpec", "V1ObjectMeta"]


@pytest.mark.parametrize("strict", [False, True])
def test_every_model_compiles(strict: bool) -> None:
    for kind in MODELS:
        assert shape._validator(kind, strict).isinstance_python(None)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ROOTS), st.booleans(), st.integers(0, 2**32))
def test_the_compiled_check_agrees_with_the_walk(kind: str, strict: bool, seed: int) -> None:
    rng = random.Random(seed)
    validator = shape._validator(kind, strict)
    for _ in range(20):
        value = _value(kind, rng)
        problems = _walk(value, kind, strict)
        compiled = validator.isinstance_python(value)
        if compiled:
            assert problems == [], (kind, value)  # never "well typed" where the walk finds a problem
        if _json_typed(value):
            assert compiled == (problems == []), (kind, value, problems)


@pytest.mark.parametrize(
    ("value", "kind", "well_typed"),
    [
        ({"name": "c", "image": "i", "args": ["a", 2]}, "V1Container", True),  # numbers pass as strings
        ({"name": "c", "image": "i", "args": ["a", True]}, "V1Container", False),  # booleans never
        ({"labels": {"a": 1}}, "V1ObjectMeta", False),  # nor numbers in metadata
        ({"privileged": "true"}, "V1SecurityContext", False),
        ({"runAsUser": 1.0}, "V1SecurityContext", False),
        ({"runAsUser": 2**63 - 1, "unknown": [1, {"x": None}]}, "V1SecurityContext", True),
        ({"containers": {"name": "c"}}, "V1PodSpec", False),
    ],
)
def test_known_cases(value: dict[str, Any], kind: str, well_typed: bool) -> None:
    assert shape._validator(kind, False).isinstance_python(value) is well_typed
    assert (_walk(value, kind, False) == []) is well_typed


def test_problems_are_the_same_with_the_compiled_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example manifest, checked once by the walk alone and once with every kind compiled
    from the first check: the same problems, in the same order."""
    objects = [r.obj for r in FileSource([str(ROOT / "examples")]) if hasattr(r, "obj")]
    assert len(objects) > 50
    monkeypatch.setattr(shape, "COMPILE_AFTER", 10**9)
    monkeypatch.setattr(shape, "_seen", {})
    monkeypatch.setattr(shape, "_compiled", {})
    walked = [shape.problems(obj) for obj in objects]
    monkeypatch.setattr(shape, "COMPILE_AFTER", 0)
    assert [shape.problems(obj) for obj in objects] == walked
    assert shape._compiled  # the compiled check was used
