"""Kubernetes' CEL environment on cel-expr-python (Google's CEL runtime; the choice and its measurements:
docs/cel-engine-choice.md).

What is in it, as the API server's ValidatingAdmissionPolicy environment has it
(k8s.io/apiserver/pkg/cel/environment/base.go, library/*.go):

- the variables ``object``, ``oldObject``, ``request``, ``params``, ``namespaceObject`` and
  ``variables`` (dynamically typed, as for objects without a schema);
- the standard macros and functions, and the extensions strings (with ``format``), math, optional
  types, bindings (``cel.bind``) and encoders (base64);
- Kubernetes' list library (``isSorted``, ``sum``, ``min``, ``max``; not ``indexOf`` and
  ``lastIndexOf`` on lists, whose names the strings extension holds in this runtime), regex library
  (``find``, ``findAll``) and cel-go's sets (``sets.contains``, ``sets.intersects``,
  ``sets.equivalent``).

- Kubernetes' quantity library: ``quantity(s)``, ``isQuantity(s)`` and, on a Quantity, ``isInteger``,
  ``asInteger``, ``asApproximateFloat``, ``sign``, ``add``, ``sub``, ``isLessThan``,
  ``isGreaterThan``, ``compareTo`` (exact arithmetic: a Quantity is a reduced fraction, carried as a
  protobuf message since the runtime's Python functions return only CEL values).

- Kubernetes' ip and cidr libraries (``ip``, ``isIP``, ``ip.isCanonical``, ``family``, ``isUnspecified``,
  ``isLoopback``, ``isLinkLocalMulticast``, ``isLinkLocalUnicast``, ``isGlobalUnicast``; ``cidr``,
  ``isCIDR``, ``containsIP``, ``containsCIDR``, ``ip()``, ``masked``, ``prefixLength``; Go's net/netip
  semantics: no zones, no IPv4-mapped IPv6, "global unicast" includes private ranges) and url library
  (``url``, ``isURL``, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``, ``getEscapedPath``,
  ``getQuery``).

- Kubernetes' semver library (1.33): ``semver(s[, normalize])``, ``isSemver(s[, normalize])`` and, on a
  Semver, ``major``, ``minor``, ``patch``, ``isLessThan``, ``isGreaterThan``, ``compareTo`` (blang/semver's
  parsing and precedence; normalization as Kubernetes' normalizeAndParse).
- Kubernetes' image library (1.33): ``image(s)``, ``isImage(s)`` and, on an Image, ``containsDigest``,
  ``registry``, ``repository``, ``tag``, ``digest``, ``identifier`` (go-containerregistry's
  ParseReference, default options).
- Kubernetes' format library (1.31): ``format.<name>()``, ``format.named(name)``,
  ``<Format>.validate(s)``, with apimachinery's messages; its optionals come from a rewrite of the
  expression (``rewrite``), since a Python function cannot return one in this runtime.
- Kubernetes' list ``indexOf``/``lastIndexOf`` (the strings extension's names: both are served by
  ``rewrite``, strings exactly as the extension does);
- two-variable comprehensions (1.32: ``all``, ``exists``, ``existsOne``, ``transformList``,
  ``transformMap``, ``transformMapEntry`` with an index or key and a value), spelled by ``rewrite``
  with one-variable macros and ``cel.bind``, since macros cannot be added from Python.
- cel-go's lists extension, version 3, which Kubernetes' base environment enables: ``lists.range``,
  ``slice``, ``flatten``, ``distinct``, ``reverse``, ``sort`` and the ``sortBy`` macro (the last two
  names through ``rewrite``: ``reverse`` is also the strings extension's, ``sortBy`` a macro).
- Kubernetes' authorizer library, answered by the gate (below).

What differs from the API server, never as a pass:

- ``string()`` of an IP or CIDR held in a dyn value (a variable of ``variables``, a field) is an
  evaluation error (a violation under failurePolicy Fail): the runtime takes one declaration per
  function name and ``string`` is a builtin, so only the calls the checker reports as applied to an
  IP or a CIDR are rewritten (``Environment._network_strings``);
- an expression using anything else the environment lacks does not compile, and the policy is
  reported as not evaluated.

The authorizer library is declared here and answered by the gate (policies/frameworks/vap.py: from the RBAC
objects it knows); a check the gate cannot answer is an UNDECIDABLE error, reported as not evaluated.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables")
#: identifiers of libraries stockade cannot answer: an expression naming one is not evaluated
UNSUPPORTED: tuple[str, ...] = ()
#: an error whose message starts so is a question the gate cannot answer (the authorizer without a
#: requesting user, or RBAC objects the gate does not all know): the policy is reported as not
#: evaluated, never decided on a guess
UNDECIDABLE = "stockade: not decidable: "
#: token -> decide(check message, verb) -> (allowed, reason); allowed None when it cannot be told.
#: The gate registers one per evaluation (policies/frameworks/vap.py) and the `authorizer` variable names it.
AUTHORIZERS: dict[str, Any] = {}


#: the checker's error for ``string()`` of an IP or a CIDR, with the call's line and column
_NETWORK_STRING_ERROR = re.compile(
    r"<input>:(\d+):(\d+): found no matching overload for 'string' applied to '\(k8s\.(?:IP|CIDR)\)'"
)


class CelError(ValueError):
    """An expression that does not compile (the message is the compiler's, one line)."""


@dataclass(frozen=True)
class Outcome:
    """An evaluation: a value, or an error (`error` set, `value` None)."""

    value: Any = None
    error: str | None = None


def _is_sorted(xs: list[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(xs))


def _find(s: str, pattern: str) -> str:
    """Kubernetes' regex library runs RE2 (linear time): so does this, never a backtracking engine."""
    import re2  # type: ignore[import-untyped]  # loaded with the first regex call, not by every scan

    match = re2.search(pattern, s)
    return str(match.group(0)) if match else ""


def _find_all(s: str, pattern: str) -> list[str]:
    import re2

    return [str(m.group(0)) for m in re2.finditer(pattern, s)]


def _find_all_n(s: str, pattern: str, limit: int) -> list[str]:
    found = _find_all(s, pattern)
    return found if limit < 0 else found[:limit]


def _sum(xs: list[Any]) -> Any:
    return sum(xs) if xs else 0


def _min(xs: list[Any]) -> Any:
    if not xs:
        raise ValueError("min called on empty list")
    return min(xs)


def _max(xs: list[Any]) -> Any:
    if not xs:
        raise ValueError("max called on empty list")
    return max(xs)


_QUANTITY = re.compile(
    r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$"
)
_SUFFIX: dict[str, Fraction | int] = {
    "": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3, "M": 10**6,
    "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
    "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


def parse_quantity(text: str) -> Fraction:
    """A Kubernetes resource.Quantity's value (apimachinery's grammar: sign, digits, a binary or decimal
    SI suffix or a decimal exponent); ValueError as Kubernetes' "quantities must match"."""
    match = _QUANTITY.match(text.strip()) if isinstance(text, str) else None
    if match is None or len(text) > 64:
        raise ValueError(
            "quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
        )
    sign, number, suffix, exponent = match.groups()
    scale: Fraction = Fraction(10) ** int(exponent) if exponent else Fraction(_SUFFIX[suffix or ""])
    value = Fraction(number) * scale
    return -value if sign == "-" else value


class Environment:
    """One compiled environment; `compile` is cached per expression text."""

    def __init__(self) -> None:
        from cel_expr_python import cel  # type: ignore[import-untyped]
        from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings  # type: ignore[import-untyped]

        self._cel = cel
        t = cel.Type
        dyn_list = t.List(t.DYN)

        def member(name: str, overload: str, ret: Any, args: list[Any], impl: Any) -> Any:
            return cel.FunctionDecl(name, [cel.Overload(overload, ret, args, is_member=True, impl=impl)])

        def function(name: str, overload: str, ret: Any, args: list[Any], impl: Any) -> Any:
            return cel.FunctionDecl(name, [cel.Overload(overload, ret, args, impl=impl)])

        functions = [
            member("isSorted", "list_is_sorted", t.BOOL, [dyn_list], _is_sorted),
            member("sum", "list_sum", t.DYN, [dyn_list], _sum),
            member("min", "list_min", t.DYN, [dyn_list], _min),
            member("max", "list_max", t.DYN, [dyn_list], _max),
            member("find", "string_find", t.STRING, [t.STRING, t.STRING], _find),
            cel.FunctionDecl(
                "findAll",
                [
                    cel.Overload(
                        "string_find_all",
                        t.List(t.STRING),
                        [t.STRING, t.STRING],
                        is_member=True,
                        impl=_find_all,
                    ),
                    cel.Overload(
                        "string_find_all_n",
                        t.List(t.STRING),
                        [t.STRING, t.STRING, t.INT],
                        is_member=True,
                        impl=_find_all_n,
                    ),
                ],
            ),
            function(
                "sets.contains",
                "sets_contains",
                t.BOOL,
                [dyn_list, dyn_list],
                lambda a, b: all(x in a for x in b),
            ),
            function(
                "sets.intersects",
                "sets_intersects",
                t.BOOL,
                [dyn_list, dyn_list],
                lambda a, b: any(x in a for x in b),
            ),
            function(
                "sets.equivalent",
                "sets_equivalent",
                t.BOOL,
                [dyn_list, dyn_list],
                lambda a, b: all(x in b for x in a) and all(x in a for x in b),
            ),
        ]
        pool, quantity_type, self._quantity = _quantity_message()
        functions += _merged(
            cel,
            _quantity_functions(cel, quantity_type, self._quantity)
            + _network_functions(cel)
            + _semver_functions(cel)
            + _image_functions(cel)
            + _format_functions(cel)
            + _comprehension_functions(cel)
            + _index_functions(cel)
            + _lists_functions(cel),
        )
        functions += _merged(cel, _authorizer_functions(cel))
        self._authorizer = _NETWORK_TYPES["Authorizer"]
        self._check = _NETWORK_TYPES["AuthzCheck"]
        self._env = cel.NewEnv(
            pool,
            variables={**{name: t.DYN for name in VARIABLES}, "authorizer": t("k8s.Authorizer")},
            extensions=[
                ext_strings.ExtStrings(),
                ext_math.ExtMath(),
                ext_optional.ExtOptional(),
                ext_bindings.ExtBindings(),
                ext_encoders.ExtEncoders(),
            ],
            functions=functions,
        )
        self._programs: dict[str, Any] = {}

    def compile(self, expression: str) -> Any:
        """The compiled program; CelError with the compiler's first line when it does not compile."""
        program = self._programs.get(expression)
        if program is None:
            for name in UNSUPPORTED:
                if re.search(rf"\b{name}\b", expression):
                    raise CelError(f"the {name} library is not available outside the API server")
            text = rewrite(expression)
            try:
                program = self._env.compile(text)
            except Exception as exc:  # the runtime raises RuntimeError("INVALID_ARGUMENT: ERROR: ...")
                typed = self._network_strings(text) if _NETWORK_STRING_ERROR.search(str(exc)) else None
                if typed is None:
                    raise CelError(_first_line(str(exc))) from None
                try:
                    program = self._env.compile(typed)
                except Exception as again:
                    raise CelError(_first_line(str(again))) from None
            self._programs[expression] = program
        return program

    def _network_strings(self, text: str) -> str | None:
        """Compile `text`, rewriting each ``string(x)`` the checker reports as applied to an IP or a
        CIDR into ``stockade_network_string(x)``: the runtime's builtin ``string`` takes no second
        declaration, so only those calls change (found by the compiler's own positions, macro
        variables included). None when no call was reported."""
        changed = False
        for _ in range(32):
            try:
                self._env.compile(text)
                return text if changed else None
            except Exception as exc:
                found = _NETWORK_STRING_ERROR.findall(str(exc))
            if not found:
                return text if changed else None
            starts = [0, *(m.end() for m in re.finditer("\n", text))]
            for line, column in sorted({(int(a), int(b)) for a, b in found}, reverse=True):
                at = starts[line - 1] + column - 1  # the call's "(": `string` ends there
                if text[at - len("string") : at] != "string":
                    return None
                text = text[: at - len("string")] + "stockade_network_string" + text[at:]
                changed = True
        return None

    def activation(self, values: Mapping[str, Any]) -> Any:
        authorizer = values.get("authorizer")
        if authorizer is None:
            authorizer = self._authorizer(token="")  # no gate answers it: every check is undecidable
        return self._env.Activation(
            {**{name: values.get(name) for name in VARIABLES}, "authorizer": authorizer}
        )

    def authorizer(self, token: str, request: Mapping[str, Any]) -> Any:
        """The `authorizer` variable of one evaluation: checks go to AUTHORIZERS[token]; its
        ``requestResource`` is the request's own resource."""
        raw = request.get("resource")
        resource: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        return self._authorizer(
            token=token,
            requestResource=self._check(
                token=token,
                group=str(resource.get("group") or ""),
                resource=str(resource.get("resource") or ""),
                subresource=str(request.get("subResource") or ""),
                ns=str(request.get("namespace") or ""),
                obj_name=str(request.get("name") or ""),
            ),
        )

    def evaluate(self, expression: str, activation: Any) -> Outcome:
        """The expression's value (plain Python), or its error (a CEL error value, or a Python one
        raised by a library function)."""
        program = self.compile(expression)
        try:
            result = program.eval(activation)
        except Exception as exc:
            return Outcome(error=_first_line(str(exc)))
        if result.type() == self._cel.Type.ERROR:
            return Outcome(error=_first_line(str(result.value())))
        return Outcome(value=result.plain_value())


Spec = tuple[str, Any, list[Any], Any, bool]  # overload id, result type, argument types, impl, member


def _decl(cel: Any, name: str, *overloads: Spec) -> tuple[str, list[Spec]]:
    """One function's overloads; the environment merges those of one name from every library."""
    return name, list(overloads)


def _merged(cel: Any, decls: list[tuple[str, list[Spec]]]) -> list[Any]:
    """One declaration per name (the runtime takes no second one: Quantity and Semver both have
    ``compareTo``). Overloads the runtime cannot tell apart (the same arity with message types in the
    same places) share one implementation that dispatches on the arguments' message classes; the
    checker still sees each typed overload."""
    by_name: dict[str, list[Spec]] = {}
    for name, overloads in decls:
        by_name.setdefault(name, []).extend(overloads)
    out = []
    for name, specs in by_name.items():
        groups: dict[tuple[Any, ...], list[Spec]] = {}
        for spec in specs:
            shape = (spec[4], tuple("message" if a.is_message() else a.name() for a in spec[2]))
            groups.setdefault(shape, []).append(spec)
        overloads = []
        for group in groups.values():
            impl = group[0][3] if len(group) == 1 else _dispatch(group)
            for i, (oid, ret, args, _, member) in enumerate(group):
                if i == 0:
                    overloads.append(cel.Overload(oid, ret, args, is_member=member, impl=impl))
                else:  # the runtime calls the first one's (dispatching) implementation
                    overloads.append(cel.Overload(oid, ret, args, is_member=member))
        out.append(cel.FunctionDecl(name, overloads))
    return out


def _dispatch(group: list[Spec]) -> Any:
    """The implementation of the overload whose message argument types the call's arguments have."""
    choices = [
        ([_MESSAGE_CLASSES.get(a.name()) if a.is_message() else None for a in args], impl)
        for _, _, args, impl, _ in group
    ]

    def call(*values: Any) -> Any:
        for classes, impl in choices:
            if all(c is None or isinstance(v, c) for c, v in zip(classes, values, strict=False)):
                return impl(*values)
        raise ValueError("no matching overload")

    return call


def _parses(parse: Any) -> Any:
    """The ``isX(string)`` of a library whose ``x(string)`` is `parse` (ValueError when malformed)."""

    def check(text: str) -> bool:
        try:
            parse(text)
        except ValueError:
            return False
        return True

    return check


def _quantity_message() -> tuple[Any, Any, Any]:
    """(descriptor pool, the CEL type, the message class) of ``k8s.Quantity {string num; string den}``."""
    from cel_expr_python import cel
    from google.protobuf import (  # type: ignore[import-untyped]
        descriptor_pb2,
        descriptor_pool,
        message_factory,
    )

    proto = descriptor_pb2.FileDescriptorProto(name="stockade_k8s_cel.proto", package="k8s", syntax="proto3")
    message = proto.message_type.add(name="Quantity")
    message.field.add(name="num", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
    message.field.add(name="den", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING)
    for name in ("IP", "CIDR", "URL", "Semver", "Image", "Format"):  # each carries its text (a name)
        proto.message_type.add(name=name).field.add(
            name="text", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING
        )
    string, boolean = (
        descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    )
    check = proto.message_type.add(name="AuthzCheck")  # a group/resource (or path) check being built
    for number, field in enumerate(
        ("token", "sa_namespace", "sa_name", "group", "resource", "subresource", "ns", "obj_name", "path"), 1
    ):
        check.field.add(name=field, number=number, type=string)
    check.field.add(name="is_path", number=10, type=boolean)
    authorizer = proto.message_type.add(name="Authorizer")
    for number, field in enumerate(("token", "sa_namespace", "sa_name"), 1):
        authorizer.field.add(name=field, number=number, type=string)
    authorizer.field.add(
        name="requestResource",
        number=4,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        type_name=".k8s.AuthzCheck",
    )
    decision = proto.message_type.add(name="AuthzDecision")
    decision.field.add(name="allowed", number=1, type=boolean)
    decision.field.add(name="reason", number=2, type=string)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("k8s.Quantity"))
    classes = {
        n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"k8s.{n}"))
        for n in (
            "IP",
            "CIDR",
            "URL",
            "Semver",
            "Image",
            "Format",
            "Authorizer",
            "AuthzCheck",
            "AuthzDecision",
        )
    }
    _NETWORK_TYPES.update(classes)
    _MESSAGE_CLASSES.update({f"k8s.{n}": c for n, c in classes.items()})
    _MESSAGE_CLASSES["k8s.Quantity"] = cls
    return pool, cel.Type("k8s.Quantity"), cls


def _quantity_functions(cel: Any, qt: Any, cls: Any) -> list[tuple[str, list[Spec]]]:
    t = cel.Type

    def make(value: Fraction) -> Any:
        return cls(num=str(value.numerator), den=str(value.denominator))

    def value(q: Any) -> Fraction:
        return Fraction(int(q.num), int(q.den or "1"))

    def as_integer(q: Any) -> int:
        v = value(q)
        if v.denominator != 1 or not -(2**63) <= v.numerator < 2**63:
            raise ValueError("cannot convert value to integer")
        return int(v)

    def cmp(a: Any, b: Any) -> int:
        x, y = value(a), value(b)
        return (x > y) - (x < y)

    def decl(name: str, *overloads: Spec) -> tuple[str, list[Spec]]:
        return _decl(cel, name, *overloads)

    return [
        decl("quantity", ("string_to_quantity", qt, [t.STRING], lambda s: make(parse_quantity(s)), False)),
        decl("isQuantity", ("is_quantity_string", t.BOOL, [t.STRING], _parses(parse_quantity), False)),
        decl("isInteger", ("quantity_is_integer", t.BOOL, [qt], _parses(as_integer), True)),
        decl("asInteger", ("quantity_as_integer", t.INT, [qt], as_integer, True)),
        decl("asApproximateFloat", ("quantity_as_float", t.DOUBLE, [qt], lambda q: float(value(q)), True)),
        decl("sign", ("quantity_sign", t.INT, [qt], lambda q: (value(q) > 0) - (value(q) < 0), True)),
        decl(
            "add",
            ("quantity_add", qt, [qt, qt], lambda a, b: make(value(a) + value(b)), True),
            ("quantity_add_int", qt, [qt, t.INT], lambda a, b: make(value(a) + b), True),
        ),
        decl(
            "sub",
            ("quantity_sub", qt, [qt, qt], lambda a, b: make(value(a) - value(b)), True),
            ("quantity_sub_int", qt, [qt, t.INT], lambda a, b: make(value(a) - b), True),
        ),
        decl("isLessThan", ("quantity_less_than", t.BOOL, [qt, qt], lambda a, b: cmp(a, b) < 0, True)),
        decl("isGreaterThan", ("quantity_greater_than", t.BOOL, [qt, qt], lambda a, b: cmp(a, b) > 0, True)),
        decl("compareTo", ("quantity_compare_to", t.INT, [qt, qt], cmp, True)),
    ]


_NETWORK_TYPES: dict[str, Any] = {}
_MESSAGE_CLASSES: dict[str, Any] = {}  # CEL type name -> protobuf class


def _parse_ip(text: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """netip.ParseAddr as Kubernetes' ip() uses it: no zone, no IPv4-mapped IPv6 address."""
    if not isinstance(text, str) or "%" in text:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return addr


def _parse_cidr(text: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    """netip.ParsePrefix: an address (host bits allowed) and a prefix length."""
    if not isinstance(text, str) or "/" not in text or "%" in text:
        raise ValueError(f"network address {text!r} parse error during conversion from string")
    try:
        iface = ipaddress.ip_interface(text)
    except ValueError:
        raise ValueError(f"network address {text!r} parse error during conversion from string") from None
    if isinstance(iface, ipaddress.IPv6Interface) and iface.ip.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return iface


def _global_unicast(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's IsGlobalUnicast: not unspecified, loopback, multicast, link-local or IPv4 broadcast
    (private ranges are global unicast in Go, unlike Python's is_global)."""
    if addr.is_unspecified or addr.is_loopback or addr.is_multicast or addr.is_link_local:
        return False
    return not (isinstance(addr, ipaddress.IPv4Address) and addr == ipaddress.IPv4Address("255.255.255.255"))


def _network_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    t = cel.Type
    ip_t, cidr_t, url_t = t("k8s.IP"), t("k8s.CIDR"), t("k8s.URL")
    IP, CIDR, URL = (_NETWORK_TYPES[n] for n in ("IP", "CIDR", "URL"))

    def ip(text: str) -> Any:
        return IP(text=str(_parse_ip(text)))

    def cidr(text: str) -> Any:
        iface = _parse_cidr(text)
        return CIDR(text=f"{iface.ip}/{iface.network.prefixlen}")

    def addr(m: Any) -> Any:
        return ipaddress.ip_address(m.text)

    def net(m: Any) -> Any:
        return ipaddress.ip_interface(m.text).network

    def contains_ip(c: Any, other: Any) -> bool:
        a = _parse_ip(other) if isinstance(other, str) else addr(other)
        return a.version == net(c).version and a in net(c)

    def contains_cidr(c: Any, other: Any) -> bool:
        n = _parse_cidr(other).network if isinstance(other, str) else net(other)
        return bool(n.version == net(c).version and n.subnet_of(net(c)))

    def parsed_url(text: str) -> Any:
        parts = urllib.parse.urlsplit(text)
        absolute = parts.scheme and (parts.netloc or text.startswith(f"{parts.scheme}:/"))
        if not absolute and not text.startswith("/"):
            raise ValueError(f"URL parse error during conversion from string: {text!r}")
        return URL(text=text)

    def split(m: Any) -> Any:
        return urllib.parse.urlsplit(m.text)

    def decl(name: str, *overloads: Spec) -> tuple[str, list[Spec]]:
        return _decl(cel, name, *overloads)

    return [
        decl(
            "stockade_network_string",
            ("stockade_ip_string", t.STRING, [ip_t], lambda m: m.text, False),
            ("stockade_cidr_string", t.STRING, [cidr_t], lambda m: m.text, False),
        ),
        decl(
            "ip",
            ("string_to_ip", ip_t, [t.STRING], ip, False),
            ("cidr_ip", ip_t, [cidr_t], lambda m: IP(text=m.text.split("/")[0]), True),
        ),
        decl("isIP", ("is_ip_string", t.BOOL, [t.STRING], _parses(_parse_ip), False)),
        decl(
            "ip.isCanonical", ("ip_is_canonical", t.BOOL, [t.STRING], lambda s: str(_parse_ip(s)) == s, False)
        ),
        decl("family", ("ip_family", t.INT, [ip_t], lambda m: addr(m).version, True)),
        decl("isUnspecified", ("ip_is_unspecified", t.BOOL, [ip_t], lambda m: addr(m).is_unspecified, True)),
        decl("isLoopback", ("ip_is_loopback", t.BOOL, [ip_t], lambda m: addr(m).is_loopback, True)),
        decl(
            "isLinkLocalMulticast",
            (
                "ip_is_link_local_multicast",
                t.BOOL,
                [ip_t],
                lambda m: (
                    addr(m).is_multicast
                    and (
                        addr(m) in ipaddress.ip_network("224.0.0.0/24")
                        or addr(m) in ipaddress.ip_network("ff02::/16")
                    )
                ),
                True,
            ),
        ),
        decl(
            "isLinkLocalUnicast",
            ("ip_is_link_local_unicast", t.BOOL, [ip_t], lambda m: addr(m).is_link_local, True),
        ),
        decl(
            "isGlobalUnicast",
            ("ip_is_global_unicast", t.BOOL, [ip_t], lambda m: _global_unicast(addr(m)), True),
        ),
        decl("cidr", ("string_to_cidr", cidr_t, [t.STRING], cidr, False)),
        decl("isCIDR", ("is_cidr_string", t.BOOL, [t.STRING], _parses(_parse_cidr), False)),
        decl(
            "containsIP",
            ("cidr_contains_ip_ip", t.BOOL, [cidr_t, ip_t], contains_ip, True),
            ("cidr_contains_ip_string", t.BOOL, [cidr_t, t.STRING], contains_ip, True),
        ),
        decl(
            "containsCIDR",
            ("cidr_contains_cidr", t.BOOL, [cidr_t, cidr_t], contains_cidr, True),
            ("cidr_contains_cidr_string", t.BOOL, [cidr_t, t.STRING], contains_cidr, True),
        ),
        decl("masked", ("cidr_masked", cidr_t, [cidr_t], lambda m: CIDR(text=str(net(m))), True)),
        decl("prefixLength", ("cidr_prefix_length", t.INT, [cidr_t], lambda m: net(m).prefixlen, True)),
        decl("url", ("string_to_url", url_t, [t.STRING], parsed_url, False)),
        decl("isURL", ("is_url_string", t.BOOL, [t.STRING], _parses(parsed_url), False)),
        decl("getScheme", ("url_get_scheme", t.STRING, [url_t], lambda m: split(m).scheme, True)),
        decl(
            "getHost", ("url_get_host", t.STRING, [url_t], lambda m: split(m).netloc.rpartition("@")[2], True)
        ),
        decl("getHostname", ("url_get_hostname", t.STRING, [url_t], lambda m: split(m).hostname or "", True)),
        decl(
            "getPort",
            ("url_get_port", t.STRING, [url_t], lambda m: str(split(m).port) if split(m).port else "", True),
        ),
        decl("getEscapedPath", ("url_get_escaped_path", t.STRING, [url_t], lambda m: split(m).path, True)),
        decl(
            "getQuery",
            (
                "url_get_query",
                t.Map(t.STRING, t.List(t.STRING)),
                [url_t],
                lambda m: urllib.parse.parse_qs(split(m).query, keep_blank_values=True),
                True,
            ),
        ),
    ]


_SEMVER_IDENT = re.compile(r"[0-9A-Za-z-]+\Z")


def _semver_number(text: str, what: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"invalid character(s) found in {what} number {text!r}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{what} number must not contain leading zeroes {text!r}")
    value = int(text)
    if value >= 2**64:
        raise ValueError(f"{what} number {text!r} is out of range")
    return value


def parse_semver(text: str) -> tuple[int, int, int, tuple[int | str, ...]]:
    """blang/semver v4's Parse, which Kubernetes' semver library uses: MAJOR.MINOR.PATCH, then an
    optional ``-pre.release`` and ``+build`` (ignored in comparisons); no leading zeroes in numbers."""
    if not text:
        raise ValueError("version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("no Major.Minor.Patch elements found")
    major, minor = _semver_number(parts[0], "major"), _semver_number(parts[1], "minor")
    rest, build = parts[2], ""
    if "+" in rest:
        rest, build = rest.split("+", 1)
    pre = ""
    if "-" in rest:
        rest, pre = rest.split("-", 1)
    patch = _semver_number(rest, "patch")
    release: list[int | str] = []
    for ident in pre.split(".") if "-" in parts[2].split("+", 1)[0] else ():
        if not _SEMVER_IDENT.match(ident):
            raise ValueError(f"invalid prerelease identifier {ident!r}")
        release.append(_semver_number(ident, "prerelease") if ident.isdigit() else ident)
    for ident in build.split(".") if "+" in parts[2] else ():
        if not _SEMVER_IDENT.match(ident):
            raise ValueError(f"invalid build identifier {ident!r}")
    return major, minor, patch, tuple(release)


def normalize_semver(text: str) -> str:
    """Kubernetes' normalizeAndParse: no "v" prefix, no leading zeroes, missing minor/patch as 0."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver_cmp(a: str, b: str) -> int:
    x, y = parse_semver(a), parse_semver(b)
    if x[:3] != y[:3]:
        return -1 if x[:3] < y[:3] else 1
    px, py = x[3], y[3]
    if not px or not py:  # a release is greater than any of its prereleases
        return (not px) - (not py)
    for i, j in zip(px, py, strict=False):
        if i == j:
            continue
        if isinstance(i, int) != isinstance(j, int):
            return -1 if isinstance(i, int) else 1  # numeric identifiers sort first
        return -1 if i < j else 1  # type: ignore[operator]
    return (len(px) > len(py)) - (len(px) < len(py))


def _semver_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    """Kubernetes' semver library (semverlib.go, 1.33): ``semver(s[, normalize])``,
    ``isSemver(s[, normalize])``, and on a Semver ``major``, ``minor``, ``patch``, ``isLessThan``,
    ``isGreaterThan``, ``compareTo``."""
    t = cel.Type
    sv = t("k8s.Semver")
    Semver = _NETWORK_TYPES["Semver"]

    def make(text: str, normalize: bool = False) -> Any:
        text = normalize_semver(text) if normalize else text
        parse_semver(text)
        return Semver(text=text)

    def valid(text: str, normalize: bool = False) -> bool:
        try:
            make(text, normalize)
        except ValueError:
            return False
        return True

    def part(i: int) -> Any:
        return lambda m: parse_semver(m.text)[i]

    def decl(name: str, *overloads: Spec) -> tuple[str, list[Spec]]:
        return _decl(cel, name, *overloads)

    return [
        decl(
            "semver",
            ("string_to_semver", sv, [t.STRING], make, False),
            ("string_bool_to_semver", sv, [t.STRING, t.BOOL], make, False),
        ),
        decl(
            "isSemver",
            ("is_semver_string", t.BOOL, [t.STRING], valid, False),
            ("is_semver_string_bool", t.BOOL, [t.STRING, t.BOOL], valid, False),
        ),
        decl("major", ("semver_major", t.INT, [sv], part(0), True)),
        decl("minor", ("semver_minor", t.INT, [sv], part(1), True)),
        decl("patch", ("semver_patch", t.INT, [sv], part(2), True)),
        decl(
            "isLessThan",
            ("semver_is_less_than", t.BOOL, [sv, sv], lambda a, b: _semver_cmp(a.text, b.text) < 0, True),
        ),
        decl(
            "isGreaterThan",
            ("semver_is_greater_than", t.BOOL, [sv, sv], lambda a, b: _semver_cmp(a.text, b.text) > 0, True),
        ),
        decl(
            "compareTo",
            ("semver_compare_to", t.INT, [sv, sv], lambda a, b: _semver_cmp(a.text, b.text), True),
        ),
    ]


_TAG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_REPO_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-./")
_REGISTRY_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:[]<>\""
)
_SHA256 = re.compile(r"sha256:[a-f0-9]{64}\Z")
DOCKER_HUB = "index.docker.io"


@dataclass(frozen=True)
class ImageReference:
    registry: str
    repository: str
    tag: str  # "" for a digest reference, even when the text named a tag too
    digest: str

    @property
    def identifier(self) -> str:
        return self.digest or self.tag


def _element(kind: str, text: str, allowed: frozenset[str], low: int, high: int) -> None:
    if not low <= len(text) <= high:
        raise ValueError(f"{kind} must be between {low} and {high} characters in length: {text}")
    if not set(text) <= allowed:
        raise ValueError(f"{kind} can only contain the characters in {''.join(sorted(allowed))!r}: {text}")


def _registry(name: str) -> str:
    """go-containerregistry's NewRegistry: what url.Parse("//"+name) keeps as the host; docker.io and
    no registry mean Docker Hub."""
    if name:
        if any(c in name for c in "#?@%") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
            raise ValueError(f"registries must be valid RFC 3986 URI authorities: {name}")
        if any(c.isascii() and c not in _REGISTRY_CHARS for c in name):
            raise ValueError(f"registries must be valid RFC 3986 URI authorities: {name}")
        if name.startswith("["):
            end = name.rfind("]")
            port = name[end + 1 :] if end >= 0 else None
        else:
            port = name[name.rfind(":") :] if ":" in name else ""
        if port is None or (port and (port[0] != ":" or not all(c.isdigit() for c in port[1:]))):
            raise ValueError(f"registries must be valid RFC 3986 URI authorities: {name}")
    return DOCKER_HUB if name in ("", "docker.io") else name


def _repository(name: str) -> tuple[str, str]:
    """(registry, repository) as NewRepository reads them, Docker Hub's ``library/`` added."""
    if not name:
        raise ValueError("a repository name must be specified")
    first, slash, rest = name.partition("/")
    registry, repo = (first, rest) if slash and ("." in first or ":" in first) else ("", name)
    _element("repository", repo, _REPO_CHARS, 2, 255)
    registry = _registry(registry)
    if registry == DOCKER_HUB and "/" not in repo:
        repo = f"library/{repo}"
    return registry, repo


def _tagged(name: str) -> ImageReference:
    parts = name.split(":")
    tag, base = "", name
    if len(parts) > 1 and "/" not in parts[-1]:
        tag, base = parts[-1], ":".join(parts[:-1])
        if not tag:
            raise ValueError(f"must specify a tag name after the colon: {name}")
        _element("tag", tag, _TAG_CHARS, 1, 128)
    registry, repo = _repository(base)
    return ImageReference(registry, repo, tag or "latest", "")


def parse_image(text: str) -> ImageReference:
    """go-containerregistry's name.ParseReference with default options, which Kubernetes' image
    library uses: a tag reference (``latest`` when none is named), else a digest reference (sha256
    only; a tag next to the digest is checked, then dropped); Docker Hub by default."""
    if text.startswith(("http://", "https://")):
        raise ValueError(f"image reference must not contain a URL scheme: {text}")
    try:
        return _tagged(text)
    except ValueError:
        pass
    parts = text.split("@")
    if len(parts) != 2 or not _SHA256.match(parts[1]):
        raise ValueError(f"could not parse reference: {text}")
    base, digest = parts
    try:
        tagged = _tagged(base)
    except ValueError:
        registry, repo = _repository(base)
    else:
        registry, repo = tagged.registry, tagged.repository
    return ImageReference(registry, repo, "", digest)


def _image_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    """Kubernetes' image library (image.go, 1.33): ``image(s)``, ``isImage(s)`` and, on an Image,
    ``containsDigest``, ``registry``, ``repository``, ``tag``, ``digest``, ``identifier``."""
    t = cel.Type
    im = t("k8s.Image")
    Image = _NETWORK_TYPES["Image"]

    def make(text: str) -> Any:
        parse_image(text)
        return Image(text=text)

    def part(name: str) -> Any:
        return lambda m: getattr(parse_image(m.text), name)

    def decl(name: str, *overloads: Spec) -> tuple[str, list[Spec]]:
        return _decl(cel, name, *overloads)

    return [
        decl("image", ("string_to_image", im, [t.STRING], make, False)),
        decl("isImage", ("is_image_string", t.BOOL, [t.STRING], _parses(parse_image), False)),
        decl(
            "containsDigest",
            ("image_contains_digest", t.BOOL, [im], lambda m: bool(parse_image(m.text).digest), True),
        ),
        decl("registry", ("image_registry", t.STRING, [im], part("registry"), True)),
        decl("repository", ("image_repository", t.STRING, [im], part("repository"), True)),
        decl("tag", ("image_tag", t.STRING, [im], part("tag"), True)),
        decl("digest", ("image_digest", t.STRING, [im], part("digest"), True)),
        decl("identifier", ("image_identifier", t.STRING, [im], part("identifier"), True)),
    ]


# ---- the format library ---------------------------------------------------------------------------
#
# Its two functions return optionals (``format.named(name)``: ?Format; ``<Format>.validate(s)``:
# ?list<string>), which a Python function cannot return in this runtime. So the expression is
# rewritten before it is compiled: ``format.named(A)`` becomes
# ``optional.ofNonZeroValue(stockade_format_named(A))`` (an unknown name is the empty Format, the
# zero value: none), and ``R.validate(A)`` becomes
# ``optional.ofNonZeroValue(R.stockade_format_errors(A))`` (no errors is the empty list: none). Both
# are the values Kubernetes' functions return.

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
_DNS1035_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = rf"({_QUALIFIED_NAME})?"


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's validation.RegexError, word for word (its "', " then " or " included)."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _dns1123_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not re.fullmatch(_DNS1123_LABEL, value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                "and must start and end with an alphanumeric character",
                _DNS1123_LABEL,
                "my-name",
                "123-abc",
            )
        )
    return errs


def _dns1123_subdomain(value: str) -> list[str]:
    errs = [_max_len(253)] if len(value) > 253 else []
    if not re.fullmatch(_DNS1123_SUBDOMAIN, value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                "or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN,
                "example.com",
            )
        )
    return errs


def _dns1035_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not re.fullmatch(_DNS1035_LABEL, value):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
                "an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL,
                "my-name",
                "abc-123",
            )
        )
    return errs


_QUALIFIED_MESSAGE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


def _qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += [f"prefix part {m}" for m in _dns1123_subdomain(prefix)]
    else:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_MESSAGE, _QUALIFIED_NAME, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not re.fullmatch(_QUALIFIED_NAME, name):
        errs.append(
            "name part " + _regex_error(_QUALIFIED_MESSAGE, _QUALIFIED_NAME, "MyName", "my.name", "123-abc")
        )
    return errs


def _label_value(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not re.fullmatch(_LABEL_VALUE, value):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character",
                _LABEL_VALUE,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def _mask_trailing_dash(name: str) -> str:
    """apimachinery's maskTrailingDash, as written: a trailing dash and the character before it
    become one alphanumeric (a generated name's prefix may end in a dash)."""
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def _uri(value: str) -> list[str]:
    """Go's url.ParseRequestURI: an absolute URI or an absolute path."""
    if not value:
        return ['parse "": empty url']
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return [f'parse "{value}": net/url: invalid control character in URL']
    if value.startswith(":"):
        return [f'parse "{value}": missing protocol scheme']
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value) is None and not value.startswith("/"):
        return [f'parse "{value}": invalid URI for request']
    return []


_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?\Z")


def _base64(value: str) -> list[str]:
    import base64
    import binascii

    try:
        base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _date(value: str) -> list[str]:
    import datetime

    try:
        if not _DATE.match(value):
            raise ValueError(value)
        datetime.date.fromisoformat(value)
    except ValueError:
        return ["invalid date"]
    return []


def _datetime(value: str) -> list[str]:
    import datetime

    match = _DATETIME.match(value)
    try:
        if match is None:
            raise ValueError(value)
        datetime.date.fromisoformat(match.group(1))
        hour, minute, second = (int(match.group(i)) for i in (2, 3, 4))
        if hour > 23 or minute > 59 or second > 60:
            raise ValueError(value)
    except ValueError:
        return ["invalid datetime"]
    return []


FORMATS: dict[str, Any] = {
    "dns1123Label": _dns1123_label,
    "dns1123Subdomain": _dns1123_subdomain,
    "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": lambda v: _dns1123_label(_mask_trailing_dash(v)),
    "dns1123SubdomainPrefix": lambda v: _dns1123_subdomain(_mask_trailing_dash(v)),
    "dns1035LabelPrefix": lambda v: _dns1035_label(_mask_trailing_dash(v)),
    "labelValue": _label_value,
    "uri": _uri,
    "uuid": lambda v: [] if _UUID.match(v) else ["does not match the UUID format"],
    "byte": _base64,
    "date": _date,
    "datetime": _datetime,
}


def _format_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    """Kubernetes' format library (format.go, 1.31): ``format.<name>()`` for each named format,
    ``format.named(name)`` and ``<Format>.validate(s)`` (through the rewrite above)."""
    t = cel.Type
    ft = t("k8s.Format")
    Format = _NETWORK_TYPES["Format"]

    def constant(name: str) -> Any:
        return lambda: Format(text=name)

    def errors(f: Any, value: str) -> list[str]:
        return list(FORMATS[f.text](value))

    def named(name: str) -> Any:
        return Format(text=name if name in FORMATS else "")

    out = [
        _decl(cel, f"format.{name}", (f"format_{name}", ft, [], constant(name), False)) for name in FORMATS
    ]
    return [
        *out,
        _decl(cel, "stockade_format_named", ("stockade_format_named", ft, [t.STRING], named, False)),
        _decl(
            cel,
            "stockade_format_errors",
            ("stockade_format_errors", t.List(t.STRING), [ft, t.STRING], errors, True),
        ),
    ]


_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.?")
_TRIPLE = ("'''", '"""')


_LITERAL, _COMMENT = 1, 2


def _in_literals(text: str) -> list[int]:
    """Which characters of a CEL expression are inside string or bytes literals (quotes, triple
    quotes, raw strings, escapes: _LITERAL) or ``//`` comments (_COMMENT); 0 elsewhere."""
    mask = [0] * len(text)
    i = 0
    while i < len(text):
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            for k in range(i, end):
                mask[k] = _COMMENT
            i = end
            continue
        if c not in "'\"":
            i += 1
            continue
        raw = i > 0 and text[i - 1] in "rR"
        quote = text[i : i + 3] if text[i : i + 3] in _TRIPLE else c
        j = i + len(quote)
        while j < len(text) and not text.startswith(quote, j):
            j += 2 if text[j] == "\\" and not raw else 1
        end = min(len(text), j + len(quote))
        for k in range(i, end):
            mask[k] = _LITERAL
        i = end
    return mask


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def _closing(text: str, mask: list[int], open_at: int) -> int:
    """The index of the bracket closing the one at `open_at` (outside literals); -1 if none."""
    depth = 0
    for i in range(open_at, len(text)):
        if mask[i]:
            continue
        if text[i] in _OPEN:
            depth += 1
        elif text[i] in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
    return -1


def _receiver_start(text: str, mask: list[int], end: int) -> int:
    """Where the member-call receiver ending at `end` (exclusive) begins: identifiers, dots, ``?.``,
    literals and balanced calls/indexes, scanned backwards."""
    i = end
    while i > 0:
        if (text[i - 1].isspace() or mask[i - 1] == _COMMENT) and i < len(text) and text[i] == ".":
            # whitespace and comments between a receiver and its `.member` (a chain over lines)
            while i > 0 and (text[i - 1].isspace() or mask[i - 1] == _COMMENT):
                i -= 1
            continue
        if mask[i - 1]:  # a literal: skip it whole
            while i > 0 and mask[i - 1]:
                i -= 1
            continue
        c = text[i - 1]
        if c in _CLOSE:
            depth = 0
            while i > 0:
                i -= 1
                if mask[i]:
                    continue
                if text[i] in _CLOSE:
                    depth += 1
                elif text[i] in _OPEN:
                    depth -= 1
                    if depth == 0:
                        break
            continue
        if c not in _IDENT_CHARS:
            break
        i -= 1
    return i


_REWRITTEN_CALLS = re.compile(
    r"format\.named\(|\.(validate|all|exists|existsOne|exists_one|transformList|transformMap|transformMapEntry"
    r"|indexOf|lastIndexOf|reverse|sortBy)\("
)


def rewrite(expression: str) -> str:
    """What this runtime lacks, spelled with what it has (the format library's optionals and the
    two-variable comprehensions, as described above); other expressions are returned as is."""
    if not _REWRITTEN_CALLS.search(expression):
        return expression
    done: set[int] = set()  # positions of one-variable macros, left as they are
    for n in range(256):  # one call per pass; an expression holds few
        mask = _in_literals(expression)
        for match in _REWRITTEN_CALLS.finditer(expression):
            at = match.start()
            named = match.group(0) == "format.named("
            if mask[at] or at in done or (named and at > 0 and expression[at - 1] in _IDENT_CHARS):
                continue
            open_at = match.end() - 1
            close_at = _closing(expression, mask, open_at)
            if close_at < 0:
                return expression  # unbalanced: the compiler says so
            args = expression[open_at + 1 : close_at]
            start = at if named else _receiver_start(expression, mask, at)
            receiver = expression[start:at]
            if named:
                call = f"optional.ofNonZeroValue(stockade_format_named({args}))"
            elif match.group(1) == "validate":
                call = f"optional.ofNonZeroValue({receiver}.stockade_format_errors({args}))"
            elif match.group(1) == "reverse":
                call = f"{receiver}.stockade_reverse({args})"
            elif match.group(1) == "sortBy":
                split = _split_args(expression, mask, open_at + 1, close_at)
                var = _IDENT.match(split[0]) if len(split) == 2 else None
                if var is None:
                    done.add(at)
                    continue
                r = f"stockade_r{n}"
                keys = f"{r}.map({var.group(1)}, {split[1].strip()})"
                call = f"cel.bind({r}, {receiver}, stockade_sort_by({r}, {keys}))"
            elif match.group(1) in ("indexOf", "lastIndexOf"):
                name = "stockade_index_of" if match.group(1) == "indexOf" else "stockade_last_index_of"
                call = f"{receiver}.{name}({args})"
            else:
                split = _split_args(expression, mask, open_at + 1, close_at)
                two = _two_var(match.group(1), receiver, split, n)
                if two is None:
                    done.add(at)
                    continue
                call = two
            expression = expression[:start] + call + expression[close_at + 1 :]
            done = {d for d in done if d < start}  # positions after the edit moved
            break
        else:
            return expression
    return expression


# ---- two-variable comprehensions (cel-go ext.TwoVarComprehensions, Kubernetes 1.32) ---------------
#
# They are macros, which cannot be added from Python; the rewrite spells each with one-variable
# macros and cel.bind over the range's keys (a list's indexes, a map's keys), evaluating the range
# once: ``R.all(i, v, P)`` becomes
# ``cel.bind(stockade_r0, R, stockade_keys(stockade_r0).all(i, cel.bind(v, stockade_r0[i], P)))``,
# and so for exists, existsOne, transformList, transformMap and transformMapEntry.

_TWO_VAR = {
    "all": (3,),
    "exists": (3,),
    "existsOne": (3,),
    "exists_one": (3,),
    "transformList": (3, 4),
    "transformMap": (3, 4),
    "transformMapEntry": (3, 4),
}
_IDENT = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\Z")


def _split_args(text: str, mask: list[int], start: int, end: int) -> list[str]:
    """The top-level comma-separated arguments of text[start:end]."""
    out, depth, last = [], 0, start
    for i in range(start, end):
        if mask[i]:
            continue
        if text[i] in _OPEN:
            depth += 1
        elif text[i] in _CLOSE:
            depth -= 1
        elif text[i] == "," and depth == 0:
            out.append(text[last:i])
            last = i + 1
    out.append(text[last:end])
    return out


def _two_var(macro: str, receiver: str, args: list[str], n: int) -> str | None:
    """The one-variable spelling of a two-variable comprehension, or None when it is not one."""
    if len(args) not in _TWO_VAR[macro]:
        return None
    first, second = _IDENT.match(args[0]), _IDENT.match(args[1])
    if first is None or second is None:
        return None
    i, v, rest = first.group(1), second.group(1), [a.strip() for a in args[2:]]
    if i == v or "__result__" in (i, v):
        return None  # left to the compiler, which refuses it (as cel-go does)
    r = f"stockade_r{n}"

    def bound(body: str) -> str:
        return f"cel.bind({v}, {r}[{i}], {body})"

    keys = f"stockade_keys({r})"
    if macro in ("all", "exists", "existsOne", "exists_one"):
        body = f"{keys}.{'exists_one' if macro == 'existsOne' else macro}({i}, {bound(rest[0])})"
    else:
        kept = f"{keys}.filter({i}, {bound(rest[0])})" if len(rest) == 2 else keys
        value = bound(rest[-1])
        if macro == "transformList":
            body = f"{kept}.map({i}, {value})"
        elif macro == "transformMap":
            k = f"stockade_k{n}"
            body = f"cel.bind({k}, {kept}, stockade_zip_map({k}, {k}.map({i}, {value})))"
        else:
            body = f"stockade_merge_entries({kept}.map({i}, {value}))"
    return f"cel.bind({r}, {receiver}, {body})"


def _merge_entries(maps: list[Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for entry in maps:
        if not isinstance(entry, dict):
            raise ValueError("transformMapEntry: the transform must give a map")
        for key, value in entry.items():
            if key in out:
                raise ValueError(f"insert failed: key {key!r} already exists")
            out[key] = value
    return out


def _comprehension_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    t = cel.Type
    dyn_list, dyn_map = t.List(t.DYN), t.Map(t.DYN, t.DYN)
    return [
        _decl(
            cel,
            "stockade_keys",
            ("stockade_keys_list", t.List(t.INT), [dyn_list], lambda xs: list(range(len(xs))), False),
            ("stockade_keys_map", dyn_list, [dyn_map], lambda m: list(m.keys()), False),
        ),
        _decl(
            cel,
            "stockade_zip_map",
            (
                "stockade_zip_map",
                dyn_map,
                [dyn_list, dyn_list],
                lambda ks, vs: dict(zip(ks, vs, strict=True)),
                False,
            ),
        ),
        _decl(
            cel,
            "stockade_merge_entries",
            ("stockade_merge_entries", dyn_map, [dyn_list], _merge_entries, False),
        ),
    ]


# ---- indexOf / lastIndexOf on lists and strings ------------------------------------------------------
#
# Kubernetes' list library has ``<list>.indexOf(x)`` and ``lastIndexOf(x)``; the strings extension
# holds those names for strings, and the runtime takes one declaration per name. So ``.indexOf(`` and
# ``.lastIndexOf(`` calls are rewritten to ``stockade_index_of`` / ``stockade_last_index_of``, whose
# overloads cover both: strings as this runtime's strings extension (code-point offsets from 0 to the
# length, outside that an error; an empty substring is found at the offset), lists with CEL equality
# (a bool never equals a number). tests/policies/test_cel.py checks the string overloads against the
# extension's own functions, input for input.


def _cel_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_cel_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _list_index(xs: list[Any], x: Any) -> int:
    return next((i for i, y in enumerate(xs) if _cel_equal(y, x)), -1)


def _list_last_index(xs: list[Any], x: Any) -> int:
    return next((i for i in range(len(xs) - 1, -1, -1) if _cel_equal(xs[i], x)), -1)


def _string_index(s: str, sub: str, offset: int = 0) -> int:
    if offset < 0 or offset > len(s):
        raise ValueError(f"index out of range: {offset}")
    return s.find(sub, offset)


def _string_last_index(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        offset = len(s)
    if offset < 0 or offset > len(s):
        raise ValueError(f"index out of range: {offset}")
    return s.rfind(sub, 0, offset + len(sub))


def _index_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    t = cel.Type
    dyn_list, anything = t.List(t.DYN), t("any")
    return [
        _decl(
            cel,
            "stockade_index_of",
            ("stockade_string_index_of", t.INT, [t.STRING, t.STRING], _string_index, True),
            ("stockade_string_index_of_offset", t.INT, [t.STRING, t.STRING, t.INT], _string_index, True),
            ("stockade_list_index_of", t.INT, [dyn_list, anything], _list_index, True),
        ),
        _decl(
            cel,
            "stockade_last_index_of",
            ("stockade_string_last_index_of", t.INT, [t.STRING, t.STRING], _string_last_index, True),
            (
                "stockade_string_last_index_of_offset",
                t.INT,
                [t.STRING, t.STRING, t.INT],
                _string_last_index,
                True,
            ),
            ("stockade_list_last_index_of", t.INT, [dyn_list, anything], _list_last_index, True),
        ),
    ]


# ---- cel-go's lists extension (ext.Lists, version 3, in Kubernetes' base environment) -------------
#
# ``lists.range(n)``, ``<list>.slice(start, end)``, ``flatten([depth])``, ``distinct()``,
# ``reverse()``, ``sort()`` and the macro ``sortBy(e, key)``. ``reverse`` is also the strings
# extension's, so ``.reverse(`` is rewritten to a function serving both (a string's code points
# reversed, as the extension does), and ``R.sortBy(e, K)`` to ``stockade_sort_by(R, R.map(e, K))``
# with the range evaluated once.


def _slice(xs: list[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise ValueError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise ValueError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(xs):
        raise ValueError(f"cannot slice({start}, {end}), list is length {len(xs)}")
    return xs[start:end]


def _flatten(xs: list[Any], depth: int = 1) -> list[Any]:
    if depth < 0:
        raise ValueError("level must be non-negative")
    out: list[Any] = []
    for x in xs:
        if isinstance(x, list) and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def _distinct(xs: list[Any]) -> list[Any]:
    out: list[Any] = []
    for x in xs:
        if not any(_cel_equal(x, y) for y in out):
            out.append(x)
    return out


def _sort_key(xs: list[Any]) -> Any:
    kinds = {type(x) for x in xs}
    if len(kinds) > 1 or (kinds and not kinds <= {int, float, str, bool, bytes}):
        raise ValueError("list elements must have the same type")
    return xs


def _sorted(xs: list[Any]) -> list[Any]:
    return sorted(_sort_key(xs))


def _sort_by(xs: list[Any], keys: list[Any]) -> list[Any]:
    _sort_key(keys)
    return [x for _, x in sorted(zip(keys, xs, strict=True), key=lambda kx: kx[0])]


def _lists_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    t = cel.Type
    dyn_list = t.List(t.DYN)
    return [
        _decl(
            cel,
            "lists.range",
            ("lists_range", t.List(t.INT), [t.INT], lambda n: list(range(max(n, 0))), False),
        ),
        _decl(cel, "slice", ("list_slice", dyn_list, [dyn_list, t.INT, t.INT], _slice, True)),
        _decl(
            cel,
            "flatten",
            ("list_flatten", dyn_list, [dyn_list], _flatten, True),
            ("list_flatten_depth", dyn_list, [dyn_list, t.INT], _flatten, True),
        ),
        _decl(cel, "distinct", ("list_distinct", dyn_list, [dyn_list], _distinct, True)),
        _decl(cel, "sort", ("list_sort", dyn_list, [dyn_list], _sorted, True)),
        _decl(cel, "stockade_sort_by", ("stockade_sort_by", dyn_list, [dyn_list, dyn_list], _sort_by, False)),
        _decl(
            cel,
            "stockade_reverse",
            ("stockade_string_reverse", t.STRING, [t.STRING], lambda s: s[::-1], True),
            ("stockade_list_reverse", dyn_list, [dyn_list], lambda xs: xs[::-1], True),
        ),
    ]


def _authorizer_functions(cel: Any) -> list[tuple[str, list[Spec]]]:
    """Kubernetes' authorizer library (authz.go): ``authorizer.group(g).resource(r)`` with
    ``subresource``, ``namespace``, ``name``, then ``check(verb)``; ``authorizer.path(p).check(verb)``;
    ``authorizer.serviceAccount(ns, name)`` (checks for that ServiceAccount instead of the requester);
    ``authorizer.requestResource``; on a decision ``allowed()``, ``reason()``, ``errored()``,
    ``error()``. The gate answers each check (AUTHORIZERS); a check it cannot answer is an error
    starting with UNDECIDABLE, which makes the policy "not evaluated". Field and label selectors
    (1.31) are accepted and change nothing, as for the RBAC authorizer, whose answers these are."""
    t = cel.Type
    az, ck, dc = t("k8s.Authorizer"), t("k8s.AuthzCheck"), t("k8s.AuthzDecision")
    Authorizer, Check, Decision = (_NETWORK_TYPES[n] for n in ("Authorizer", "AuthzCheck", "AuthzDecision"))

    def start(a: Any, **fields: Any) -> Any:
        return Check(token=a.token, sa_namespace=a.sa_namespace, sa_name=a.sa_name, **fields)

    def with_field(field: str) -> Any:
        def set_field(c: Any, value: str) -> Any:
            out = Check()
            out.CopyFrom(c)
            setattr(out, field, value)
            return out

        return set_field

    def check(c: Any, verb: str) -> Any:
        decide = AUTHORIZERS.get(c.token)
        if decide is None:
            raise ValueError(f"{UNDECIDABLE}authorizer: no requesting user and no RBAC objects here")
        allowed, reason = decide(c, verb)
        if allowed is None:
            raise ValueError(f"{UNDECIDABLE}authorizer: {reason}")
        return Decision(allowed=allowed, reason=reason)

    def decl(name: str, *overloads: Spec) -> tuple[str, list[Spec]]:
        return _decl(cel, name, *overloads)

    return [
        decl("group", ("authorizer_group", ck, [az, t.STRING], lambda a, g: start(a, group=g), True)),
        decl(
            "path", ("authorizer_path", ck, [az, t.STRING], lambda a, p: start(a, path=p, is_path=True), True)
        ),
        decl(
            "serviceAccount",
            (
                "authorizer_serviceaccount",
                az,
                [az, t.STRING, t.STRING],
                lambda a, ns, name: Authorizer(token=a.token, sa_namespace=ns, sa_name=name),
                True,
            ),
        ),
        decl("resource", ("groupcheck_resource", ck, [ck, t.STRING], with_field("resource"), True)),
        decl(
            "subresource", ("resourcecheck_subresource", ck, [ck, t.STRING], with_field("subresource"), True)
        ),
        decl("namespace", ("resourcecheck_namespace", ck, [ck, t.STRING], with_field("ns"), True)),
        decl("name", ("resourcecheck_name", ck, [ck, t.STRING], with_field("obj_name"), True)),
        # RBAC grants a list or watch whatever its selectors (the RBAC authorizer ignores them), so
        # for the RBAC answers given here they change nothing; their syntax is not checked
        decl("fieldSelector", ("resourcecheck_fieldselector", ck, [ck, t.STRING], lambda c, _: c, True)),
        decl("labelSelector", ("resourcecheck_labelselector", ck, [ck, t.STRING], lambda c, _: c, True)),
        decl("check", ("resourcecheck_check", dc, [ck, t.STRING], check, True)),
        decl("allowed", ("decision_allowed", t.BOOL, [dc], lambda d: d.allowed, True)),
        decl("reason", ("decision_reason", t.STRING, [dc], lambda d: d.reason, True)),
        decl("errored", ("decision_errored", t.BOOL, [dc], lambda d: False, True)),
        decl("error", ("decision_error", t.STRING, [dc], lambda d: "", True)),
    ]


def _first_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else "evaluation error"
    for prefix in ("INVALID_ARGUMENT: ", "ERROR: "):
        first = first.removeprefix(prefix)
    return first[:300]


@cache
def environment() -> Environment:
    """The process's environment (compiled programs are shared; cel-expr-python is thread-safe for
    evaluation of compiled programs)."""
    return Environment()
