"""OPA Gatekeeper ConstraintTemplates and Constraints, run by stockade's gates like its own rules.

Users bring the YAML they already run in Gatekeeper with `--policy-dir`: every `ConstraintTemplate`
(`templates.gatekeeper.sh/*`) and every constraint of a template's kind (`constraints.gatekeeper.sh/*`)
found there becomes one rule, `GK-<Kind>-<constraint name>`, evaluated in the scan, the webhook and
the audit next to the bundled library, with the same config (overrides, exceptions) applied after.

How a constraint is decided, as Gatekeeper decides it:

- **match** (Gatekeeper's `pkg/mutation/match` semantics): `kinds` (apiGroups x kinds, `*` wildcards),
  `scope` (`Cluster`, `Namespaced`, `*`), `namespaces` / `excludedNamespaces` (prefix or suffix `*`
  globs; a Namespace is in its own namespace; other cluster-scoped objects are not excluded),
  `labelSelector` on the object, `namespaceSelector` on its Namespace's labels (the object's own
  labels for a Namespace; other cluster-scoped objects match), and `name` (glob);
- **input**: `input.review` (`object`, `oldObject`, `kind` {group, version, kind}, `name`,
  `namespace`, `operation`, `userInfo`) and `input.parameters` (the constraint's `spec.parameters`);
- **Rego**: the template's `rego` and `libs`, in Rego v0 (Gatekeeper's default) unless the module
  imports `rego.v1`; the rule is `violation[{"msg": …, "details": …}]`;
- **enforcementAction**: `deny` → deny, `warn` → warn, `dryrun` → audit (reported, never blocks).

**Where regorus differs from OPA**, the engine loads a rewritten text (rego and libs) that regorus
answers as OPA answers the original: the rewrites work on Rego's tokens and each is a measured
difference (policies/runtimes/rego_rewrite.py). The template, and the OPA bundle, keep the text as written.

Templates run on regorus' interpreter, one engine per template (they are few and user-written; the
bundled library keeps the compiled VM). `data.inventory` is what the gate knows of the cluster, in
Gatekeeper's shape (`cluster[groupVersion][kind][name]`, `namespace[ns][groupVersion][kind][name]`),
given by :meth:`Gatekeeper.set_inventory`; empty until a gate sets it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import regorus

from stockade.policies.frameworks.common import (
    GatekeeperError,
    policy_documents,
    selector_matches,
)
from stockade.policies.frameworks.vap import NotMatched, Unevaluated, namespace_object, run_code
from stockade.policies.model import Action, Rule, Severity, Violation
from stockade.policies.runtimes.cel import environment
from stockade.policies.runtimes.errors import engine_message, evaluation_message
from stockade.policies.runtimes.rego_rewrite import COMPAT_MODULE, calls_external_data, rewrite, uses_compat

TEMPLATE_GROUP = "templates.gatekeeper.sh/"
CONSTRAINT_GROUP = "constraints.gatekeeper.sh/"
TARGET = "admission.k8s.gatekeeper.sh"
AREA = "gatekeeper"
ACTIONS = {"deny": Action.DENY, "warn": Action.WARN, "dryrun": Action.AUDIT}
_PACKAGE = re.compile(r"^package\s+([A-Za-z_][\w.]*)", re.M)
_V1 = re.compile(r"^import\s+rego\.v1\s*$", re.M)


@dataclass(frozen=True)
class Template:
    name: str
    kind: str
    rego: str
    libs: tuple[str, ...]
    package: str
    file: str
    title: str = ""
    description: str = ""
    #: why stockade cannot evaluate this template ("" when it can): CEL-only code, external data
    unsupported: str = ""
    #: whether that makes every evaluation an error (external data) rather than "not evaluated" (CEL)
    unsupported_is_error: bool = False
    #: the K8sNativeValidation source (CEL: variables, matchConditions, validations), if any; it runs
    #: when the template has no Rego, or when the CEL engine is preferred (`load_gatekeeper(prefer=)`)
    cel: Mapping[str, Any] | None = None

    def unsupported_violation(self, rule: Rule) -> Violation | None:
        """What each gate reports for an object this template's constraint matches, when stockade
        cannot run the template (every engine says the same); None when it can."""
        if not self.unsupported:
            return None
        error = self.unsupported_is_error
        return Violation(rule=rule, msg=self.unsupported, error=error, unevaluated=not error)


@dataclass(frozen=True)
class Constraint:
    kind: str
    name: str
    match: Mapping[str, Any]
    parameters: Mapping[str, Any]
    action: Action
    file: str

    @property
    def rule_id(self) -> str:
        return f"GK-{self.kind}-{self.name}"


@dataclass
class Gatekeeper:
    """The templates and constraints of the policy directories."""

    templates: dict[str, Template] = field(default_factory=dict)  # by kind
    constraints: list[Constraint] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.constraints)

    @property
    def uses_inventory(self) -> bool:
        """Some template with a constraint reads `data.inventory` (the gate must then provide it)."""
        used = {c.kind for c in self.constraints}
        return any(
            "data.inventory" in t.rego or any("data.inventory" in lib for lib in t.libs)
            for kind, t in self.templates.items()
            if kind in used
        )

    def rules(self) -> dict[str, Rule]:
        out: dict[str, Rule] = {}
        for c in self.constraints:
            t = self.templates[c.kind]
            out[c.rule_id] = Rule(
                id=c.rule_id,
                title=t.title or f"{c.kind} ({c.name})",
                description=t.description or f"Gatekeeper constraint {c.kind}/{c.name} ({t.file})",
                area=AREA,
                severity=Severity.MEDIUM,
                kinds=_rule_kinds(c.match),
                frameworks=("gatekeeper",),
                remediation="",
                package=t.package,
                file=c.file,
                action=c.action,
            )
        return out


def load_gatekeeper(
    dirs: Sequence[Path],
    *,
    prefer: str = "rego",
    documents: Sequence[tuple[Path, list[dict[str, Any]]]] | None = None,
) -> Gatekeeper:
    """Every ConstraintTemplate and constraint in the YAML/JSON files under `dirs` (recursively), or
    in `documents` already read from them (policy_documents).

    A template with both Rego and CEL (K8sNativeValidation) code runs its Rego, stockade's engine of
    record, unless ``prefer="cel"`` (tests/policies/test_gatekeeper_library.py runs the library's gator
    suites both ways); a CEL-only template runs its CEL."""
    gk = Gatekeeper()
    pending: list[tuple[dict[str, Any], str]] = []
    for path, docs in documents if documents is not None else policy_documents(dirs):
        for doc in docs:
            api = str(doc.get("apiVersion") or "")
            if api.startswith(TEMPLATE_GROUP) and doc.get("kind") == "ConstraintTemplate":
                template = _template(doc, str(path), prefer)
                if template.kind in gk.templates:
                    raise GatekeeperError(
                        f"{path}: ConstraintTemplate kind {template.kind} is already defined in "
                        f"{gk.templates[template.kind].file}"
                    )
                gk.templates[template.kind] = template
            elif api.startswith(CONSTRAINT_GROUP):
                pending.append((doc, str(path)))
    seen: set[str] = set()
    for doc, file in pending:
        constraint = _constraint(doc, file)
        if constraint.kind not in gk.templates:
            raise GatekeeperError(
                f"{file}: constraint {constraint.kind}/{constraint.name} has no ConstraintTemplate"
            )
        if constraint.rule_id in seen:
            raise GatekeeperError(f"{file}: constraint {constraint.kind}/{constraint.name} is defined twice")
        seen.add(constraint.rule_id)
        gk.constraints.append(constraint)
    for template in gk.templates.values():  # a broken template is an error now, constraints or not
        _compile(template)
    return gk


def _compile(template: Template, guard: bool = False) -> Any:
    """The template's regorus engine (without the builtin type guards, unless `guard`: see
    GatekeeperEngine.evaluate); GatekeeperError naming the file when its Rego does not load."""
    if template.unsupported or not template.rego:
        return None
    modules = [(f"{template.file}#lib{i}", lib) for i, lib in enumerate(template.libs)]
    try:
        return regorus_engine([*modules, (template.file, template.rego)], guard)
    except Exception as exc:
        raise GatekeeperError(
            f"{template.file}: ConstraintTemplate {template.name}: {engine_message(exc)}"
        ) from None


def _template(doc: Mapping[str, Any], file: str, prefer: str = "rego") -> Template:
    md = doc.get("metadata") or {}
    name = str(md.get("name") or "")
    kind = str(
        (((doc.get("spec") or {}).get("crd") or {}).get("spec") or {}).get("names", {}).get("kind") or ""
    )
    if not kind:
        raise GatekeeperError(f"{file}: ConstraintTemplate {name}: spec.crd.spec.names.kind is missing")
    targets = [t for t in (doc.get("spec") or {}).get("targets") or [] if isinstance(t, Mapping)]
    target = next((t for t in targets if t.get("target") == TARGET), None)
    if target is None:
        raise GatekeeperError(f"{file}: ConstraintTemplate {name}: no target {TARGET}")
    rego, libs = target.get("rego"), target.get("libs") or []
    for code in target.get("code") or []:  # newer templates: code[{engine: Rego, source: {rego, libs}}]
        if isinstance(code, Mapping) and code.get("engine") == "Rego" and not rego:
            source = code.get("source") or {}
            rego, libs = source.get("rego"), source.get("libs") or []
    cel = next(
        (
            c.get("source")
            for c in target.get("code") or []
            if isinstance(c, Mapping)
            and c.get("engine") == "K8sNativeValidation"
            and isinstance(c.get("source"), Mapping)
        ),
        None,
    )
    annotations = md.get("annotations") or {}
    if cel is not None and (prefer == "cel" or not isinstance(rego, str) or not rego.strip()):
        return Template(
            name=name,
            kind=kind,
            rego="",
            libs=(),
            package="",
            file=file,
            title=str(annotations.get("metadata.gatekeeper.sh/title") or ""),
            description=str(annotations.get("description") or ""),
            cel=cel,
        )
    if not isinstance(rego, str) or not rego.strip():
        raise GatekeeperError(f"{file}: ConstraintTemplate {name}: the target has no Rego")
    package = _PACKAGE.search(rego)
    if package is None:
        raise GatekeeperError(f"{file}: ConstraintTemplate {name}: the Rego has no package")
    external = any(calls_external_data(text) for text in (rego, *map(str, libs)))
    return Template(
        name=name,
        kind=kind,
        rego=rego,
        libs=tuple(str(lib) for lib in libs),
        unsupported="the template calls external_data: external data providers are not available "
        "to stockade (offline)"
        if external
        else "",
        unsupported_is_error=external,
        cel=cel,
        package=f"data.{package.group(1)}",
        file=file,
        title=str(annotations.get("metadata.gatekeeper.sh/title") or ""),
        description=str(annotations.get("description") or ""),
    )


def _constraint(doc: Mapping[str, Any], file: str) -> Constraint:
    md = doc.get("metadata") or {}
    spec = doc.get("spec") or {}
    kind, name = str(doc.get("kind") or ""), str(md.get("name") or "")
    if not kind or not name:
        raise GatekeeperError(f"{file}: a constraint needs a kind and metadata.name")
    action_name = str(spec.get("enforcementAction") or "deny").lower()
    if action_name not in ACTIONS:
        raise GatekeeperError(
            f"{file}: constraint {kind}/{name}: enforcementAction {action_name!r} is not deny, warn or dryrun"
        )
    match = spec.get("match") or {}
    parameters = spec.get("parameters") or {}
    if not isinstance(match, Mapping) or not isinstance(parameters, Mapping):
        raise GatekeeperError(
            f"{file}: constraint {kind}/{name}: spec.match and spec.parameters must be objects"
        )
    return Constraint(kind, name, match, parameters, ACTIONS[action_name], file)


def _rule_kinds(match: Mapping[str, Any]) -> tuple[str, ...]:
    kinds: list[str] = []
    for entry in match.get("kinds") or []:
        names = (entry or {}).get("kinds") or ["*"]
        kinds.extend(str(k) for k in names)
    return tuple(dict.fromkeys(kinds)) if kinds and "*" not in kinds else ("*",)


# ---- match ------------------------------------------------------------------------------------------


def _wildcard(pattern: str, value: str) -> bool:
    """Gatekeeper's util.Wildcard: exact, or one `*` at the front or the end."""
    if pattern.startswith("*"):
        return value.endswith(pattern[1:])
    if pattern.endswith("*"):
        return value.startswith(pattern[:-1])
    return pattern == value


def matches(
    match: Mapping[str, Any], obj: Mapping[str, Any], namespace_labels: Mapping[str, Any] | None
) -> bool:
    """Whether a constraint's `match` selects the object (module docstring)."""
    group, _, _ = _gvk(obj)
    kind = str(obj.get("kind") or "")
    md = obj.get("metadata") or {}
    name, ns = str(md.get("name") or ""), str(md.get("namespace") or "")
    is_namespace = kind == "Namespace" and group == ""
    kinds = match.get("kinds") or []
    if kinds and not any(
        (not k.get("kinds") or "*" in k["kinds"] or kind in k["kinds"])
        and (not k.get("apiGroups") or "*" in k["apiGroups"] or group in k["apiGroups"])
        for k in kinds
        if isinstance(k, Mapping)
    ):
        return False
    scope = match.get("scope")
    if scope == "Cluster" and not (is_namespace or not ns):
        return False
    if scope == "Namespaced" and (is_namespace or not ns):
        return False
    own = name if is_namespace else ns
    if match.get("namespaces") and own and not any(_wildcard(str(p), own) for p in match["namespaces"]):
        return False
    if (
        match.get("excludedNamespaces")
        and own
        and any(_wildcard(str(p), own) for p in match["excludedNamespaces"])
    ):
        return False
    if match.get("labelSelector") and not selector_matches(match["labelSelector"], md.get("labels") or {}):
        return False
    if match.get("namespaceSelector") is not None and (is_namespace or ns):
        labels = md.get("labels") or {} if is_namespace else (namespace_labels or {})
        if not selector_matches(match["namespaceSelector"], labels):
            return False
    return not (match.get("name") and not _wildcard(str(match["name"]), name))


def _gvk(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    api = str(obj.get("apiVersion") or "")
    group, _, version = api.rpartition("/")
    return group, version, str(obj.get("kind") or "")


# ---- evaluation -------------------------------------------------------------------------------------


def review_of(inp: Mapping[str, Any]) -> dict[str, Any]:
    """Gatekeeper's `input.review` from stockade's input (same object, operation, user)."""
    obj = inp.get("object") or {}
    group, version, kind = _gvk(obj)
    md = obj.get("metadata") or {}
    review: dict[str, Any] = {
        "object": obj,
        "kind": {"group": group, "version": version, "kind": kind},
        "name": md.get("name") or "",
        "namespace": md.get("namespace") or "",
        "operation": "CREATE" if inp.get("operation") in (None, "SCAN", "AUDIT") else inp.get("operation"),
    }
    if inp.get("oldObject") is not None:
        review["oldObject"] = inp["oldObject"]
    if inp.get("userInfo") is not None:
        review["userInfo"] = inp["userInfo"]
    return review


def regorus_engine(modules: Sequence[tuple[str, str]], guard: bool = True) -> Any:
    """A regorus engine holding these Rego modules (path, text) as OPA reads them: each loaded in
    its own Rego version (v0 unless it imports ``rego.v1``), through :func:`rego_rewrite.rewrite`
    (with the builtin type guards unless `guard` is false), with the compat module when a rewrite
    calls it. The texts themselves are not changed."""
    engine = regorus.Engine()
    texts = [(path, rewrite(text, guard), not _V1.search(text)) for path, text in modules]
    if any(uses_compat(text) for _, text, _ in texts):
        engine.set_rego_v0(True)
        engine.add_policy("<stockade-gatekeeper-compat>", COMPAT_MODULE)
    for path, text, v0 in texts:
        engine.set_rego_v0(v0)
        engine.add_policy(path, text)
    return engine


class GatekeeperEngine:
    """Evaluates the constraints; regorus engines belong to the thread that made them (as the
    library's EmbeddedEngine, which owns one of these per thread)."""

    def __init__(self, gk: Gatekeeper, rules: Mapping[str, Rule]) -> None:
        self.gk = gk
        self.rules = rules
        self._engines: dict[str, Any] = {}
        # the same templates with the builtin type guards, made when a plain evaluation raises
        self._guarded: dict[str, Any] = {}
        self._data = '{"inventory": {"cluster": {}, "namespace": {}}}'
        for kind, template in gk.templates.items():
            if template.unsupported or not template.rego:
                continue
            engine = _compile(template)
            engine.add_data_json(self._data)
            self._engines[kind] = engine

    def set_inventory(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """`data.inventory` in Gatekeeper's shape, from the objects the gate knows."""
        data: dict[str, Any] = {"cluster": {}, "namespace": {}}
        for obj in objects:
            md = obj.get("metadata") or {}
            api, kind, name = str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""), md.get("name")
            if not kind or not name:
                continue
            ns = md.get("namespace")
            node = data["namespace"].setdefault(ns, {}) if ns else data["cluster"]
            node.setdefault(api, {}).setdefault(kind, {})[name] = obj
        text = orjson.dumps({"inventory": data}).decode()
        self._data = text
        for engine in (*self._engines.values(), *self._guarded.values()):
            engine.clear_data()
            engine.add_data_json(text)

    def _evaluate(self, kind: str, query: str, text: str) -> str:
        """The template's answer. Evaluated without the builtin type guards first; when that raises
        (a builtin given an argument of the wrong type is an error in regorus, "undefined" in OPA as
        Gatekeeper runs it), again with them: without an error both answer the same, and the
        guards cost a function call per builtin call (6x on the resource-quantity templates)."""
        engine = self._engines[kind]
        engine.set_input_json(text)
        try:
            return str(engine.eval_rule_as_json(query))
        except Exception:
            guarded = self._guarded.get(kind)
            if guarded is None:
                guarded = self._guarded[kind] = _compile(self.gk.templates[kind], guard=True)
                guarded.add_data_json(self._data)
            guarded.set_input_json(text)
            return str(guarded.eval_rule_as_json(query))

    def evaluate(self, inp: Mapping[str, Any]) -> list[Violation]:
        obj = inp.get("object") or {}
        ns_info = inp.get("namespace") or {}
        out: list[Violation] = []
        review: dict[str, Any] | None = None
        for c in self.gk.constraints:
            if not matches(c.match, obj, ns_info.get("labels")):
                continue
            template = self.gk.templates[c.kind]
            unsupported = template.unsupported_violation(self.rules[c.rule_id])
            if unsupported is not None:
                out.append(unsupported)
                continue
            review = review or review_of(inp)
            rule = self.rules[c.rule_id]
            if not template.rego:
                out += cel_violations(template, c, rule, review, ns_info)
                continue
            text = orjson.dumps({"review": review, "parameters": c.parameters}).decode()
            try:
                raw = self._evaluate(c.kind, f"{self.gk.templates[c.kind].package}.violation", text)
            except Exception as exc:
                # This constraint's error, on this object: every other rule still decides.
                # (Evaluator.decide makes it a high-severity deny.)
                out.append(
                    Violation(
                        rule=rule,
                        msg=f"the constraint could not be evaluated: {evaluation_message(exc)}",
                        error=True,
                    )
                )
                continue
            for item in orjson.loads(raw) or []:
                if not isinstance(item, Mapping):
                    continue
                details = item.get("details")
                out.append(
                    Violation(
                        rule=rule,
                        msg=str(item.get("msg") or rule.title),
                        details=details if isinstance(details, Mapping) else {},
                    )
                )
        return out


def glob(patterns: Sequence[str], value: str) -> bool:
    return any(fnmatch.fnmatchcase(value, p) for p in patterns)


def cel_violations(
    template: Template, constraint: Constraint, rule: Rule, review: Mapping[str, Any], ns_info: Any
) -> list[Violation]:
    """A CEL (K8sNativeValidation) template's violations, with Gatekeeper's CEL variables: ``object``,
    ``oldObject``, ``request`` (the review), ``params`` (the constraint), and the predefined
    ``variables.params`` (its parameters) and ``variables.anyObject`` (the object, or the old one
    on DELETE)."""

    assert template.cel is not None
    obj = review.get("object")
    old = review.get("oldObject")
    namespace = review.get("namespace")
    ns_object = namespace_object(namespace, ns_info)
    values = {
        "object": obj,
        "oldObject": old,
        "request": dict(review),
        "params": {"spec": {"parameters": dict(constraint.parameters)}},
        "namespaceObject": ns_object,
        "variables": {
            "params": dict(constraint.parameters) or None,
            "anyObject": obj if obj is not None else old,
        },
    }
    results = run_code(environment(), template.cel, values, fail=True)
    if isinstance(results, NotMatched):
        return []
    if isinstance(results, Unevaluated):
        return [Violation(rule=rule, msg=f"not evaluated by stockade: {results.reason}", unevaluated=True)]
    return [Violation(rule=rule, msg=message) for _, message, _ in results]
