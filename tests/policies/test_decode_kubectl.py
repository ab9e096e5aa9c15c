"""The decoder reads YAML exactly as Kubernetes does: the real ``kubectl`` is the oracle.

Hypothesis generates documents whose ``spec`` holds scalars of every YAML 1.1/1.2 form (booleans
``y``/``on``/``YES``, ints in every base with signs and underscores, floats, timestamps, ``=``,
``<<``, nulls, overflow), quoted and tagged scalars (``!!str``, ``!!int``, ``!!binary``, ``!foo``),
keys of every type, anchors, aliases and merge keys, nested maps and lists, in flow and block
style. Every document is written to its own file and one ``kubectl label --local -f DIR -o json``
decodes them all (sigs.k8s.io/yaml over go-yaml v2, as the API server does); stockade's decoder
(:mod:`stockade.policies.decoding.decode`) must give the same JSON for every document kubectl accepts and an
error for every one it refuses.

One deliberate difference, counted: a key written twice in one mapping. kubectl's local decoding
keeps the last value, the API server's strict field validation (``kubectl apply``'s default)
rejects the object; stockade rejects it as an input error, so that a second ``privileged: false``
cannot hide the first ``privileged: true`` from review. ``make test`` installs the pinned kubectl
(``.tools/bin``); without one the module skips.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stockade.policies.decoding.decode import DecodeError, documents

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl not found (make test installs it)")


def _words(text: str) -> list[str]:
    return text.split()


BOOLS = _words("y Y yes Yes YES n N no No NO on On ON off Off OFF true True TRUE false False FALSE yEs oN nO")
NULLS = _words("~ null Null NULL nUll")
SPECIAL = _words(
    """
    = << - 0 00 08 09 0x 0b2 0o8 + +. ._5 1__0 0_ 0x_1F 0o1_7 1_000 0b1_0 -0 +0 0.0 -0.0 1. .5 -.5 +.5 1e3
    1E+3 -1.5e-3 1e400 -1e400 1e-400 .inf -.Inf +.INF .nan .NaN 2001-12-14 2001-02-30
    2001-12-14T21:59:43.10-05:00 2001-12-14t21:59:43Z 2001-1-2 12:30 1:20:30
    0x8000000000000000 0xFFFFFFFFFFFFFFFF 0x10000000000000000 9223372036854775807 9223372036854775808
    -9223372036854775808 -9223372036854775809 18446744073709551616 123456789012345678901234567890
    3.14159265358979 1e6 1.5 0.1 12e3 .5e2 5. 007 0o0 0O17 0X1f 0B11
    """
)
WORDS = st.from_regex(r"\A[a-z][a-z0-9._/-]{0,8}\Z", fullmatch=True)


def _int_text(value: int, base: str, underscores: bool) -> str:
    sign = "-" if value < 0 else ""
    v = abs(value)
    body = {"d": str(v), "x": f"0x{v:x}", "X": f"0X{v:X}", "o": f"0o{v:o}", "O": f"0{v:o}", "b": f"0b{v:b}"}[
        base
    ]
    if underscores and len(body) > 2:
        body = body[:-1] + "_" + body[-1]
    return sign + body


INT_TEXT = st.builds(
    _int_text,
    st.one_of(st.integers(-1000, 1000), st.integers(-(2**66), 2**66)),
    st.sampled_from("dxXoOb"),
    st.booleans(),
)
FLOAT_TEXT = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.floats(-1e6, 1e6).map(lambda f: f"{f:.3e}"),
    st.floats(0, 100).map(lambda f: f"{f:.2f}".rstrip("0")),
)
PLAIN = st.one_of(st.sampled_from(BOOLS + NULLS + SPECIAL), INT_TEXT, FLOAT_TEXT, WORDS).filter(
    lambda s: s not in ("-",) and not s.startswith(("- ", "? "))
)
TAGS = ["!!str", "!!int", "!!float", "!!bool", "!!null", "!!timestamp", "!foo", "!!binary"]
BASE64 = st.sampled_from(["aGVsbG8=", "/w==", "!!!", "YQ", "", "4pyT"])


@dataclass
class Gen:
    """Renders a random YAML value; anchors are numbered so aliases refer to earlier ones."""

    draw: Any
    anchors: list[str] = field(default_factory=list)
    depth: int = 0

    def scalar(self, key: bool = False) -> str:
        kind = self.draw(st.sampled_from(["plain", "plain", "plain", "squote", "dquote", "tag"]))
        text = self.draw(PLAIN)
        if kind == "squote":
            return "'" + text.replace("'", "''") + "'"
        if kind == "dquote":
            return '"' + text + '"'
        if kind == "tag":
            tag = self.draw(st.sampled_from(TAGS))
            if tag == "!!binary":
                return f"{tag} {self.draw(BASE64)!r}" if not key else f"!!str {text}"
            return f"{tag} {text}"
        if key and text in ("<<", "="):
            return text + "x"
        return text

    def value(self, block: bool, indent: int) -> str:
        options = (
            ["scalar", "scalar", "map", "list", "alias", "anchor"] if self.depth < 4 else ["scalar", "alias"]
        )
        choice = self.draw(st.sampled_from(options))
        if choice == "alias" and self.anchors:
            return "*" + self.draw(st.sampled_from(self.anchors))
        if choice == "anchor":
            name = f"a{len(self.anchors)}"
            body = self.collection(block=False, indent=indent, mapping=self.draw(st.booleans()))
            self.anchors.append(name)
            return f"&{name} {body}"
        if choice in ("map", "list"):
            return self.collection(block, indent, mapping=choice == "map")
        return self.scalar()

    def collection(self, block: bool, indent: int, mapping: bool) -> str:
        self.depth += 1
        try:
            n = self.draw(st.integers(0, 4))
            if mapping:
                pairs = []
                for _ in range(n):
                    if self.anchors and self.draw(st.integers(0, 5)) == 0:
                        merged = self.draw(st.lists(st.sampled_from(self.anchors), min_size=1, max_size=3))
                        value = (
                            "*" + merged[0]
                            if len(merged) == 1
                            else "[" + ", ".join("*" + m for m in merged) + "]"
                        )
                        pairs.append(("<<", value))
                        continue
                    pairs.append((self.scalar(key=True), self.value(block, indent + 2)))
                if block and pairs:
                    pad = " " * indent
                    return "\n" + "\n".join(f"{pad}{k}: {v}" for k, v in pairs)
                return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
            items = [self.value(False, indent + 2) for _ in range(n)]
            return "[" + ", ".join(items) + "]"
        finally:
            self.depth -= 1


@st.composite
def spec_documents(draw: Any) -> str:
    gen = Gen(draw)
    block = draw(st.booleans())
    body = gen.collection(block=block, indent=2, mapping=True)
    return body


HEADER = "apiVersion: example.com/v1\nkind: Foo\nmetadata:\n  name: {name}\nspec: {body}\n"


def _normal(value: Any) -> Any:
    """Numbers compared as floats (kubectl prints big ints through float64), containers recursively."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return {k: _normal(v) for k, v in value.items()}


def kubectl_decode(texts: list[str]) -> dict[str, Any]:
    """name -> kubectl's JSON of the object's spec, or the error string, for each text."""
    with tempfile.TemporaryDirectory() as tmp:
        for i, text in enumerate(texts):
            (Path(tmp) / f"c{i:05d}.yaml").write_text(text)
        run = subprocess.run(
            [str(KUBECTL), "label", "--local", "-f", tmp, "stockade-oracle=1", "-o", "json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    out: dict[str, Any] = {}
    decoder = json.JSONDecoder()
    pos, stdout = 0, run.stdout
    while True:
        while pos < len(stdout) and stdout[pos].isspace():
            pos += 1
        if pos >= len(stdout):
            break
        obj, pos = decoder.raw_decode(stdout, pos)
        out[obj["metadata"]["name"]] = ("ok", obj.get("spec"))
    for line in run.stderr.splitlines():
        for i in range(len(texts)):
            if f"c{i:05d}.yaml" in line:
                out[f"c{i:05d}"] = ("error", line)
    return out


@dataclass
class Tally:
    cases: int = 0
    equal: int = 0
    both_reject: int = 0
    duplicate_keys: int = 0
    kubectl_unstable: int = 0
    failures: list[str] = field(default_factory=list)


TALLY = Tally()


def compare(bodies: list[str]) -> None:
    texts = [HEADER.format(name=f"c{i:05d}", body=body) for i, body in enumerate(bodies)]
    oracle = kubectl_decode(texts)
    for i, text in enumerate(texts):
        name = f"c{i:05d}"
        TALLY.cases += 1
        try:
            ours: tuple[str, Any] = ("ok", next(documents(text))[0].get("spec"))
        except DecodeError as exc:
            ours = ("error", exc.message)
        theirs = oracle.get(name, ("error", "no output"))
        if ours[0] == "ok" and theirs[0] == "ok":
            if _normal(ours[1]) == _normal(theirs[1]):
                TALLY.equal += 1
                continue
        elif ours[0] == "error" and theirs[0] == "error":
            TALLY.both_reject += 1
            continue
        elif ours[0] == "error" and str(ours[1]).startswith("duplicate key") and theirs[0] == "ok":
            TALLY.duplicate_keys += 1
            continue
        if _kubectl_unstable(text, name, theirs):
            TALLY.kubectl_unstable += 1
            continue
        TALLY.failures.append(f"{text}\n  stockade: {ours}\n  kubectl:  {theirs}")


def _kubectl_unstable(text: str, name: str, first: Any = None, runs: int = 6) -> bool:
    """Whether kubectl answers ``text`` differently from one run to the next: two keys that become
    one in its JSON (`0_` and a float both written "0", one merged in by `<<`) are decided by Go's
    random map order (seen: 3 runs in 12 one way, 9 the other). Then it gives no one answer to
    compare with, and the document is counted apart, not as a disagreement. ``first``: the answer
    already compared, one of the runs (six more runs alike, all unlike it, came about once in
    ten full test runs when it was left out)."""
    answers = {repr(_normal_answer(kubectl_decode([text]).get(name))) for _ in range(runs)}
    if first is not None:
        answers.add(repr(_normal_answer(first)))
    return len(answers) > 1


def _normal_answer(answer: Any) -> Any:
    return (answer[0], _normal(answer[1])) if answer and answer[0] == "ok" else answer


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(spec_documents(), min_size=40, max_size=40))
def test_decoder_agrees_with_kubectl(bodies: list[str]) -> None:
    before = len(TALLY.failures)
    compare(bodies)
    assert len(TALLY.failures) == before, TALLY.failures[before]


HANDWRITTEN = [
    "{a: y, b: Y, c: 0o0, d: 0o17, e: 017, f: 08, g: =, h: 2001-02-30, i: 1e400, j: ~}",
    "{privileged: y, hostNetwork: Y, runAsUser: 0o0}",
    "{b: &m {privileged: true}, c: &n {privileged: false}, d: {<<: [*m, *n]}, e: {privileged: n, <<: *m}}",
    "{9000: x, 1.5: y, true: z, 0x10: w, 2001-01-01: v, -0.0: e, 123456789.0: d, 1e6: b}",
    "{a: !!binary aGVsbG8=, b: !!set {x, y}, c: !foo bar, d: !!python/tuple [1], e: !!str 1, f: !!int '7'}",
    "{a: !!float 1, b: !!bool yes, c: !!null '', d: !!timestamp 2001-02-03}",
    "{a: !!int x}",
    "{a: !!bool 1}",
    "{a: !!timestamp 2001-02-30}",
    "{a: .inf}",
    "{a: .nan}",
    "{~: x}",
    "{[1]: x}",
    "{<<: [1]}",
    "{a: &a [*a]}",
    "{a: !!binary '!!!'}",
    "{a: 9223372036854775808, b: 0xFFFFFFFFFFFFFFFFFFFF, c: 1e20, d: -9223372036854775809}",
    "{<<: {a: 1}, '<<': 2, ? !!merge << : {b: 1}}",
    "{a: 1, a: 2}",
    "{1: a, '1': b}",
    "{!!float 0x8000000000000000: {}}",
    "{0.: y, a: 1, -0.0: z}",
    "{a: !!float 0x8000000000000000, b: !!float 0x7FFFFFFFFFFFFFFF}",
    "\n  a: 1\n  <<: {a: 2}\n  b: {c: y}",
]


def test_handwritten_cases_agree_with_kubectl() -> None:
    before = len(TALLY.failures)
    compare(HANDWRITTEN)
    assert len(TALLY.failures) == before, "\n".join(TALLY.failures[before:])


def test_summary(capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(
            f"\nkubectl differential: {TALLY.cases} documents, {TALLY.equal} identical JSON, "
            f"{TALLY.both_reject} refused by both, {TALLY.duplicate_keys} duplicate-key documents refused "
            f"by stockade only (strict field validation), {TALLY.kubectl_unstable} kubectl answers "
            f"differently run to run, {len(TALLY.failures)} disagreements"
        )
    assert not TALLY.failures
    assert TALLY.cases == 0 or TALLY.equal > TALLY.cases / 2
    assert math.isfinite(TALLY.cases)


def test_a_document_kubectl_answers_at_random_is_told_apart() -> None:
    """The document that failed a full run: kubectl's own answer changes from run to run (one way in
    a quarter of the runs: 60 runs all alike would happen once in 3*10^7)."""
    body = (
        "{\"h.7k1p\": {FALSE: &a0 {'0B11': \"s/tzy8\"}, '0.': {38.08: NULL, '-2.648320638769219e+16': &a1 "
        '{".inf": *a0, 9.609363362248632e-139: *a0, "1.2972162133479e+16": gfas., <<: [*a0, *a0, *a0]}, '
        "<<: *a1, -5.960464477539063e-08: *a1}}, 0_: -1.8317289022919387e+227, <<: *a1, "
        "hyz70i6h.: '-036454_3'}"
    )
    assert _kubectl_unstable(HEADER.format(name="c00000", body=body), "c00000", runs=60)
    assert not _kubectl_unstable(HEADER.format(name="c00000", body="{a: 1}"), "c00000")
