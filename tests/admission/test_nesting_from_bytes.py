"""The webhook reads a review's nesting from its bytes (admission/bounds.py ``nests_within``) instead
of walking the parsed object: the two must agree on every JSON text, whatever its strings hold
(brackets, quotes, backslashes, the escapes of each encoder) and however it is laid out."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.admission.bounds import malformed, nests_within, object_shallow
from stockade.policies.decoding.decode import MAX_DEPTH, deeper_than
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS
from tests.reviews import admission_review

# strings made of what could confuse a reading of the bytes
_TRICKY = st.text(alphabet=st.sampled_from(list('{}[]"\\/:,nu aé\n\t\x00\u2028')), max_size=8)
_KEYS = _TRICKY | st.sampled_from(["a", "spec", "k"])
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TRICKY
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=25,
)


def _encodings(value: Any) -> list[bytes]:
    return [
        orjson.dumps(value),
        json.dumps(value).encode(),  # \uXXXX escapes
        json.dumps(value, ensure_ascii=False, indent=2).encode(),
        json.dumps(value, separators=(",", ":")).encode(),
    ]


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_the_bytes_agree_with_the_walk_at_every_limit(value: Any) -> None:
    for body in _encodings(value):
        for limit in range(0, 9):
            assert nests_within(body, limit) == (not deeper_than(value, limit)), (body, limit)


def test_strings_that_hold_brackets_and_escaped_quotes() -> None:
    # kubectl's last-applied-configuration annotation: a JSON document inside a string
    inner = {"spec": {"containers": [{"name": "c", "args": ['a]\\"{', "}}}}"]}]}}
    value = {"metadata": {"annotations": {"last-applied": json.dumps(inner)}}, "x": [[["\\"]]]}
    for body in _encodings(value):
        assert nests_within(body, 4)
        assert not nests_within(body, 3)


def test_the_webhook_decides_as_the_walk_at_the_limit() -> None:
    """At the limit and one past it, the webhook's check (the bytes, then the walk when the bytes
    do not settle it) says what the walk alone says. A hundred-deep chain is left to the walk: each
    pass would remove one pair, so the passes stop undecided (and the walk of a chain is short)."""

    def nested(levels: int) -> dict[str, Any]:
        inner: dict[str, Any] = {"a": "]]]]"}
        for _ in range(levels - 1):
            inner = {"n": inner, "s": "[[[["}
        return inner

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": nested(MAX_DEPTH - 2)}}
    body = orjson.dumps(admission_review(pod, "ml"))
    assert not deeper_than(pod) and not object_shallow(body)  # undecided: walked
    assert malformed(pod, DEFAULT_WORKLOADS, shallow=object_shallow(body)) is None
    pod["spec"]["x"] = nested(MAX_DEPTH - 1)
    body = orjson.dumps(admission_review(pod, "ml"))
    assert deeper_than(pod) and not object_shallow(body)
    assert (
        malformed(pod, DEFAULT_WORKLOADS, shallow=object_shallow(body))
        == f"nesting deeper than {MAX_DEPTH} levels"
    )


def test_a_deep_and_wide_document_is_left_to_the_walk() -> None:
    """A thousand chains 97 deep (within the limit): read from the bytes, a hundred passes over
    nearly all of 200 KB; the passes stop after eight scans' worth, undecided, and the walk
    decides. A wide, shallow one (a real manifest's shape) is decided from the bytes."""
    deep = [json.loads("[" * 97 + "]" * 97) for _ in range(1000)]
    body = orjson.dumps({"request": {"object": {"a": deep}}})
    assert not nests_within(body, MAX_DEPTH + 2)  # undecided
    assert not deeper_than({"a": deep}, MAX_DEPTH)  # the walk: within it
    wide = {"items": [{"name": f"c{i}", "env": [{"name": "A", "value": "[{"}]} for i in range(5000)]}
    assert nests_within(orjson.dumps(wide), 5) and not nests_within(orjson.dumps(wide), 4)
