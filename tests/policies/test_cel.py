"""Kubernetes' CEL environment (policies/runtimes/cel.py on cel-expr-python): the extensions and Kubernetes
libraries stockade provides, with the values Kubernetes' own library documentation gives, and what it
does not provide failing to compile (so the policy is reported as not evaluated, never passed)."""

from __future__ import annotations

from typing import Any

import pytest

from stockade.policies.runtimes.cel import UNDECIDABLE, CelError, environment

OBJ = {"spec": {"containers": [{"name": "a", "image": "x:latest"}, {"name": "b", "image": "y@sha256:1"}]}}

CASES: list[tuple[str, Any]] = [
    ("object.spec.containers.map(c, c.name)", ["a", "b"]),
    ("object.spec.containers.exists_one(c, c.image.endsWith(':latest'))", True),
    ("object.?metadata.?labels.?app.orValue('none')", "none"),
    ("'%s has %d'.format(['pod', 2])", "pod has 2"),
    ("'A-b'.lowerAscii()", "a-b"),
    ("cel.bind(n, size(object.spec.containers), n * 2)", 4),
    ("math.greatest([1, 5, 3])", 5),
    ("[1, 2, 3].isSorted() && ![3, 1].isSorted()", True),
    ("[1, 2, 3].sum()", 6),
    ("'abc 123 def 456'.findAll('[0-9]+')", ["123", "456"]),
    ("'abc 123'.find('[0-9]+')", "123"),
    (
        "sets.contains([1, 2, 3], [3, 1]) && sets.intersects([1], [1, 9]) && sets.equivalent([1, 2], [2, 1])",
        True,
    ),
    ("quantity('1Gi') == quantity('1024Mi')", True),
    ("quantity('500m').compareTo(quantity('0.5'))", 0),
    ("quantity('1.5Gi').isInteger()", True),
    ("quantity('1k').add(quantity('24')).asInteger()", 1024),
    ("isQuantity('1Zi')", False),
    ("ip('10.0.0.1').isGlobalUnicast()", True),  # private ranges are global unicast in Go
    ("isIP('::ffff:10.0.0.1')", False),  # IPv4-mapped IPv6 is refused
    ("cidr('10.0.0.0/8').containsIP('10.255.0.1') && !cidr('10.0.0.0/8').containsIP('11.0.0.1')", True),
    ("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')", True),
    ("url('https://example.com:8443/p?a=1').getPort()", "8443"),
    # the format library's optionals (policies/runtimes/cel.py rewrite)
    ("format.dns1123Label().validate('my-name').hasValue()", False),
    ("format.named('dns1123Label').value().validate('Bad_Name').hasValue()", True),
    ("format.named('noSuchFormat').hasValue()", False),
    ("[format.dns1123Label(), format.uuid()].all(f, f.validate('Not OK').hasValue())", True),
    ("format.labelValue().validate(object.?metadata.?name.orValue('a-b')).orValue([]).size()", 0),
    ("'x.validate(y) and format.named(z)'.size()", 33),  # text inside literals is left alone
    ("size(format.dns1035Label().validate('1abc').value()) == 1", True),
    # two-variable comprehensions (Kubernetes 1.32), spelled with one-variable macros by rewrite()
    ("[1, 2, 3].all(i, v, i < v)", True),
    ("[1, 2, 3].exists(i, v, i == 1 && v == 2)", True),
    ("[1, 2, 3].existsOne(i, v, v > 2) && ![1, 2, 3].exists_one(i, v, v > 1)", True),
    ("{'a': 1, 'ab': 2}.all(k, v, k.startsWith('a') && v > 0)", True),
    ("[1, 2, 3].transformList(i, v, i > 0, v * 2)", [4, 6]),
    ("{'a': 1, 'b': 2}.transformMap(k, v, k != 'a', v + 1)", {"b": 3}),
    ("{'a': 'x', 'b': 'y'}.transformMapEntry(k, v, {v: k})", {"x": "a", "y": "b"}),
    ("[[1, 2], [3]].all(i, xs, xs.all(j, x, x > i + j))", True),
    ("object.spec.containers.all(c, c.name != '')", True),
    ("'a.all(i, v, x)'.size()", 14),
    # cel-go's lists extension (Kubernetes' base environment)
    ("lists.range(3)", [0, 1, 2]),
    ("[[1], [2, [3]]].flatten()", [1, 2, [3]]),
    ("[1, 2, 3].slice(1, 3).reverse()", [3, 2]),
    ("'abc'.reverse()", "cba"),
    ("[3, 1, 1].distinct().sort()", [1, 3]),
    ("object.spec.containers.sortBy(c, c.image).map(c, c.name)", ["a", "b"]),
    # string() of an IP or CIDR: the calls the checker reports on are rewritten, macro variables too
    ("[ip('::1'), ip('10.0.0.1')].map(x, string(x))", ["::1", "10.0.0.1"]),
    ("string(cidr('10.1.2.3/8').masked()) + ' ' + string(1.5)", "10.0.0.0/8 1.5"),
    ("semver('1.2.3-rc.1+build.5').minor()", 2),
    ("isSemver('v1.2', true) && !isSemver('v1.2')", True),
    ("semver('1.0.0-alpha.beta').isLessThan(semver('1.0.0-beta'))", True),
    ("semver('1.0.0-alpha').compareTo(semver('1.0.0-alpha.1'))", -1),
    # Quantity and Semver share compareTo/isLessThan/isGreaterThan: one declaration, dispatched
    ("quantity('2').isGreaterThan(quantity('1')) && semver('2.0.0').isGreaterThan(semver('1.9.9'))", True),
]


@pytest.mark.parametrize(("expression", "value"), CASES, ids=[c[0][:60] for c in CASES])
def test_values(expression: str, value: Any) -> None:
    env = environment()
    outcome = env.evaluate(expression, env.activation({"object": OBJ}))
    assert outcome.error is None and outcome.value == value


@pytest.mark.parametrize(
    "expression",
    [
        "object.spec.noSuchLibrary()",
        "semver('1.0.0').compareTo(quantity('1'))",
    ],
)
def test_what_is_not_provided_does_not_compile(expression: str) -> None:
    with pytest.raises(CelError):
        environment().compile(expression)


def test_an_authorizer_check_no_gate_answers_is_undecidable() -> None:
    """Without a gate's answer (policies/frameworks/vap.py registers one per evaluation), a check is neither
    allowed nor denied: an error the VAP engine turns into "not evaluated"."""
    env = environment()
    outcome = env.evaluate("authorizer.group('').resource('pods').check('get').allowed()", env.activation({}))
    assert outcome.value is None and outcome.error is not None and UNDECIDABLE in outcome.error


def test_errors_are_values_not_exceptions() -> None:
    env = environment()
    for expression in ("object.spec.missing == 1", "1 / 0", "quantity('12x')", "[].max()"):
        outcome = env.evaluate(expression, env.activation({"object": OBJ}))
        assert outcome.value is None and outcome.error, expression


def test_a_library_without_vaps_does_not_load_the_cel_runtime() -> None:
    """The CEL runtime (and protobuf, RE2) cost every scan about 0.1 s to load: only policies load it."""
    import subprocess
    import sys

    code = (
        "import sys; from stockade.policies.engines.library import load_library; load_library();"
        "print(sorted(m for m in ('cel_expr_python', 'google.protobuf', 're2') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_string_index_of_matches_the_strings_extension() -> None:
    """`indexOf`/`lastIndexOf` calls are rewritten to stockade's own functions (which also serve
    lists): on strings they must answer exactly as the runtime's strings extension, which is the
    oracle here, value for value and error for error, on random and edge inputs (code points)."""
    import random

    from cel_expr_python import cel  # type: ignore[import-untyped]
    from cel_expr_python.ext import ext_strings  # type: ignore[import-untyped]

    oracle = cel.NewEnv(
        variables={"s": cel.Type.STRING, "t": cel.Type.STRING, "o": cel.Type.INT},
        extensions=[ext_strings.ExtStrings()],
    )
    ours = environment()
    rng = random.Random(20261126)
    alphabet = ["a", "b", "é", "😀", " "]
    samples = [("", ""), ("", "a"), ("a", ""), ("abc", "abc"), ("abc", "abcd"), ("hello mellow", "ello")]
    samples += [
        (
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7))),
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3))),
        )
        for _ in range(150)
    ]
    checked = 0
    for s, t in samples:
        for offset in (None, -1, 0, 1, 2, len(s) - 1, len(s), len(s) + 1):
            for fn in ("indexOf", "lastIndexOf"):
                call = f"s.{fn}(t)" if offset is None else f"s.{fn}(t, o)"
                want = oracle.compile(call).eval(oracle.Activation({"s": s, "t": t, "o": offset or 0}))
                got = ours.evaluate(
                    call.replace("s.", "object.s.").replace("(t", "(object.t").replace(", o", ", object.o"),
                    ours.activation({"object": {"s": s, "t": t, "o": offset or 0}}),
                )
                if want.type() == cel.Type.ERROR:
                    assert got.error is not None, (call, s, t, offset, got)
                else:
                    assert got.error is None and got.value == want.plain_value(), (call, s, t, offset, got)
                checked += 1
    assert checked > 2000


def test_list_index_of() -> None:
    env = environment()
    act = env.activation({"object": {"xs": [1, True, "a", 1]}})
    assert env.evaluate("[1, 2, 3].indexOf(2)", act).value == 1
    assert env.evaluate("object.xs.indexOf(1)", act).value == 0
    assert env.evaluate("object.xs.lastIndexOf(1)", act).value == 3
    assert env.evaluate("object.xs.indexOf(true)", act).value == 1  # a bool is not the number 1
    assert env.evaluate("['x'].indexOf('y')", act).value == -1
    assert env.evaluate("'abc'.indexOf('c')", act).value == 2
