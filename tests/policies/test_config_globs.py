"""The glob grammar of stockade.yaml (policies/config/patterns.py) held to the matchers that read it.

The oracles are the real ones: regorus' interpreter and its compiled VM (the embedded engine), OPA's
Go engine (opa-golib-python-bindings, the remote engine's code; the part that needs it skips where it
is not installed) and Python's fnmatch (scope, waivers, overrides, suppressions, the sandbox facts).
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import random
import re
import typing
from typing import Any

import pytest
import regorus
from pydantic import BaseModel

from stockade.policies.config.patterns import glob_problem
from stockade.policies.config.settings import Config, ConfigError, DotGlob, Glob, PathGlob, parse_config

HAVE_OPA = importlib.util.find_spec("opa_bindings") is not None

MODULE = "package g\nimport rego.v1\nm := [glob.match(input.p, input.d, v) | some v in input.vs]\n"

#: The delimiters the library's glob.match calls use: none (`null`), "." (`[]` and `["."]`), "/".
DELIMITERS: dict[str | None, list[str] | None] = {None: None, ".": ["."], "/": ["/"]}


class Matchers:
    """Each engine's answers for one pattern over many values; None where it cannot compile it."""

    def __init__(self) -> None:
        self.interpreter = regorus.Engine()
        self.interpreter.add_policy("g.rego", MODULE)
        program = regorus.Program.compile_from_modules("{}", [("g.rego", MODULE)], ["data.g.m"])
        self.vm = regorus.Rvm()
        self.vm.load_program(program)
        self.vm.set_data_json("{}")
        self.opa: Any = None
        if HAVE_OPA:
            from opa_bindings.engine import OpaEngine

            self.opa = OpaEngine()
            self.opa.add_policy("g.rego", MODULE)

    def regorus(self, pattern: str, delimiters: list[str] | None, values: list[str]) -> list[bool] | None:
        self.interpreter.set_input_json(json.dumps({"p": pattern, "d": delimiters, "vs": values}))
        try:
            return typing.cast(list[bool], json.loads(self.interpreter.eval_rule_as_json("data.g.m")))
        except Exception:  # "invalid glob", or a pattern holding the delimiters' placeholder
            return None

    def regorus_vm(self, pattern: str, delimiters: list[str] | None, values: list[str]) -> list[bool] | None:
        self.vm.set_input_json(json.dumps({"p": pattern, "d": delimiters, "vs": values}))
        try:
            answer = json.loads(self.vm.execute_entry_point("data.g.m"))
        except Exception:
            return None
        # the VM's glob.match is undefined where the glob does not compile: the element is dropped,
        # or kept as "<undefined>" (docs/architecture.md, the VM's wrong answers)
        if (
            isinstance(answer, list)
            and len(answer) == len(values)
            and all(a in (True, False) for a in answer)
        ):
            return answer
        return None

    def opa_go(self, pattern: str, delimiters: list[str] | None, values: list[str]) -> list[bool] | None:
        try:
            return typing.cast(
                list[bool], self.opa.eval_document("g.m", {"p": pattern, "d": delimiters, "vs": values})
            )
        except Exception:
            return None

    def answers(self, pattern: str, delimiter: str | None, values: list[str]) -> dict[str, list[bool] | None]:
        d = DELIMITERS[delimiter]
        out = {"regorus": self.regorus(pattern, d, values), "regorus VM": self.regorus_vm(pattern, d, values)}
        if self.opa is not None:
            out["OPA"] = self.opa_go(pattern, d, values)
        if delimiter is None:  # the Python matchers read the patterns the rules match without delimiters
            out["fnmatch"] = [fnmatch.fnmatchcase(v, pattern) for v in values]
        return out


@pytest.fixture(scope="module")
def matchers() -> Matchers:
    return Matchers()


# Values the patterns are tried on: never empty (OPA's `?` and `[!a]` match the empty string; no
# configured pattern is matched against one: names, tags' words, paths are never empty).
VALUES = ["a", "b", "ab", "ba", "aa", "a.b", "b.a", "a/b", "a/b/c", "a:b", "a-b", "z", "A", "Ab", "aA"]
VALUES += ["0", "9", "-", "^", "!", "*", "?", "[", "]", "a]", "..", ".", "/", "kube-system", "kube--system"]


def _random_patterns(rng: random.Random, alphabet: str, count: int, longest: int) -> list[str]:
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, longest))) for _ in range(count)]


def test_every_accepted_pattern_compiles_everywhere_and_matches_alike(matchers: Matchers) -> None:
    """Random patterns over the grammar's characters (and a mix weighted to text and `*`, which found
    OPA's prefix-suffix shortcut), each with each delimiter: an accepted one compiles in regorus, its
    VM and OPA, and all of them (and fnmatch) match the same values."""
    rng = random.Random(20261206)
    values = VALUES + _random_patterns(rng, "ab.:/-,zA09^!*?[]", 24, 5)
    patterns = _random_patterns(rng, "*?[]{},!^-\\ab.:/zA09", 900, 8)
    patterns += _random_patterns(rng, "**?[]-abab.:/zA0-", 700, 10)
    accepted = refused = 0
    wrong = []
    for pattern in patterns:
        for delimiter in DELIMITERS:
            if glob_problem(pattern, delimiter) is not None:
                refused += 1
                continue
            accepted += 1
            answers = matchers.answers(pattern, delimiter, values)
            distinct = {json.dumps(a) for a in answers.values()}
            if None in answers.values() or len(distinct) > 1:
                wrong.append((pattern, delimiter, {k: a is not None for k, a in answers.items()}))
    print(f"\n{accepted} pattern-delimiter pairs accepted, {refused} refused")
    assert accepted > 1500 and refused > 1500  # the sample holds both kinds
    assert not wrong, wrong[:10]


# What regorus cannot compile (its VM answers "no match", its interpreter fails) and what OPA cannot.
UNCOMPILABLE = {
    "[unclosed": "regorus",
    "{a,b": "regorus",
    "a}": "regorus",
    "[!]": "regorus",
    "[z-a]": "regorus",
    "a\\": "regorus",
    "[0-9a-f]": "OPA",
    "[a-cx]": "OPA",
    "[a-]": "OPA",
    "[]a]": "OPA",
}


@pytest.mark.parametrize("pattern", sorted(UNCOMPILABLE))
def test_what_an_engine_cannot_compile_is_refused(matchers: Matchers, pattern: str) -> None:
    answers = matchers.answers(pattern, None, ["a"])
    if UNCOMPILABLE[pattern] == "regorus":
        assert answers["regorus"] is None and answers["regorus VM"] is None
    elif HAVE_OPA:
        assert answers["OPA"] is None and answers["regorus"] is not None
    assert glob_problem(pattern) is not None


# Patterns every engine compiles but reads differently, and the value that shows it.
READ_DIFFERENTLY = {
    "[^a]": "a",  # regorus negates; OPA and fnmatch list "^"
    "a/**/b": "a/b",  # OPA's ** crosses, regorus' does not
    "kube-*-system": "kube-system",  # OPA matches a prefix and a suffix that overlap
    "{a,b}": "a",  # alternatives to the engines, text to fnmatch
    "\\a": "a",  # an escape to the engines, text to fnmatch
}


@pytest.mark.parametrize("pattern", sorted(READ_DIFFERENTLY))
def test_forms_the_matchers_read_differently_are_refused(matchers: Matchers, pattern: str) -> None:
    answers = matchers.answers(pattern, None, [READ_DIFFERENTLY[pattern]])
    assert None not in answers.values()
    if pattern not in ("a/**/b", "kube-*-system") or HAVE_OPA:
        assert len({json.dumps(a) for a in answers.values()}) > 1, answers
    assert glob_problem(pattern) is not None


@pytest.mark.parametrize(
    "pattern, delimiter",
    [
        ("kube-*", None),
        ("team-[0-9]*", None),
        ("ml-[!x]?", None),
        ("*-A100-*", None),
        ("kube-?*-system", None),
        ("myacr.azurecr.io/*", None),
        ("*/rayproject/ray*", None),
        ("STK-POD-*", None),
        ("*.blob.core.windows.net", "."),
        ("api.openai.com", "."),
        ("Standard_N*", "."),
        ("prodstore[0-9]*", "."),
        ("/dev/nvidia*", "/"),
        ("/var/lib/kubelet/pods/*/volumes", "/"),
    ],
)
def test_the_patterns_people_write_are_accepted(
    matchers: Matchers, pattern: str, delimiter: str | None
) -> None:
    assert glob_problem(pattern, delimiter) is None
    answers = matchers.answers(pattern, delimiter, VALUES)
    assert None not in answers.values() and len({json.dumps(a) for a in answers.values()}) == 1


def test_a_class_may_not_hold_the_delimiter_or_mix_a_range() -> None:
    assert glob_problem("a[.b]", ".") is not None and glob_problem("a[.b]") is None
    assert glob_problem("/var/[/x]", "/") is not None
    assert "not both" in (glob_problem("[0-9a-f]") or "")
    assert "0-9, a-z or A-Z" in (glob_problem("[+-/]") or "")


def test_a_bad_glob_is_a_config_error_naming_the_key_and_line() -> None:
    text = "images:\n  floating_tags:\n    - latest\n    - '[unclosed'\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "stockade.yaml")
    message = str(info.value)
    assert message.startswith("stockade.yaml:4: images.floating_tags.1: ")
    assert "'[unclosed'" in message and "a [ without its ]" in message and "\n" not in message


GLOB_TYPES = {
    id(m): kind
    for kind, t in (("Glob", Glob), ("DotGlob", DotGlob), ("PathGlob", PathGlob))
    for m in t.__metadata__
}


def _glob_fields(model: type[BaseModel], prefix: str = "") -> dict[str, str]:
    """Every field of the config that holds globs: its dotted path -> the validator's kind."""
    found: dict[str, str] = {}
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        annotation = field.annotation
        args = typing.get_args(annotation)
        inner = args[0] if typing.get_origin(annotation) is tuple and args else annotation
        kinds = [
            GLOB_TYPES[id(m)]
            for m in [*field.metadata, *getattr(inner, "__metadata__", ())]
            if id(m) in GLOB_TYPES
        ]
        if kinds:
            found[path] = kinds[0]
        elif isinstance(inner, type) and issubclass(inner, BaseModel):
            found.update(_glob_fields(inner, f"{path}[]." if inner is not annotation else f"{path}."))
    return found


# Each config key that holds globs, with a config that puts the bad pattern "[z-a]" there.
GLOB_KEYS: dict[str, dict[str, Any]] = {
    "scope.excluded_namespaces": {"scope": {"excluded_namespaces": ["P"]}},
    "scope.rbac_excluded_namespaces": {"scope": {"rbac_excluded_namespaces": ["P"]}},
    "images.require_digest_namespaces": {"images": {"require_digest_namespaces": ["P"]}},
    "images.floating_tags": {"images": {"floating_tags": ["P"]}},
    "sandbox.clusters[].clusters": {"sandbox": {"clusters": [{"clusters": ["P"], "profile": "aks"}]}},
    "sandbox.selectors[].namespaces": {"sandbox": {"selectors": [{"namespaces": ["P"]}]}},
    "sandbox.class_patterns": {"sandbox": {"class_patterns": ["P"]}},
    "sandbox.aks.handlers": {"sandbox": {"aks": {"handlers": ["P"]}}},
    "sandbox.baremetal.handlers": {"sandbox": {"baremetal": {"handlers": ["P"]}}},
    "sandbox.baremetal.nvproxy.products": {"sandbox": {"baremetal": {"nvproxy": {"products": ["P"]}}}},
    "host_paths.forbidden": {"host_paths": {"forbidden": ["/P"]}},
    "egress.allow[].namespaces": {"egress": {"allow": [{"namespaces": ["P"]}]}},
    "egress.allow[].to_namespaces": {"egress": {"allow": [{"to_namespaces": ["P"]}]}},
    "egress.allow[].fqdns": {"egress": {"allow": [{"fqdns": ["P"]}]}},
    "service_accounts.api_clients[].namespaces": {
        "service_accounts": {"api_clients": [{"namespaces": ["P"]}]}
    },
    "service_accounts.api_clients[].kinds": {"service_accounts": {"api_clients": [{"kinds": ["P"]}]}},
    "service_accounts.api_clients[].names": {"service_accounts": {"api_clients": [{"names": ["P"]}]}},
    "rbac.break_glass_subjects[].name": {"rbac": {"break_glass_subjects": [{"kind": "User", "name": "P"}]}},
    "storage.approved_accounts": {"storage": {"approved_accounts": ["P"]}},
    "exposure.sensitive_images[].images": {
        "exposure": {"sensitive_images": [{"what": "x", "images": ["P"]}]}
    },
    "exposure.sensitive_images[].unless": {
        "exposure": {"sensitive_images": [{"what": "x", "images": ["x"], "unless": ["P"]}]}
    },
    "credentials.allowed_names": {"credentials": {"allowed_names": ["P"]}},
    "azure.gpu_vm_sizes": {"azure": {"gpu_vm_sizes": ["P"]}},
    "overrides[].rules": {"overrides": [{"rules": ["P"], "action": "warn"}]},
    "overrides[].namespaces": {"overrides": [{"namespaces": ["P"], "action": "warn"}]},
    "overrides[].clusters": {"overrides": [{"clusters": ["P"], "action": "warn"}]},
    "exceptions[].rules": {
        "exceptions": [{"name": "w", "rules": ["P"], "owner": "o", "reason": "r", "expires": "2099-01-01"}]
    },
    **{
        f"exceptions[].match.{key}": {
            "exceptions": [
                {
                    "name": "w",
                    "rules": ["STK-POD-001"],
                    "match": {key: ["P"]},
                    "owner": "o",
                    "reason": "r",
                    "expires": "2099-01-01",
                }
            ]
        }
        for key in ("clusters", "namespaces", "kinds", "names")
    },
    **{
        f"suppressions.{gate}.{key}": {"suppressions": {gate: {key: ["P"]}}}
        for gate in ("admission", "audit")
        for key in ("namespaces", "rules")
    },
}


#: The keys the library matches with a delimiter: "." (`glob.match(p, [], x)` or `["."]`), "/".
DOT_KEYS = {"egress.allow[].fqdns", "rbac.break_glass_subjects[].name", "storage.approved_accounts"}
DOT_KEYS |= {"azure.gpu_vm_sizes"}


def test_every_glob_key_is_listed_with_the_delimiter_its_rule_uses() -> None:
    fields = _glob_fields(Config)
    assert set(fields) == set(GLOB_KEYS)
    expected = {
        k: "DotGlob" if k in DOT_KEYS else "PathGlob" if k == "host_paths.forbidden" else "Glob"
        for k in fields
    }
    assert fields == expected


def _with(value: Any, pattern: str) -> Any:
    if isinstance(value, dict):
        return {k: _with(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_with(v, pattern) for v in value]
    return value.replace("P", pattern) if value in ("P", "/P") else value


@pytest.mark.parametrize("key", sorted(GLOB_KEYS))
def test_every_glob_key_refuses_a_pattern_regorus_cannot_compile(key: str) -> None:
    import yaml

    Config.model_validate(_with(GLOB_KEYS[key], "ok*"))  # the shape itself is valid
    dotted = key.replace("[]", ".0") + ("" if key.endswith("subjects[].name") else ".0")
    with pytest.raises(ConfigError) as info:
        parse_config(yaml.safe_dump(_with(GLOB_KEYS[key], "[z-a]")), "c.yaml")
    assert re.match(
        rf"c\.yaml:\d+: {re.escape(dotted)}: .*\[z-a\]' is not a glob every engine", str(info.value)
    )
