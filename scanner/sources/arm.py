"""The ARM template expression language, evaluated as Azure Resource Manager evaluates it.

A template string ``"[fn(args)…]"`` is an expression (``"[[…"`` is the literal text ``"[…"``);
:class:`Scope` evaluates one against a template's parameters (values from a parameters file, else
``defaultValue``) and variables, with the functions templates use in practice: logical (``if``
evaluates only the branch taken, ``and``/``or`` stop early), comparison, string, array and object
functions, ``resourceId`` and friends, ``resourceGroup()``, ``subscription()``, ``environment()``
(the AzureCloud values), ``copyIndex()``, property access and indexing.

Deployment-time facts have stable stand-ins: resource ids are ``/providers/<type>/<name>`` (what
:func:`stockade.scanner.sources.iac.arm_id` gives every template resource, so references match);
the subscription is ``00000000-0000-0000-0000-000000000000`` and the resource group
``resource-group`` in ``resource-group-location``; ``uniqueString()`` and ``guid()`` give
deterministic placeholders that say what they are (``uniquestring-3f2a9c1e``).

What only the deployment decides (``reference()``, ``list*()``, ``utcNow()``, a parameter with no
value, a Key Vault reference, an unknown function) is :class:`Unknown`. Functions handed an unknown
value give an unknown value, unless the answer does not depend on it (``if`` on a known condition,
``or(true, …)``, ``coalesce`` of a known first value). A resource property left unknown is written
as :func:`marker` text, which the ``STK-AZ-*`` rules (``data.stockade.lib.arm.unknown``) treat as the
worst case and quote: "set by an expression stockade cannot evaluate: …".
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stockade.policies.facts.azure import canonical_type
from stockade.policies.model import UNKNOWN_PREFIX, arm_type

SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
RESOURCE_GROUP = "resource-group"
LOCATION = "resource-group-location"
#: environment() in the public cloud (AzureCloud), as the ARM reference lists it
ENVIRONMENT: dict[str, Any] = {
    "name": "AzureCloud",
    "gallery": "https://gallery.azure.com/",
    "graph": "https://graph.windows.net/",
    "portal": "https://portal.azure.com",
    "graphAudience": "https://graph.windows.net/",
    "activeDirectoryDataLake": "https://datalake.azure.net/",
    "batch": "https://batch.core.windows.net/",
    "media": "https://rest.media.azure.net",
    "sqlManagement": "https://management.core.windows.net:8443/",
    "vmImageAliasDoc": (
        "https://raw.githubusercontent.com/Azure/azure-rest-api-specs/master/arm-compute/"
        "quickstart-templates/aliases.json"
    ),
    "resourceManager": "https://management.azure.com/",
    "authentication": {
        "loginEndpoint": "https://login.microsoftonline.com/",
        "audiences": ["https://management.core.windows.net/", "https://management.azure.com/"],
        "tenant": "common",
        "identityProvider": "AAD",
    },
    "suffixes": {
        "acrLoginServer": ".azurecr.io",
        "azureDatalakeAnalyticsCatalogAndJob": "azuredatalakeanalytics.net",
        "azureDatalakeStoreFileSystem": "azuredatalakestore.net",
        "azureFrontDoorEndpointSuffix": "azurefd.net",
        "keyvaultDns": ".vault.azure.net",
        "sqlServerHostname": ".database.windows.net",
        "storage": "core.windows.net",
    },
}


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value only the deployment decides; ``text`` says which expression."""

    text: str


def marker(value: Unknown) -> str:
    return f"{UNKNOWN_PREFIX}{value.text}]"


#: function calls one template file may take (with its nested and linked templates): the largest
#: Azure Verified Module pattern (ai-platform/baseline, 1 MB) takes under 6,000; one built to never
#: finish stops there, its values unknown
EVALUATIONS = 500_000
#: Resource Manager's limits: instances of a copy loop, and integers of range()
MAX_COPIES = 800
MAX_RANGE = 10_000


class ExpressionError(ValueError):
    """Text that is not an expression of the template language (one line, no traceback)."""


# --- parsing -----------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*?)(?=\s*\()"
    r"|(?P<ident>[A-Za-z_$][A-Za-z0-9_$]*)|(?P<punct>[(),.\[\]]))"
)


@dataclass(slots=True)
class _Lit:
    value: Any


@dataclass(slots=True)
class _Call:
    name: str
    args: list[Any]
    text: str


@dataclass(slots=True)
class _Prop:
    target: Any
    key: Any  # a node
    text: str


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int, int]] = []
        pos = 0
        while pos < len(text):
            if not text[pos:].strip():
                break
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                raise ExpressionError(f"unexpected {text[pos : pos + 10]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind), m.start(kind), m.end()))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str, int, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, punct: str | None = None) -> tuple[str, str, int, int]:
        tok = self.peek()
        if tok is None or (punct is not None and tok[1] != punct):
            raise ExpressionError(f"expected {punct or 'more'} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        node = self.expr()
        if self.peek() is not None:
            raise ExpressionError(f"unexpected {self.peek()[1]!r} in {self.text!r}")  # type: ignore[index]
        return node

    def expr(self) -> Any:
        kind, value, start, _ = self.take()
        node: Any
        if kind == "str":
            node = _Lit(value[1:-1].replace("''", "'"))
        elif kind == "num":
            node = _Lit(float(value) if "." in value else int(value))
        elif kind == "name":
            self.take("(")
            args: list[Any] = []
            if self.peek() is not None and self.peek()[1] == ")":  # type: ignore[index]
                self.take(")")
            else:
                while True:
                    args.append(self.expr())
                    if self.take()[1] == ")":
                        break
            node = _Call(value.lower(), args, self.text[start : self.tokens[self.i - 1][3]].strip())
        elif kind == "ident" and value.lower() in ("true", "false", "null"):
            node = _Lit({"true": True, "false": False, "null": None}[value.lower()])
        else:
            raise ExpressionError(f"unexpected {value!r} in {self.text!r}")
        while (tok := self.peek()) is not None and tok[1] in (".", "["):
            self.take()
            if tok[1] == ".":
                key_tok = self.take()
                if key_tok[0] not in ("ident", "name"):
                    raise ExpressionError(f"expected a property name in {self.text!r}")
                key: Any = _Lit(key_tok[1])
            else:
                key = self.expr()
                self.take("]")
            node = _Prop(node, key, self.text[start : self.tokens[self.i - 1][3]].strip())
        return node


def _typed(spec: Any, types: Mapping[str, Any], depth: int = 0) -> Any:
    """A parameter's declaration with the user-defined type it names (``"$ref":
    "#/definitions/roleAssignmentType"``, languageVersion 2.0) written in: its ``nullable``."""
    ref = spec.get("$ref") if isinstance(spec, Mapping) else None
    if not isinstance(ref, str) or not ref.startswith("#/definitions/") or depth > 8:
        return spec
    named = types.get(ref.removeprefix("#/definitions/"))
    if not isinstance(named, Mapping):
        return spec
    return {**_typed(named, types, depth + 1), **{k: v for k, v in spec.items() if k != "$ref"}}


def is_expression(value: Any) -> bool:
    return (
        isinstance(value, str)
        and value.startswith("[")
        and value.endswith("]")
        and not value.startswith("[[")
    )


# --- evaluation ---------------------------------------------------------------------------------------


def _lookup(obj: Mapping[str, Any], key: str) -> Any:
    """Object keys are case-insensitive in templates."""
    if key in obj:
        return obj[key]
    low = key.lower()
    for k, v in obj.items():
        if k.lower() == low:
            return v
    raise KeyError(key)


def _placeholder(kind: str, args: list[Any]) -> str:
    digest = hashlib.sha256(json.dumps(args, sort_keys=True, default=str).encode()).hexdigest()
    return f"{kind}-{digest[:8]}" if kind == "uniquestring" else f"guid-{digest[:8]}-{digest[8:12]}"


def _is_type(text: str) -> bool:
    """Whether an argument of ``resourceId`` is the resource type (``Microsoft.Storage/…``)."""
    return not text.startswith(UNKNOWN_PREFIX) and "/" in text and "." in text.split("/", 1)[0]


def _typed_id(args: list[Any]) -> bool:
    """Whether ``resourceId``'s type is known, the unknown arguments after it (names) or before it."""
    return any(isinstance(a, str) and _is_type(a) for a in args)


def resource_id(args: list[Any]) -> str:
    """``resourceId([subscription], [group], type, name…)`` as ``/providers/<type>/<names…>``."""
    strs = [str(a) for a in args]
    kinds = [i for i, a in enumerate(strs) if _is_type(a)]
    if not kinds:
        raise ExpressionError("resourceId without a resource type")
    at = kinds[-1]
    kind = canonical_type(strs[at]) if arm_type({"type": strs[at]}) is not None else strs[at]
    namespace, *types = kind.split("/")
    names = [n for a in strs[at + 1 :] for n in a.split("/")]
    parts = [f"/providers/{namespace}"]
    for t, n in zip(types, names, strict=False):
        parts += [t, n]
    return "/".join(parts)


def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, Mapping | list):
        return json.dumps(value, separators=(",", ":"))
    return "" if value is None else str(value)


def _format(fmt: str, args: list[Any]) -> str:
    def one(m: re.Match[str]) -> str:
        value = args[int(m.group(1))]
        spec = m.group(2) or ""
        if spec[:1] in ("D", "d") and isinstance(value, int) and spec[1:].isdigit():
            return str(value).zfill(int(spec[1:]))
        return _to_string(value)

    return (
        re.sub(r"\{(\d+)(?::([^}]*))?\}", one, fmt.replace("{{", "\0").replace("}}", "\1"))
        .replace("\0", "{")
        .replace("\1", "}")
    )


@dataclass
class Scope:
    """One template's parameters and variables (an inner-scope nested template has its own)."""

    parameter_defs: Mapping[str, Any]
    variable_defs: Mapping[str, Any]
    values: Mapping[str, Any] = field(default_factory=dict)  # from a parameters file / the parent
    #: where the template is read from, as ``deployment().properties.templateLink.uri`` gives it to a
    #: template deployed from where it sits (a ``file://`` URI); None: no link (the text alone)
    template_uri: str | None = None
    copy_index: dict[str, int] = field(default_factory=dict)  # loop name ("" for the current) -> index
    _params: dict[str, Any] = field(default_factory=dict)
    _vars: dict[str, Any] = field(default_factory=dict)
    _busy: set[str] = field(default_factory=set)
    #: parameters and variables an expression uses that the template does not declare, where the
    #: deployment would evaluate it (Resource Manager rejects the template): "parameters('x')"
    undeclared: dict[str, None] = field(default_factory=dict)
    #: > 0 while evaluating what the deployment may not evaluate (both branches of an ``if`` on an
    #: unknown condition): a missing declaration met there is not the template's fault for certain
    _speculating: list[int] = field(default_factory=lambda: [0])
    #: the variables of the lambdas being applied, innermost last (``lambdaVariables('x')``)
    _frames: list[dict[str, Any]] = field(default_factory=list)
    #: function calls left for the template file this scope is part of (shared by its nested
    #: templates): a template built to never finish (lambdas over ranges of ranges) stops, unknown
    budget: list[int] = field(default_factory=lambda: [EVALUATIONS])

    @classmethod
    def of(
        cls,
        template: Mapping[str, Any],
        values: Mapping[str, Any] | None = None,
        template_uri: str | None = None,
        budget: list[int] | None = None,
    ) -> Scope:
        params = template.get("parameters")
        variables = template.get("variables")
        types = template.get("definitions")
        if isinstance(params, Mapping) and isinstance(types, Mapping):
            params = {name: _typed(spec, types) for name, spec in params.items()}
        return cls(
            params if isinstance(params, Mapping) else {},
            variables if isinstance(variables, Mapping) else {},
            dict(values or {}),
            template_uri=template_uri,
            budget=budget if budget is not None else [EVALUATIONS],
        )

    def looping(self, name: str, index: int) -> Scope:
        """The same scope inside iteration ``index`` of the copy loop ``name``: everything shared (the
        values resolved, the lambdas applied, the budget…) but the loop's index and the resolutions
        under way."""
        loops = {**self.copy_index, "": index, name.lower(): index}
        return dataclasses.replace(self, copy_index=loops, _busy=set())

    # values

    def resolve(self, value: Any) -> Any:
        """A JSON value with every expression in it evaluated (unknown parts are :class:`Unknown`)."""
        if isinstance(value, str):
            if is_expression(value):
                return self.evaluate(value[1:-1])
            return value[1:] if value.startswith("[[") else value
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for k, v in value.items():
                if k == "copy" and isinstance(v, list) and all(isinstance(c, Mapping) for c in v):
                    out.update(self.property_copies(v))
                else:
                    out[k] = self.resolve(v)
            return out
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def property_copies(self, loops: list[Mapping[str, Any]]) -> dict[str, Any]:
        """``"copy": [{"name", "count", "input"}]`` inside properties or variables: arrays."""
        out: dict[str, Any] = {}
        for loop in loops:
            name = str(loop.get("name") or "")
            count = self.resolve(loop.get("count"))
            if not isinstance(count, int) or isinstance(count, bool) or count > MAX_COPIES:
                out[name] = Unknown(f"copy count of {name}: {loop.get('count')!r}")
                continue
            out[name] = [self.looping(name, i).resolve(loop.get("input")) for i in range(count)]
        return out

    def spelled(self, value: Any) -> Any:
        """``value`` resolved, and where it is a ``format()`` or string ``concat()`` with arguments only
        the deployment gives, the text it builds with those arguments written as markers
        (``Microsoft.Storage/storageAccounts/[unknown: …]``): what a role assignment's ``scope``
        says of the kind of resource it is. Only for a final value, never inside an expression (a
        comparison with such text would be decided where it is not)."""
        resolved = self.resolve(value)
        if not isinstance(resolved, Unknown) or not (isinstance(value, str) and is_expression(value)):
            return resolved
        try:
            node = _Parser(value[1:-1]).parse()
        except ExpressionError:
            return resolved
        if not isinstance(node, _Call) or node.name not in ("format", "concat"):
            return resolved
        args = [self._eval(a) for a in node.args]
        if not all(isinstance(a, str | int | Unknown) and not isinstance(a, bool) for a in args):
            return resolved
        shown = [marker(a) if isinstance(a, Unknown) else a for a in args]
        return _format(str(shown[0]), shown[1:]) if node.name == "format" else "".join(map(str, shown))

    def evaluate(self, text: str) -> Any:
        try:
            node = _Parser(text).parse()
        except ExpressionError as exc:
            return Unknown(f"[{text}] ({exc})")
        return self._eval(node)

    def parameter(self, name: str) -> Any:
        key = name.lower()
        if key in self._params:
            return self._params[key]
        try:
            spec: Any = _lookup(self.parameter_defs, name)
        except KeyError:
            spec = None
        try:
            value = _lookup(self.values, name)
        except KeyError:
            given = False
        else:
            # null given for a parameter with a default is the default (a module's optional value
            # passed on as `tryGet(…)` of what the caller left out)
            given = value is not None or not (isinstance(spec, Mapping) and "defaultValue" in spec)
        if not given:
            if spec is None:
                self._missing(f"parameters('{name}')")
                return Unknown(f"parameters('{name}'): the template declares no such parameter")
            nullable = isinstance(spec, Mapping) and spec.get("nullable") is True
            if not isinstance(spec, Mapping) or ("defaultValue" not in spec and not nullable):
                return Unknown(f"parameters('{name}'): no defaultValue and no value in a parameters file")
            if key in self._busy:
                return Unknown(f"parameters('{name}'): its default refers to itself")
            self._busy.add(key)
            try:
                # a nullable parameter (Bicep's `param x string?`) not given is null
                value = self.resolve(spec["defaultValue"]) if "defaultValue" in spec else None
            finally:
                self._busy.discard(key)
        self._params[key] = value
        return value

    def spent(self) -> bool:
        """One more function call or lambda application of this template's: past its budget?"""
        self.budget[0] -= 1
        return self.budget[0] < 0

    def _missing(self, reference: str) -> None:
        if not self._speculating[0]:
            self.undeclared[reference] = None

    def speculative(self, node: Any) -> Any:
        """``node`` evaluated as what the deployment may not evaluate (:attr:`undeclared`)."""
        self._speculating[0] += 1
        try:
            return self._eval(node)
        finally:
            self._speculating[0] -= 1

    def variable(self, name: str) -> Any:
        key = name.lower()
        if key in self._vars:
            return self._vars[key]
        if key in self._busy:
            return Unknown(f"variables('{name}'): refers to itself")
        if key == "copy" or name.lower() == "copy":
            raise KeyError(name)
        try:
            raw = _lookup(self.variable_defs, name)
        except KeyError:
            loops = self.variable_defs.get("copy")
            if isinstance(loops, list):
                for loop in loops:
                    if isinstance(loop, Mapping) and str(loop.get("name") or "").lower() == key:
                        value = self.property_copies([loop])[str(loop.get("name"))]
                        self._vars[key] = value
                        return value
            self._missing(f"variables('{name}')")
            return Unknown(f"variables('{name}'): the template declares no such variable")
        self._busy.add(key)
        try:
            value = self.resolve(raw)
        finally:
            self._busy.discard(key)
        self._vars[key] = value
        return value

    def _eval(self, node: Any) -> Any:
        if isinstance(node, _Lit):
            return node.value
        if isinstance(node, _Prop):
            target = self._eval(node.target)
            key = self._eval(node.key)
            if isinstance(target, Unknown):
                if target.text.startswith("reference("):  # keep the path: analyzers read its target
                    return Unknown(f"{target.text}{node.text[len(node.target.text) :]}")
                return target
            if isinstance(key, Unknown):
                return key
            try:
                if isinstance(target, list) and isinstance(key, int) and not isinstance(key, bool):
                    return target[key]
                if isinstance(target, Mapping):
                    return _lookup(target, str(key))
            except (KeyError, IndexError):
                if isinstance(key, str) and LOCATION in key:  # a map of regions: resourceGroup().location
                    return Unknown(f"{node.text}: depends on the region the template is deployed to")
                return Unknown(f"{node.text}: no such property or index")
            return Unknown(f"{node.text}: not an object or array")
        assert isinstance(node, _Call)
        return self._call(node)

    def _call(self, node: _Call) -> Any:
        if self.spent():
            return Unknown(f"{node.text} (past {EVALUATIONS:,} function calls in this template)")
        name = node.name
        lazy = _LAZY.get(name)
        if lazy is not None:
            return lazy(self, node)
        args = [self._eval(a) for a in node.args]
        if name == "reference":
            shown = ", ".join(_shown_argument(a) for a in args)
            return Unknown(f"reference({shown})")
        if name.startswith("list") or name in _DEPLOY_TIME:
            return Unknown(node.text)
        if name in _IDS and any(isinstance(a, Unknown) for a in args) and _typed_id(args):
            args = [marker(a) if isinstance(a, Unknown) else a for a in args]
        if name in _BUILDERS:
            # the values it is given are kept, known or not: one unknown leaf (a subnet id from
            # reference()) leaves the rest of the object it builds known and judged
            unknown = _whole(args[0::2] if name == "createobject" else [])
        else:
            unknown = _whole(args)
            if unknown is None and name not in _KEEP_LEAVES:
                unknown = unknown_in(args)
        if unknown is not None:
            return unknown
        fn = _FUNCTIONS.get(name)
        if fn is None:
            return Unknown(f"{node.text} (a function stockade does not evaluate)")
        try:
            return fn(self, args)
        except Exception as exc:  # arguments of a type the function does not take: what ARM refuses too
            return Unknown(f"{node.text} ({type(exc).__name__})")


# --- the functions ------------------------------------------------------------------------------------

_DEPLOY_TIME = frozenset({"utcnow", "newguid", "deployer", "managementgroup", "pickzones", "providers"})
#: functions that build a value of their arguments as they are: an unknown argument is an unknown
#: member of what they build (an unknown key of ``createObject`` is not)
_BUILDERS = frozenset({"createobject", "createarray"})
#: functions whose answer moves the members of objects and arrays without reading them: an unknown
#: member stays an unknown member (an argument that is itself unknown still makes the answer
#: unknown). Every other function given a value holding an unknown member answers unknown.
_KEEP_LEAVES = frozenset(
    {
        "union",
        "concat",
        "array",
        "first",
        "last",
        "take",
        "skip",
        "length",
        "empty",
        "items",
        "objectkeys",
        "tryget",
        "flatten",
        "shallowmerge",
        "contains",  # an object's keys, or an array's members compared (an unknown one may match)
    }
)
#: functions that build a resource id: a name only the deployment gives is written as its marker, as
#: the declaration of a resource so named has it (iac.arm_id), so that what refers to the resource (a
#: private endpoint's target, a role assignment's scope) is known to refer to it
_IDS = frozenset({"resourceid", "subscriptionresourceid", "tenantresourceid", "extensionresourceid"})


def unknown_in(value: Any) -> Unknown | None:
    """The first :class:`Unknown` inside ``value`` (itself, or a member at any depth), or None."""
    if isinstance(value, Unknown):
        return value
    members = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
    for member in members:
        found = unknown_in(member)
        if found is not None:
            return found
    return None


def _shown_argument(value: Any) -> str:
    """An argument of ``reference()`` as its message quotes it (an unknown one by its expression)."""
    if isinstance(value, str):
        return f"'{value}'"
    return value.text.split(": ", 1)[0] if isinstance(value, Unknown) else repr(value)


def _if(scope: Scope, node: _Call) -> Any:
    cond = scope._eval(node.args[0])
    if isinstance(cond, Unknown):
        a, b = scope.speculative(node.args[1]), scope.speculative(node.args[2])
        return a if a == b else cond
    return scope._eval(node.args[1] if cond else node.args[2])


def _and_or(stop: bool) -> Callable[[Scope, _Call], Any]:
    def fn(scope: Scope, node: _Call) -> Any:
        unknown: Unknown | None = None
        for arg in node.args:
            # after an unknown value, the deployment may have stopped where stockade goes on
            value = scope._eval(arg) if unknown is None else scope.speculative(arg)
            if isinstance(value, Unknown):
                unknown = unknown or value
            elif bool(value) is stop:
                return stop
        return unknown if unknown is not None else not stop

    return fn


def _coalesce(scope: Scope, node: _Call) -> Any:
    for arg in node.args:
        value = scope._eval(arg)
        if value is not None:
            return value
    return None


def _copy_index(scope: Scope, node: _Call) -> Any:
    args = [scope._eval(a) for a in node.args]
    loop, offset = "", 0
    for a in args:
        if isinstance(a, str):
            loop = a.lower()
        elif isinstance(a, int):
            offset = a
    if loop not in scope.copy_index:
        return Unknown(f"{node.text}: outside its copy loop")
    return scope.copy_index[loop] + offset


# --- lambdas: filter(), map(), reduce(), sort(), toObject(), mapValues(), groupBy() ---------------------
# (what Bicep's `map`/`filter` and the verified modules compile to). The lambda's body is evaluated
# for each element with its variables bound; an answer that depends on an unknown value is unknown.


def _lambda(node: Any, arity: int) -> tuple[list[str], Any] | None:
    """A ``lambda('x', …, body)`` argument with at least ``arity`` variables: (names, body)."""
    if not (isinstance(node, _Call) and node.name == "lambda" and len(node.args) > arity):
        return None
    names = [a.value for a in node.args[:-1] if isinstance(a, _Lit) and isinstance(a.value, str)]
    return (names, node.args[-1]) if len(names) == len(node.args) - 1 else None


def _apply(scope: Scope, fn: tuple[list[str], Any], *values: Any) -> Any:
    names, body = fn
    if scope.spent():  # an application costs a call, whatever its body
        return Unknown(f"a lambda (past {EVALUATIONS:,} function calls in this template)")
    scope._frames.append({n.lower(): v for n, v in zip(names, values, strict=False)})
    try:
        return scope._eval(body)
    finally:
        scope._frames.pop()


def _lambda_variable(scope: Scope, node: _Call) -> Any:
    name = scope._eval(node.args[0]) if node.args else None
    for frame in reversed(scope._frames):
        if isinstance(name, str) and name.lower() in frame:
            return frame[name.lower()]
    return Unknown(f"{node.text}: outside its lambda")


_Fn = tuple[list[str], Any]  # a lambda's variable names and body


def _over(scope: Scope, node: _Call, arity: int, args: int = 2, of: type = list) -> tuple[Any, _Fn] | Unknown:
    """The collection a lambda function iterates (an array, or an object where ``of`` says so) and
    its lambda, or why not."""
    fn = _lambda(node.args[-1], arity) if len(node.args) == args else None
    if fn is None:
        return Unknown(f"{node.text} (a lambda stockade does not read)")
    items = scope._eval(node.args[0])
    if isinstance(items, Unknown):
        return items
    if not isinstance(items, Mapping if of is dict else list):
        return Unknown(f"{node.text}: not an {'object' if of is dict else 'array'}")
    return items, fn


def _map(scope: Scope, node: _Call) -> Any:
    got = _over(scope, node, 1)
    if isinstance(got, Unknown):
        return got
    items, fn = got
    return [_apply(scope, fn, x, i) for i, x in enumerate(items)]


def _filter(scope: Scope, node: _Call) -> Any:
    got = _over(scope, node, 1)
    if isinstance(got, Unknown):
        return got
    items, fn = got
    out = []
    for i, x in enumerate(items):
        keep = _apply(scope, fn, x, i)
        unknown = unknown_in(keep)
        if unknown is not None:
            return unknown
        if keep is True:
            out.append(x)
    return out


def _reduce(scope: Scope, node: _Call) -> Any:
    got = _over(scope, node, 2, args=3)
    if isinstance(got, Unknown):
        return got
    items, fn = got
    acc = scope._eval(node.args[1])
    for i, x in enumerate(items):
        acc = _apply(scope, fn, acc, x, i)
    return acc


class _Undecided(Exception):
    """A comparison a lambda cannot decide (an unknown answer): the sort's answer is unknown."""

    def __init__(self, unknown: Unknown) -> None:
        self.unknown = unknown


def _sort(scope: Scope, node: _Call) -> Any:
    got = _over(scope, node, 2)
    if isinstance(got, Unknown):
        return got
    items, fn = got

    def before(x: Any, y: Any) -> bool:
        answer = _apply(scope, fn, x, y)
        unknown = unknown_in(answer)
        if unknown is not None:
            raise _Undecided(unknown)
        return answer is True

    def compare(x: Any, y: Any) -> int:  # the lambda says whether its first argument goes first
        return -1 if before(x, y) else 1 if before(y, x) else 0

    try:
        return sorted(items, key=functools.cmp_to_key(compare))
    except _Undecided as undecided:
        return undecided.unknown


def _to_object(scope: Scope, node: _Call) -> Any:
    value_fn = _lambda(node.args[2], 1) if len(node.args) == 3 else None
    if len(node.args) == 3 and value_fn is None:
        return Unknown(f"{node.text} (a lambda stockade does not read)")
    got = _over(scope, _Call(node.name, node.args[:2], node.text), 1)  # the array and the key lambda
    if isinstance(got, Unknown):
        return got
    items, key_fn = got
    out: dict[str, Any] = {}
    for x in items:
        key = _key(scope, key_fn, x, node)
        if isinstance(key, Unknown):
            return key
        out[key] = _apply(scope, value_fn, x) if value_fn is not None else x
    return out


def _key(scope: Scope, fn: _Fn, item: Any, node: _Call) -> str | Unknown:
    """The key a lambda gives ``item`` (``toObject``, ``groupBy``), or why it gives none."""
    key = _apply(scope, fn, item)
    if isinstance(key, str | Unknown):
        return key
    return Unknown(f"{node.text}: a key that is not a string")


def _map_values(scope: Scope, node: _Call) -> Any:
    got = _over(scope, node, 1, of=dict)
    if isinstance(got, Unknown):
        return got
    values, fn = got
    return {k: _apply(scope, fn, v) for k, v in values.items()}


def _group_by(scope: Scope, node: _Call) -> Any:
    got = _over(scope, node, 1)
    if isinstance(got, Unknown):
        return got
    items, fn = got
    out: dict[str, list[Any]] = {}
    for x in items:
        key = _key(scope, fn, x, node)
        if isinstance(key, Unknown):
            return key
        out.setdefault(key, []).append(x)
    return out


_LAZY: dict[str, Callable[[Scope, _Call], Any]] = {
    "if": _if,
    "and": _and_or(False),
    "or": _and_or(True),
    "coalesce": _coalesce,
    "copyindex": _copy_index,
    "map": _map,
    "filter": _filter,
    "reduce": _reduce,
    "sort": _sort,
    "toobject": _to_object,
    "mapvalues": _map_values,
    "groupby": _group_by,
    "lambdavariables": _lambda_variable,
}


def _equals(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b  # true is not 1
    return bool(a == b)


def _contains(container: Any, item: Any) -> Any:
    if isinstance(item, Unknown):
        return item
    if isinstance(container, str):
        return _to_string(item) in container
    if isinstance(container, Mapping):  # its keys: known whatever its values are
        return str(item).lower() in {k.lower() for k in container}
    if item in container:
        return True
    return unknown_in(container) or False  # an unknown member may be it


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | Mapping) and len(value) == 0)


def _concat(args: list[Any]) -> Any:
    if args and all(isinstance(a, list) for a in args):
        return [x for a in args for x in a]
    inner = unknown_in(args)
    return inner if inner is not None else "".join(_to_string(a) for a in args)


def _union(args: list[Any]) -> Any:
    if all(isinstance(a, Mapping) for a in args):
        out: dict[str, Any] = {}
        for a in args:
            for k, v in a.items():
                if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
                    v = _union([out[k], v])
                out[k] = v
        return out
    items: list[Any] = []
    for a in args:
        items += [x for x in a if x not in items]
    return items


def _int(value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError("int of a bool")
    return int(value)


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise ValueError(value)
        return value.lower() == "true"
    return bool(value)


def _substring(s: str, start: int = 0, length: int | None = None) -> str:
    if start < 0 or start > len(s) or (length is not None and (length < 0 or start + length > len(s))):
        raise IndexError("substring out of range")
    return s[start:] if length is None else s[start : start + length]


def _split(s: str, delim: Any) -> list[str]:
    delims = delim if isinstance(delim, list) else [delim]
    return re.split("|".join(re.escape(str(d)) for d in delims), s) if delims else [s]


def _resource_group(scope: Scope, args: list[Any]) -> dict[str, Any]:
    return {
        "id": f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{RESOURCE_GROUP}",
        "name": RESOURCE_GROUP,
        "type": "Microsoft.Resources/resourceGroups",
        "location": LOCATION,
        "tags": {},
        "properties": {"provisioningState": "Succeeded"},
    }


def _subscription(scope: Scope, args: list[Any]) -> dict[str, Any]:
    return {
        "id": f"/subscriptions/{SUBSCRIPTION_ID}",
        "subscriptionId": SUBSCRIPTION_ID,
        "tenantId": SUBSCRIPTION_ID,
        "displayName": "subscription",
    }


_FUNCTIONS: dict[str, Callable[[Scope, list[Any]], Any]] = {
    "parameters": lambda s, a: s.parameter(str(a[0])),
    "variables": lambda s, a: s.variable(str(a[0])),
    "not": lambda s, a: not a[0],
    "equals": lambda s, a: _equals(a[0], a[1]),
    "greater": lambda s, a: a[0] > a[1],
    "greaterorequals": lambda s, a: a[0] >= a[1],
    "less": lambda s, a: a[0] < a[1],
    "lessorequals": lambda s, a: a[0] <= a[1],
    "empty": lambda s, a: _empty(a[0]),
    "contains": lambda s, a: _contains(a[0], a[1]),
    "concat": lambda s, a: _concat(a),
    "format": lambda s, a: _format(str(a[0]), a[1:]),
    "tolower": lambda s, a: str(a[0]).lower(),
    "toupper": lambda s, a: str(a[0]).upper(),
    "trim": lambda s, a: str(a[0]).strip(),
    "split": lambda s, a: _split(str(a[0]), a[1]),
    "first": lambda s, a: a[0][0] if a[0] else None,
    "last": lambda s, a: a[0][-1] if a[0] else None,
    "length": lambda s, a: len(a[0]),
    "substring": lambda s, a: _substring(str(a[0]), *a[1:]),
    "replace": lambda s, a: str(a[0]).replace(str(a[1]), str(a[2])),
    "startswith": lambda s, a: str(a[0]).lower().startswith(str(a[1]).lower()),
    "endswith": lambda s, a: str(a[0]).lower().endswith(str(a[1]).lower()),
    "indexof": lambda s, a: str(a[0]).lower().find(str(a[1]).lower()),
    "take": lambda s, a: a[0][: max(a[1], 0)],
    "skip": lambda s, a: a[0][max(a[1], 0) :],
    "padleft": lambda s, a: _to_string(a[0]).rjust(
        _at_most(a[1], MAX_RANGE), str(a[2]) if len(a) > 2 else " "
    ),
    "min": lambda s, a: min(a[0] if len(a) == 1 and isinstance(a[0], list) else a),
    "max": lambda s, a: max(a[0] if len(a) == 1 and isinstance(a[0], list) else a),
    "add": lambda s, a: a[0] + a[1],
    "sub": lambda s, a: a[0] - a[1],
    "mul": lambda s, a: a[0] * a[1],
    "div": lambda s, a: int(a[0] / a[1]),
    "mod": lambda s, a: a[0] % a[1],
    "range": lambda s, a: list(range(a[0], a[0] + _at_most(a[1], MAX_RANGE))),
    "resourceid": lambda s, a: resource_id(a),
    "subscriptionresourceid": lambda s, a: resource_id(a),
    "tenantresourceid": lambda s, a: resource_id(a),
    "extensionresourceid": lambda s, a: f"{a[0]}{resource_id(a[1:])}",
    "resourcegroup": _resource_group,
    "subscription": _subscription,
    "tenant": lambda s, a: {"tenantId": SUBSCRIPTION_ID, "countryCode": "US", "displayName": "tenant"},
    "deployment": lambda s, a: {
        "name": "deployment",
        "properties": {"templateLink": {"uri": s.template_uri}} if s.template_uri else {},
    },
    "environment": lambda s, a: ENVIRONMENT,
    "uniquestring": lambda s, a: _placeholder("uniquestring", a),
    "guid": lambda s, a: _placeholder("guid", a),
    "string": lambda s, a: _to_string(a[0]),
    "int": lambda s, a: _int(a[0]),
    "bool": lambda s, a: _bool(a[0]),
    "json": lambda s, a: json.loads(str(a[0])),
    "array": lambda s, a: a[0] if isinstance(a[0], list) else [a[0]],
    "createarray": lambda s, a: list(a),
    "createobject": lambda s, a: {str(a[i]): a[i + 1] for i in range(0, len(a) - 1, 2)},
    "union": lambda s, a: _union(a),
    "intersection": lambda s, a: [x for x in a[0] if all(x in o for o in a[1:])],
    "items": lambda s, a: [{"key": k, "value": a[0][k]} for k in sorted(a[0], key=str.lower)],
    "objectkeys": lambda s, a: list(a[0]),
    "tryget": lambda s, a: _try_get(a[0], a[1:]),
    "join": lambda s, a: str(a[1]).join(_to_string(x) for x in a[0]),
    "flatten": lambda s, a: _whole(a[0]) or [x for inner in a[0] for x in inner],
    "shallowmerge": lambda s, a: _whole(a[0]) or {k: v for o in a[0] for k, v in o.items()},
    "lastindexof": lambda s, a: str(a[0]).lower().rfind(str(a[1]).lower()),
    "true": lambda s, a: True,
    "false": lambda s, a: False,
    "null": lambda s, a: None,
    "uri": lambda s, a: str(a[0]).rsplit("/", 1)[0] + "/" + str(a[1]).lstrip("/"),
    "uricomponent": lambda s, a: str(a[0]),
}


def _at_most(count: Any, limit: int) -> int:
    """``count``, refused past what Resource Manager accepts (an unknown value, not a hang)."""
    if not isinstance(count, int) or isinstance(count, bool) or count > limit:
        raise ValueError(f"more than {limit}")
    return count


def _whole(members: list[Any]) -> Unknown | None:
    """The first member of ``members`` that is itself unknown (an object or array only the deployment
    gives, whose members a function reads), or None."""
    return next((m for m in members if isinstance(m, Unknown)), None)


def _try_get(value: Any, keys: list[Any]) -> Any:
    """``tryGet(value, key, …)``: the member, or null where there is none."""
    for key in keys:
        if isinstance(value, Unknown):
            return value
        if isinstance(value, Mapping) and isinstance(key, str):
            try:
                value = _lookup(value, key)
            except KeyError:
                return None
        elif isinstance(value, list) and isinstance(key, int) and not isinstance(key, bool):
            if not -len(value) <= key < len(value):
                return None
            value = value[key]
        else:
            return None
    return value


def concrete(value: Any) -> Any:
    """A resolved value as resource properties carry it: every :class:`Unknown` becomes its marker."""
    if isinstance(value, Unknown):
        return marker(value)
    if isinstance(value, Mapping):
        return {k: concrete(v) for k, v in value.items()}
    if isinstance(value, list):
        return [concrete(v) for v in value]
    return value
