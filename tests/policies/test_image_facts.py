"""`input.facts.imageReferences` (policies/facts/images.py) against the Rego grammar it stands in for.

The Python map and `images.grammar_reference` of policies/rego/lib/images.rego must answer the same for
every string, since the Rego library uses the map where it holds the text and its own grammar
elsewhere. Compared under regorus on distribution/reference's test tables
(tests/policies/test_image_reference_grammar.py), the placeholders of issue 37, and 4,000 generated
strings built from the grammar's own pieces (separators, ports, IPv6 brackets, tags, digests of each
length, upper case, trailing newlines), so that near misses are as common as hits.
"""

from __future__ import annotations

import json
import random
from typing import Any

import regorus

from stockade.policies.engines.library import load_library
from stockade.policies.facts import facts_for, inventory_of
from stockade.policies.facts.images import MAX_LENGTH, facts, reference_fact, valid_reference
from tests.policies.test_image_reference_grammar import (
    NORMALIZED_INVALID,
    NORMALIZED_VALID,
    PARSE_INVALID,
    PARSE_VALID,
    PLACEHOLDERS,
    REGEXP,
    SHA512,
)

LIB = "data.stockade.lib.images"

PIECES = [
    "a",
    "b",
    "z",
    "0",
    "9",
    "A",
    "Z",
    "nginx",
    "library",
    "docker.io",
    "index.docker.io",
    "localhost",
    "reg.io",
    "REG.io",
    "127.0.0.1",
    "[::1]",
    "[fe80::1%eth0]",
    ":",
    ":5000",
    ":tag",
    ":latest",
    ":-x",
    "/",
    "//",
    ".",
    "..",
    "_",
    "__",
    "___",
    "-",
    "--",
    "@",
    "@sha256:",
    "@sha384:",
    "@sha512:",
    "@md5:",
    "f" * 32,
    "f" * 64,
    "F" * 64,
    "f" * 96,
    "f" * 128,
    "e" * 63,
    " ",
    "\n",
    "$",
    "{",
    "}",
    "é",
    "K",  # (a Kelvin sign, which lower-cases to "k")
]


def _generated(n: int, seed: int = 20261205) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 7))))
    return out


def _cases() -> list[str]:
    tables = [row[0] for row in PARSE_VALID] + PARSE_INVALID + [SHA512] + [t for t, _ in REGEXP]
    return sorted(set(tables + NORMALIZED_VALID + NORMALIZED_INVALID + PLACEHOLDERS + _generated(4000)))


def _engine() -> Any:
    engine = regorus.Engine()
    for module in load_library().policy_modules:
        engine.add_policy(module.path, module.text)
    engine.add_data_json(json.dumps({"stockade": {"config": {}}}))
    return engine


def _rego(engine: Any, query: str, inp: dict[str, Any]) -> Any:
    engine.set_input_json(json.dumps(inp))
    return engine.eval_query(f"x := {query}")["result"][0]["bindings"]["x"]


def test_python_and_rego_grammars_agree_on_every_case() -> None:
    cases = _cases()
    rego = set(
        _rego(_engine(), f"{{s | some s in input.cases; {LIB}.grammar_reference(s)}}", {"cases": cases})
    )
    python = {s for s in cases if valid_reference(s)}
    assert python == rego
    # the tables' own answers, so that agreement is not agreement on nothing
    assert set(NORMALIZED_VALID) <= python
    assert not python & set(NORMALIZED_INVALID + PLACEHOLDERS)
    assert 200 < len(python) < len(cases) - 200


def test_python_splits_every_valid_reference_as_the_rego_library_does() -> None:
    """`images.parse` is read from the map for a valid reference: it must be the object the library's
    own split gives without the map, on every valid case (and the map holds False for the others)."""
    cases = _cases()
    engine = _engine()
    rego = _rego(engine, f"{{s: {LIB}.parse(s) | some s in input.cases}}", {"cases": cases, "facts": {}})
    python = {s: reference_fact(s) for s in cases}
    valid = {s for s, v in python.items() if v is not False}
    assert valid == {s for s in cases if valid_reference(s)} and len(valid) > 200
    assert {s: python[s] for s in valid} == {s: rego[s] for s in valid}
    # and the library, given the map, answers from it: the same objects, without splitting anything
    given = _rego(
        engine,
        f"{{s: {LIB}.parse(s) | some s in input.cases}}",
        {"cases": sorted(valid), "facts": {"imageReferences": {s: python[s] for s in valid}}},
    )
    assert given == {s: rego[s] for s in valid}
    # (read, not recomputed: an object the split would not give is taken as it is)
    fact = reference_fact("nginx")
    assert isinstance(fact, dict)
    planted = {**fact, "repository": "planted.io/x"}
    query = f"[{LIB}.parse(s).repository, {LIB}.parse(s).valid] | some s in input.cases"
    assert _rego(
        engine, f"[{query}]", {"cases": ["nginx"], "facts": {"imageReferences": {"nginx": planted}}}
    ) == [["planted.io/x", True]]


def test_the_rego_library_reads_the_map_when_it_holds_the_text() -> None:
    engine = _engine()
    query = f"[{LIB}.valid_reference(s) | some s in input.cases]"
    # the map is taken as given (here it contradicts the grammar, to show which was read) ...
    given = {
        "cases": ["nginx", "Bad Image"],
        "facts": {"imageReferences": {"nginx": False, "Bad Image": True}},
    }
    assert _rego(engine, query, given) == [False, True]
    # ... and a text it does not hold is decided by the grammar
    assert _rego(engine, query, {"cases": ["nginx", "Bad Image"], "facts": {"imageReferences": {}}}) == [
        True,
        False,
    ]


def test_facts_cover_every_image_field_and_leave_long_texts_to_rego() -> None:
    long = "reg.io/" + "a" * MAX_LENGTH
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {
            "initContainers": [{"name": "i", "image": "busybox:1.36"}],
            "containers": [{"name": "c", "image": "$IMAGE"}, {"name": "d", "image": long}, {"name": "e"}],
            "ephemeralContainers": [{"name": "x", "image": "Debug:1"}],
            "volumes": [{"name": "m", "image": {"reference": "reg.io/models/llama@sha256:" + "a" * 64}}],
        },
    }
    got = facts_for(pod, inventory_of([pod]))["imageReferences"]
    assert got == {
        "busybox:1.36": reference_fact("busybox:1.36"),
        "$IMAGE": False,
        "Debug:1": False,
        "reg.io/models/llama@sha256:" + "a" * 64: reference_fact("reg.io/models/llama@sha256:" + "a" * 64),
    }
    assert got["busybox:1.36"] == {
        "domain": "docker.io",
        "path": "library/busybox",
        "repository": "docker.io/library/busybox",
        "tag": "1.36",
        "digest": "",
        "pinned": False,
        "valid": True,
    }
    assert facts({"kind": "ConfigMap", "data": {"image": "nginx"}}, inventory_of([])) == {}


def test_a_parsed_reference_is_one_shared_read_only_object_per_image_text() -> None:
    """Every pod naming an image holds the same parsed reference (an audit holds thousands of inputs
    at once); no reader can change it; it pickles (to a worker) and serialises as the mapping it is."""
    import copy
    import pickle

    import orjson
    import pytest

    def pod(name: str) -> dict[str, Any]:
        spec = {"containers": [{"name": "c", "image": "reg.io/team/app:1.2"}]}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}

    a, b = pod("a"), pod("b")
    inventory = inventory_of([a, b])
    ref_a = facts_for(a, inventory)["imageReferences"]["reg.io/team/app:1.2"]
    ref_b = facts_for(b, inventory)["imageReferences"]["reg.io/team/app:1.2"]
    assert ref_a is ref_b
    for change in (
        lambda r: r.__setitem__("tag", "latest"),
        lambda r: r.update(tag="latest"),
        lambda r: r.pop("tag"),
        lambda r: r.clear(),
        lambda r: r.setdefault("x", 1),
    ):
        with pytest.raises(TypeError):
            change(ref_a)
    assert ref_a["tag"] == "1.2" and len(ref_a) == 7
    assert pickle.loads(pickle.dumps(ref_a)) == ref_a == copy.deepcopy(ref_a)
    assert orjson.loads(orjson.dumps(ref_a)) == dict(ref_a) == json.loads(json.dumps(ref_a))
