"""The Rego image library's reference grammar (policies/rego/lib/images.rego) against
distribution/reference's own test tables, the parser the kubelet calls (`ParseNormalizedNamed`) and
that containerd and CRI-O fork.

Ported from github.com/distribution/reference (commit 0965666a6ade):

- reference_test.go `TestReferenceParse` (every row: valid ones with their domain, tag and digest,
  invalid ones) against `images.grammar_valid` (distribution's `Parse`);
- regexp_test.go `TestReferenceRegexp` against `images.grammar_valid`;
- normalize_test.go `TestValidateReferenceName` and `TestValidateRemoteName` against
  `images.valid_reference` (`ParseNormalizedNamed`);
- the placeholders that issue 37 found judged as images (gpu-operator, KubeRay, KServe).

One deliberate difference, said where it is: a sha512 digest. distribution's test binary does not
link crypto/sha512, so go-digest calls it unsupported there; the kubelet (and every runtime) links
it, so stockade accepts it.

Each table runs under regorus (the engine of every gate) and, when opa-golib-python-bindings is
installed, under OPA's Go engine too, whose regexp package is the one distribution uses: the grammar's
regular expressions mean the same in both.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import pytest
import regorus

from stockade.policies.engines.library import load_library

F64 = "f" * 64
D = "sha256:" + F64
BE = "sha256:be178c0543eb17f5f3043021c9e5fcf30285e557a4fc309cce97ff9ca6182912"

# TestReferenceParse rows that parse: (input, domain, tag, digest)
PARSE_VALID: list[tuple[str, str, str, str]] = [
    ("test_com", "", "", ""),
    ("test.com:tag", "", "tag", ""),
    ("test.com:5000", "", "5000", ""),
    ("test.com/repo:tag", "test.com", "tag", ""),
    ("test:5000/repo", "test:5000", "", ""),
    ("test:5000/repo:tag", "test:5000", "tag", ""),
    (f"test:5000/repo@{D}", "test:5000", "", D),
    (f"test:5000/repo:tag@{D}", "test:5000", "tag", D),
    ("lowercase:Uppercase", "", "Uppercase", ""),
    ("a/" * 127 + "a:tag-puts-this-over-max", "a", "tag-puts-this-over-max", ""),
    ("sub-dom1.foo.com/bar/baz/quux", "sub-dom1.foo.com", "", ""),
    ("sub-dom1.foo.com/bar/baz/quux:some-long-tag", "sub-dom1.foo.com", "some-long-tag", ""),
    ("b.gcr.io/test.example.com/my-app:test.example.com", "b.gcr.io", "test.example.com", ""),
    ("xn--n3h.com/myimage:xn--n3h.com", "xn--n3h.com", "xn--n3h.com", ""),
    (f"xn--7o8h.com/myimage:xn--7o8h.com@{D}", "xn--7o8h.com", "xn--7o8h.com", D),
    ("foo_bar.com:8080", "", "8080", ""),
    ("foo/foo_bar.com:8080", "foo", "8080", ""),
    ("192.168.1.1", "", "", ""),
    ("192.168.1.1:tag", "", "tag", ""),
    ("192.168.1.1:5000", "", "5000", ""),
    ("192.168.1.1/repo", "192.168.1.1", "", ""),
    ("192.168.1.1:5000/repo", "192.168.1.1:5000", "", ""),
    ("192.168.1.1:5000/repo:5050", "192.168.1.1:5000", "5050", ""),
    ("[2001:db8::1]/repo", "[2001:db8::1]", "", ""),
    ("[2001:db8:1:2:3:4:5:6]/repo:tag", "[2001:db8:1:2:3:4:5:6]", "tag", ""),
    ("[2001:db8::1]:5000/repo", "[2001:db8::1]:5000", "", ""),
    ("[2001:db8::1]:5000/repo:tag", "[2001:db8::1]:5000", "tag", ""),
    (f"[2001:db8::1]:5000/repo@{D}", "[2001:db8::1]:5000", "", D),
    (f"[2001:db8::1]:5000/repo:tag@{D}", "[2001:db8::1]:5000", "tag", D),
    ("[2001:db8::]:5000/repo", "[2001:db8::]:5000", "", ""),
    ("[::1]:5000/repo", "[::1]:5000", "", ""),
    ("example.com/" + "a" * 255 + ":tag", "example.com", "tag", ""),
]

# TestReferenceParse rows that fail (the Go error in the comment)
PARSE_INVALID: list[str] = [
    "",  # ErrNameEmpty
    ":justtag",  # ErrReferenceInvalidFormat
    f"@{D}",  # ErrReferenceInvalidFormat
    "repo@sha256:" + "f" * 34,  # digest.ErrDigestInvalidLength
    f"validname@invaliddigest:{F64}",  # digest.ErrDigestUnsupported
    "Uppercase:tag",  # ErrNameContainsUppercase
    "test:5000/Uppercase/lowercase:tag",  # ErrNameContainsUppercase
    "domain/" + "a" * 256 + ":tag",  # ErrNameTooLong
    "aa/asdf$$^/aa",  # ErrReferenceInvalidFormat
    "[2001:db8::1]",  # ErrReferenceInvalidFormat
    "[2001:db8::1]:5000",
    "[2001:db8::1]:tag",
    "[fe80::1%eth0]:5000/repo",
    "[fe80::1%@invalidzone]:5000/repo",
]

# TestReferenceParse's sha512 row: ErrDigestUnsupported only because its test binary lacks sha512.
SHA512 = "validname@sha512:" + "f" * 128

# TestReferenceRegexp: (input, matches)
REGEXP: list[tuple[str, bool]] = [
    ("registry.com:8080/myapp:tag", True),
    (f"registry.com:8080/myapp@{BE}", True),
    (f"registry.com:8080/myapp:tag2@{BE}", True),
    ("registry.com:8080/myapp@sha256:badbadbadbad", False),
    ("registry.com:8080/myapp:invalid~tag", False),
    ("bad_hostname.com:8080/myapp:tag", False),
    (f"localhost:8080@{BE}", True),
    (f"localhost:8080/name@{BE}", True),
    (f"localhost:http/name@{BE}", False),
    (f"localhost@{BE}", True),
    ("registry.com:8080/myapp@bad", False),
    ("registry.com:8080/myapp@2bad", False),
]

HEX64 = "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a"

# TestValidateReferenceName and TestValidateRemoteName (ParseNormalizedNamed)
NORMALIZED_VALID: list[str] = [
    "docker/docker",
    "library/debian",
    "debian",
    "localhost/library/debian",
    "localhost/debian",
    "LOCALDOMAIN/library/debian",
    "LOCALDOMAIN/debian",
    "docker.io/docker/docker",
    "docker.io/library/debian",
    "docker.io/debian",
    "index.docker.io/docker/docker",
    "index.docker.io/library/debian",
    "index.docker.io/debian",
    "127.0.0.1:5000/docker/docker",
    "127.0.0.1:5000/library/debian",
    "127.0.0.1:5000/debian",
    "192.168.0.1",
    "192.168.0.1:80",
    "192.168.0.1:8/debian",
    "192.168.0.2:25000/debian",
    "thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev",
    "[fc00::1]:5000/docker",
    "[fc00::1]:5000/docker/docker",
    "[fc00:1:2:3:4:5:6:7]:5000/library/debian",
    f"docker.io/{HEX64}",
    "Docker/docker",
    "DOCKER/docker",
    "docker-rules/docker",
    "docker---rules/docker",
    "doc/docker",
    "d/docker",
    "jess/t",
    "dock__er/docker",
]
NORMALIZED_INVALID: list[str] = [
    "https://github.com/docker/docker",
    "docker/Docker",
    "-docker",
    "-docker/docker",
    "-docker.io/docker/docker",
    "docker///docker",
    "docker.io/docker/Docker",
    "docker.io/docker///docker",
    "[fc00::1]",
    "[fc00::1]:5000",
    "fc00::1:5000/debian",
    "[fe80::1%eth0]:5000/debian",
    "[2001:db8:3:4::192.0.2.33]:5000/debian",
    HEX64,
    "docker-/docker",
    "-docker-/docker",
    "____/____",
    "_docker/_docker",
    "dock..er/docker",
    "dock_.er/docker",
    "dock-.er/docker",
    "docker/",
    "this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255" * 4 + "/docker",
    "-foo",  # TestInvalidReferenceComponents
    "busybox:-foo",  # WithTag(busybox, "-foo")
    "busybox@foo",  # WithDigest(busybox, "foo")
]

# Issue 37: what the reviewed repositories hold in image fields.
PLACEHOLDERS: list[str] = [
    "FILLED BY THE OPERATOR",  # NVIDIA gpu-operator assets/
    "FILLED BY OPERATOR",
    "$VLLM_IMAGE",  # KubeRay samples
    "${OPT_125M_CACHE_IMAGE}",  # KServe
    "ko://github.com/kserve/kserve/cmd/manager",  # KServe config/, for ko
    "{{ .Values.image.repository }}:{{ .Values.image.tag }}",
    "nginx@sha256:abc",
    "nginx:1.25 ",
]


class Rego(Protocol):
    def query(self, query: str, cases: Sequence[str]) -> Any: ...


class Regorus:
    def __init__(self) -> None:
        self.engine: Any = regorus.Engine()
        for module in load_library().policy_modules:
            self.engine.add_policy(module.path, module.text)
        self.engine.add_data_json(json.dumps({"stockade": {"config": {}}}))

    def query(self, query: str, cases: Sequence[str]) -> Any:
        self.engine.set_input_json(json.dumps({"cases": list(cases)}))
        result = self.engine.eval_query(f"x := {query}")
        return result["result"][0]["bindings"]["x"]


class Opa:
    def __init__(self) -> None:
        from opa_bindings.engine import OpaEngine

        self.engine: Any = OpaEngine()
        for module in load_library().policy_modules:
            self.engine.add_policy(module.path, module.text)
        self.engine.add_data({"stockade": {"config": {}}})

    def query(self, query: str, cases: Sequence[str]) -> Any:
        return self.engine.eval_query(f"x := {query}", {"cases": list(cases)})[0]["x"]


@pytest.fixture(
    scope="module",
    params=[
        "regorus",
        pytest.param(
            "opa",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("opa_bindings") is None,
                reason="opa-golib-python-bindings is not installed (make install adds it)",
            ),
        ),
    ],
)
def rego(request: pytest.FixtureRequest) -> Iterator[Rego]:
    engine: Regorus | Opa = Regorus() if request.param == "regorus" else Opa()
    yield engine
    if isinstance(engine, Opa):
        engine.engine.close()


LIB = "data.stockade.lib.images"


def grammar_valid(rego: Rego, cases: Sequence[str]) -> set[str]:
    return set(rego.query(f"{{s | some s in input.cases; {LIB}.grammar_valid(s)}}", cases))


def normalized_valid(rego: Rego, cases: Sequence[str]) -> set[str]:
    return set(rego.query(f"{{s | some s in input.cases; {LIB}.valid_reference(s)}}", cases))


def test_parse_table_valid_rows(rego: Rego) -> None:
    inputs = [row[0] for row in PARSE_VALID]
    assert grammar_valid(rego, inputs) == set(inputs)
    parts = rego.query(
        f"""[[name, tag, digest, {LIB}.grammar_path(name)] |
            some s in input.cases
            [name_tag, digest] := {LIB}.split_digest(s)
            [name, tag] := {LIB}.split_tag(name_tag)]""",
        inputs,
    )
    for (text, domain, tag, digest), (name, got_tag, got_digest, path) in zip(
        PARSE_VALID, parts, strict=True
    ):
        got_domain = "" if path == name else name[: len(name) - len(path) - 1]
        assert (got_domain, got_tag, got_digest) == (domain, tag, digest), text


def test_parse_table_invalid_rows(rego: Rego) -> None:
    assert grammar_valid(rego, PARSE_INVALID) == set()


def test_sha512_is_registered_where_images_are_pulled(rego: Rego) -> None:
    assert grammar_valid(rego, [SHA512, SHA512.replace("f" * 128, "f" * 127)]) == {SHA512}


def test_reference_regexp_table(rego: Rego) -> None:
    assert grammar_valid(rego, [text for text, _ in REGEXP]) == {text for text, ok in REGEXP if ok}


def test_normalized_names(rego: Rego) -> None:
    assert normalized_valid(rego, NORMALIZED_VALID) == set(NORMALIZED_VALID)
    assert normalized_valid(rego, NORMALIZED_INVALID) == set()


def test_placeholders_are_not_references(rego: Rego) -> None:
    assert normalized_valid(rego, PLACEHOLDERS) == set()
    parsed = rego.query(f"[{LIB}.parse(s) | some s in input.cases]", PLACEHOLDERS)
    assert [p["valid"] for p in parsed] == [False] * len(PLACEHOLDERS)
    assert not any(p["pinned"] for p in parsed)


def test_parse_of_valid_references(rego: Rego) -> None:
    """What the other image rules read from `parse`, on references the runtime accepts."""
    cases = ["nginx", "user/app:1", f"reg:5000/app:latest@{D}", "index.docker.io/nginx:1.25", "Reg.IO/x"]
    parsed = rego.query(f"[{LIB}.parse(s) | some s in input.cases]", cases)
    got = [(p["repository"], p["tag"], p["digest"], p["pinned"], p["valid"]) for p in parsed]
    assert got == [
        ("docker.io/library/nginx", "", "", False, True),
        ("docker.io/user/app", "1", "", False, True),
        ("reg:5000/app", "latest", D, True, True),
        ("docker.io/library/nginx", "1.25", "", False, True),
        ("reg.io/x", "", "", False, True),
    ]
