"""ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1),
evaluated as the API server does, in every gate: `scan --policy-dir` (VAPs next to Rego and Gatekeeper
templates), the webhook and the audit of existing objects.

The semantics (Kubernetes' "Validating Admission Policy" documentation and the plugin in
k8s.io/apiserver/pkg/admission/plugin/policy/validating):

- a policy applies through each binding that names it (``spec.policyName``); a policy without a
  binding applies nowhere, and a binding without its policy is an error;
- an object is matched by the policy's ``matchConstraints`` and, when the binding has them, the
  binding's ``matchResources`` too: ``resourceRules`` (apiGroups, apiVersions, resources, operations,
  resourceNames; ``*`` wildcards; a scan and an audit judge an object as its CREATE), minus
  ``excludeResourceRules``, and the ``namespaceSelector`` (namespaced objects; a Namespace by its own
  labels) and ``objectSelector``;
- ``paramKind`` + the binding's ``paramRef`` (by name, or by selector: one evaluation per match;
  ``parameterNotFoundAction`` Deny by default) find the params among the policy directories' objects
  and the objects the gate knows (:meth:`VapEngine.set_objects`: the scanned set, the audited
  cluster's lists, the webhook's watch cache), which list and watch each ``paramKind``;
- ``matchConditions`` must all be true; ``variables`` are computed in order, each seeing the earlier
  ones; each of ``validations`` must be true, or it is a violation whose message is the evaluated
  ``messageExpression``, else ``message``, else "failed expression: <expression>";
- an expression that errors is decided by ``failurePolicy``: Fail (the default) makes it a violation
  of that validation, enforced with the binding's actions as Kubernetes does (a Warn binding warns);
  Ignore skips it;
- the binding's ``validationActions`` become stockade's actions: Deny -> deny, Warn -> warn,
  Audit -> audit (the strongest when several are listed);
- ``auditAnnotations`` are evaluated and carried in each violation's details as the API server
  records them on the audit event (``<policy>/<key>``; a null value omits the key).

Each validation is a rule ``VAP-<policy>-<index>`` (its METADATA: the policy's name, the expression
as title, area ``vap``), so configuration, exceptions and every report treat it as any other rule.
"""

from __future__ import annotations

import copy
import functools
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stockade.policies.frameworks.common import policy_documents, selector_matches
from stockade.policies.kinds.api import KINDS, kind_info, object_kind
from stockade.policies.model import Action, Rule, Severity, Violation
from stockade.policies.runtimes.cel import AUTHORIZERS, UNDECIDABLE, CelError, Environment, environment

AREA = "vap"
#: the rule id suffix of a policy's auditAnnotations (VAP-<policy>-auditAnnotations)
ANNOTATIONS = "auditAnnotations"
GROUP = "admissionregistration.k8s.io/"
ACTIONS = {"Deny": Action.DENY, "Warn": Action.WARN, "Audit": Action.AUDIT}


class VapError(ValueError):
    """A policy or binding that cannot be loaded; one line naming the file."""


@dataclass(frozen=True)
class Policy:
    name: str
    spec: Mapping[str, Any]
    file: str


@dataclass(frozen=True)
class Binding:
    name: str
    policy: str
    spec: Mapping[str, Any]
    file: str

    @property
    def action(self) -> Action:
        actions = [ACTIONS[a] for a in self.spec.get("validationActions") or () if a in ACTIONS]
        return max(actions, key=lambda a: a.rank) if actions else Action.DENY


@dataclass
class Policies:
    """The ValidatingAdmissionPolicies, their bindings and the candidate params objects."""

    policies: dict[str, Policy] = field(default_factory=dict)
    bindings: list[Binding] = field(default_factory=list)
    objects: list[Mapping[str, Any]] = field(default_factory=list)  # params candidates

    def __bool__(self) -> bool:
        return bool(self.bindings)

    @property
    def uses_authorizer(self) -> bool:
        """Some bound policy's CEL names ``authorizer`` (the gate must then give the RBAC objects)."""
        bound = {b.policy for b in self.bindings}
        return any("authorizer" in repr(self.policies[p].spec) for p in bound)

    def param_kinds(self) -> set[tuple[str, str]]:
        """(apiVersion, kind) of every bound policy's ``paramKind``: what a gate must list or watch."""
        out: set[tuple[str, str]] = set()
        for binding in self.bindings:
            kind = self.policies[binding.policy].spec.get("paramKind")
            if isinstance(kind, Mapping) and kind.get("kind"):
                out.add((str(kind.get("apiVersion") or ""), str(kind["kind"])))
        return out

    def rules(self) -> dict[str, Rule]:
        out: dict[str, Rule] = {}
        for binding in self.bindings:
            policy = self.policies[binding.policy]
            for i, validation in enumerate(policy.spec.get("validations") or ()):
                rule_id = f"VAP-{policy.name}-{i}"
                if rule_id in out:
                    continue  # a second binding of the policy: the same rules
                expression = str((validation or {}).get("expression") or "")
                out[rule_id] = Rule(
                    id=rule_id,
                    title=str(validation.get("message") or expression)[:200],
                    description=f"ValidatingAdmissionPolicy {policy.name}, validation {i}: {expression}",
                    area=AREA,
                    severity=Severity.MEDIUM,
                    kinds=_kinds(policy.spec.get("matchConstraints") or {}),
                    frameworks=("vap",),
                    remediation="",
                    package=f"vap.{policy.name}",
                    file=policy.file,
                    action=binding.action,
                )
            annotations = policy.spec.get("auditAnnotations") or ()
            rule_id = f"VAP-{policy.name}-{ANNOTATIONS}"
            if annotations and rule_id not in out:
                # an auditAnnotation whose valueExpression errors is a denial under failurePolicy
                # Fail, as the API server decides it: a rule of its own to carry that violation
                out[rule_id] = Rule(
                    id=rule_id,
                    title="an auditAnnotation's valueExpression could not be evaluated",
                    description=f"ValidatingAdmissionPolicy {policy.name}, auditAnnotations "
                    f"({', '.join(str((a or {}).get('key')) for a in annotations)})",
                    area=AREA,
                    severity=Severity.MEDIUM,
                    kinds=_kinds(policy.spec.get("matchConstraints") or {}),
                    frameworks=("vap",),
                    remediation="",
                    package=f"vap.{policy.name}",
                    file=policy.file,
                    action=binding.action,
                )
        return out


def _kinds(constraints: Mapping[str, Any]) -> tuple[str, ...]:
    """The kinds a policy can apply to (routing in the gates, and the webhook's registration): the
    resourceRules' resources that stockade's kinds table knows, by group and plural; every kind
    (``*``) when a rule names ``*``, a subresource or a resource the table does not know."""
    out: list[str] = []
    for rule in constraints.get("resourceRules") or ():
        if not isinstance(rule, Mapping):
            continue
        groups = [str(g) for g in rule.get("apiGroups") or ()]
        for resource in rule.get("resources") or ():
            resource = str(resource)
            found = [
                object_kind(info)
                for info in KINDS.values()
                if info.plural == resource and ("*" in groups or info.group in groups)
            ]
            if "*" in resource or "/" in resource or not found:
                return ("*",)
            out.extend(found)
    return tuple(dict.fromkeys(out)) or ("*",)


def load_vap(
    dirs: Sequence[Path], documents: Sequence[tuple[Path, list[dict[str, Any]]]] | None = None
) -> Policies:
    """The VAPs, bindings and params candidates in the YAML/JSON files under `dirs`, or in
    `documents` already read from them (common.policy_documents)."""
    out = Policies()
    if documents is None:
        try:
            documents = policy_documents(dirs)
        except ValueError as exc:
            raise VapError(str(exc)) from None
    for path, docs in documents:
        for doc in docs:
            api, kind = str(doc.get("apiVersion") or ""), doc.get("kind")
            md = doc.get("metadata") or {}
            name = str(md.get("name") or "")
            raw_spec = doc.get("spec")
            spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
            if api.startswith(GROUP) and kind == "ValidatingAdmissionPolicy":
                if name in out.policies:
                    raise VapError(f"{path}: ValidatingAdmissionPolicy {name} is defined twice")
                out.policies[name] = Policy(name, spec, str(path))
            elif api.startswith(GROUP) and kind == "ValidatingAdmissionPolicyBinding":
                out.bindings.append(Binding(name, str(spec.get("policyName") or ""), spec, str(path)))
            else:
                out.objects.append(doc)
    for binding in out.bindings:
        if binding.policy not in out.policies:
            raise VapError(
                f"{binding.file}: ValidatingAdmissionPolicyBinding {binding.name} names policy "
                f"{binding.policy!r}, which is not defined"
            )
    env = environment() if out.policies else None  # the CEL runtime is loaded only when policies use it
    for policy in out.policies.values():
        assert env is not None
        for field_name in ("validations", "matchConditions", "variables", "auditAnnotations"):
            for i, entry in enumerate(policy.spec.get(field_name) or ()):
                for key in ("expression", "messageExpression", "valueExpression"):
                    text = (entry or {}).get(key)
                    if not isinstance(text, str) or not text:
                        continue
                    try:
                        env.compile(text)
                    except CelError as exc:
                        # a library stockade lacks is reported per object as "not evaluated"; any
                        # other compile error the API server would have refused: so does the scan
                        if not _unsupported(str(exc)):
                            raise VapError(
                                f"{policy.file}: ValidatingAdmissionPolicy {policy.name} {field_name}[{i}]"
                                f".{key}: {exc}"
                            ) from None
    return out


# ---- matching -----------------------------------------------------------------------------------


def _resource(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    """(group, version, plural) of an object, as the API server's request names it."""
    api = str(obj.get("apiVersion") or "")
    group, _, version = api.rpartition("/")
    kind = str(obj.get("kind") or "")
    info = kind_info(kind)
    if info is not None and info.group == group:
        return group, version, info.plural
    lowered = kind.lower()
    plural = lowered + ("es" if lowered.endswith(("s", "x", "ch", "sh")) else "s")
    if lowered.endswith("y") and not lowered.endswith(("ay", "ey", "oy", "uy")):
        plural = lowered[:-1] + "ies"
    return group, version, plural


def _any(patterns: Any, value: str) -> bool:
    return isinstance(patterns, list) and ("*" in patterns or value in patterns)


def _rule_matches(rule: Mapping[str, Any], obj: Mapping[str, Any], operation: str) -> bool:
    group, version, plural = _resource(obj)
    resources = [str(r) for r in rule.get("resources") or ()]
    resource_ok = "*" in resources or plural in resources or "*/*" in resources
    names = rule.get("resourceNames") or ()
    name = str((obj.get("metadata") or {}).get("name") or "")
    return (
        _any(rule.get("apiGroups"), group)
        and _any(rule.get("apiVersions"), version)
        and resource_ok
        and _any(rule.get("operations"), operation)
        and (not names or name in names)
    )


def matches(
    resources: Mapping[str, Any], obj: Mapping[str, Any], ns_labels: Mapping[str, Any] | None, operation: str
) -> bool:
    """Whether `matchConstraints` / `matchResources` select the object for this operation."""
    rules = resources.get("resourceRules")
    if rules is not None and not any(
        _rule_matches(r, obj, operation) for r in rules if isinstance(r, Mapping)
    ):
        return False
    if any(
        _rule_matches(r, obj, operation)
        for r in resources.get("excludeResourceRules") or ()
        if isinstance(r, Mapping)
    ):
        return False
    md = obj.get("metadata") or {}
    labels = md.get("labels") or {}
    selector = resources.get("namespaceSelector")
    is_namespace = obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1"
    if (
        isinstance(selector, Mapping)
        and (is_namespace or md.get("namespace"))
        and not selector_matches(selector, labels if is_namespace else (ns_labels or {}))
    ):
        return False
    selector = resources.get("objectSelector")
    return not (isinstance(selector, Mapping) and not selector_matches(selector, labels))


# ---- evaluation ---------------------------------------------------------------------------------


@dataclass
class VapEngine:
    """Evaluates the bindings' policies on one input of the gates (stockade's engine input)."""

    vap: Policies
    rules: Mapping[str, Rule]
    env: Environment = field(default_factory=environment)
    #: params candidates from the gate (set_objects), after the policy directories' own objects
    gate_objects: list[Mapping[str, Any]] = field(default_factory=list)
    #: the RBAC objects the gate knows (set_objects), for the authorizer library; built into a graph
    #: on first use; `decisive`: they are all the cluster's and RBAC (with Node) is its authorizer
    rbac_objects: list[Mapping[str, Any]] = field(default_factory=list)
    decisive: bool = False
    _graph: Any = None

    def set_objects(self, objects: Iterable[Mapping[str, Any]], *, decisive: bool = False) -> None:
        """The objects the gate knows: of the policies' param kinds, params candidates next to the
        policy directories' objects (which win over an object of the same kind, namespace and name);
        the RBAC ones, for ``authorizer`` checks (`decisive`: a check RBAC does not allow is denied;
        otherwise it cannot be told, and the policy is not evaluated)."""
        objects = list(objects)
        if self.vap.uses_authorizer:
            from stockade.policies.facts.rbac import RBAC_KINDS

            self.rbac_objects = [o for o in objects if o.get("kind") in RBAC_KINDS]
            self.decisive, self._graph = decisive, None
        wanted = self.vap.param_kinds()
        own = {_ident(o) for o in self.vap.objects}
        self.gate_objects = [
            o
            for o in objects
            if (str(o.get("apiVersion") or ""), str(o.get("kind") or "")) in wanted and _ident(o) not in own
        ]

    def evaluate(self, inp: Mapping[str, Any]) -> list[Violation]:
        return [v for found in self.decide(inp).values() if found for v in found]

    def decide(self, inp: Mapping[str, Any]) -> dict[str, list[Violation] | None]:
        """Per policy: its violations ([] when it passes), or None when no binding applies it to this
        object (match constraints, the binding's resources or its match conditions say no)."""
        obj = inp.get("object") or {}
        operation = "CREATE" if inp.get("operation") in (None, "SCAN", "AUDIT") else str(inp.get("operation"))
        ns_info = inp.get("namespace") or {}
        ns_labels = ns_info.get("labels") if isinstance(ns_info, Mapping) else None
        out: dict[str, list[Violation] | None] = {}
        for binding in self.vap.bindings:
            policy = self.vap.policies[binding.policy]
            out.setdefault(policy.name, None)
            if not any(r.startswith(f"VAP-{policy.name}-") for r in self.rules):
                continue  # every validation of the policy is disabled
            if not matches(policy.spec.get("matchConstraints") or {}, obj, ns_labels, operation):
                continue
            extra = binding.spec.get("matchResources")
            if isinstance(extra, Mapping) and not matches(extra, obj, ns_labels, operation):
                continue
            params_list = self._params(policy, binding, obj)
            if params_list is None:
                found = self._all(
                    policy,
                    f"binding {binding.name}: no params object found (paramRef; params are read from "
                    "the policy directories and the objects the gate knows: the scanned files, the "
                    "audited cluster, the webhook's cache)",
                )
                out[policy.name] = (out[policy.name] or []) + found
                continue
            for params in params_list:
                found_or_none = self._evaluate(policy, inp, obj, operation, ns_info, params)
                if found_or_none is not None:
                    out[policy.name] = (out[policy.name] or []) + found_or_none
        return out

    def _authorize(self, user_info: Mapping[str, Any], check: Any, verb: str) -> tuple[bool | None, str]:
        """One ``authorizer`` check, answered from the RBAC objects the gate knows (bootstrap policy
        included): allowed when a binding allows it; denied only when the gate knows every binding
        and RBAC (with Node) is the cluster's authorizer; otherwise it cannot be told."""
        from stockade.policies.facts.rbac import RBACGraph, Subject

        groups: Sequence[str] = ()
        if check.sa_name:
            subject = Subject("ServiceAccount", check.sa_name, check.sa_namespace)
        else:
            user = str(user_info.get("username") or "")
            if not user:
                return None, "the requesting user's permissions: a scan and an audit have no request"
            subject = Subject("User", user)
            groups = [str(g) for g in user_info.get("groups") or ()]
        if self._graph is None:
            self._graph = RBACGraph.from_objects(self.rbac_objects)
        binding = self._graph.allowing(
            subject,
            groups,
            verb,
            group=check.group,
            resource=check.resource,
            sub=check.subresource,
            namespace=check.ns,
            name=check.obj_name,
            path=check.path if check.is_path else "",
        )
        if binding is not None:
            return True, f"RBAC: allowed by {binding} of {binding.role}"
        if not self.decisive:
            return None, (
                f"no RBAC binding known here lets {subject} {verb} that, but the gate does not know "
                "every binding of the cluster (a scan; an incomplete audit or cache), or the cluster "
                "has authorizers besides RBAC (rbac.authorization_modes)"
            )
        if not check.sa_name and _node_user(str(user_info.get("username") or ""), groups):
            return None, "a node's request: the Node authorizer decides it, not RBAC"
        return False, f"RBAC: no binding lets {subject} {verb} that"

    def _all(self, policy: Policy, msg: str, *, unevaluated: bool = False) -> list[Violation]:
        """A violation of every validation of the policy (params missing, a match condition's error:
        enforced with the binding's actions, as Kubernetes does; or not evaluated); of its
        auditAnnotations rule when it has no validation."""
        mine = [rule for rule_id, rule in self.rules.items() if rule_id.startswith(f"VAP-{policy.name}-")]
        validations = [r for r in mine if not r.id.endswith(f"-{ANNOTATIONS}")]
        return [Violation(rule=rule, msg=msg, unevaluated=unevaluated) for rule in validations or mine]

    def _params(self, policy: Policy, binding: Binding, obj: Mapping[str, Any]) -> list[Any] | None:
        """[None] without paramKind; the matching params objects; None when required and missing."""
        kind = policy.spec.get("paramKind")
        if not isinstance(kind, Mapping):
            return [None]
        ref = binding.spec.get("paramRef") or {}
        candidates = [
            o
            for o in (*self.vap.objects, *self.gate_objects)
            if o.get("kind") == kind.get("kind") and o.get("apiVersion") == kind.get("apiVersion")
        ]
        ns = ref.get("namespace") or (obj.get("metadata") or {}).get("namespace")
        if ref.get("name"):
            found = [
                o
                for o in candidates
                if (o.get("metadata") or {}).get("name") == ref["name"]
                and (not ns or (o.get("metadata") or {}).get("namespace") in (None, "", ns))
            ]
        elif isinstance(ref.get("selector"), Mapping):
            found = [
                o
                for o in candidates
                if selector_matches(ref["selector"], (o.get("metadata") or {}).get("labels") or {})
            ]
        else:
            found = []
        if found:
            return [_without_values(o) for o in found]
        return [] if ref.get("parameterNotFoundAction") == "Allow" else None

    def _evaluate(
        self,
        policy: Policy,
        inp: Mapping[str, Any],
        obj: Mapping[str, Any],
        operation: str,
        ns_info: Any,
        params: Any,
    ) -> list[Violation] | None:
        spec = policy.spec
        fail = spec.get("failurePolicy", "Fail") != "Ignore"
        md = obj.get("metadata") or {}
        namespace = md.get("namespace")
        group, version, plural = _resource(obj)
        kind = str(obj.get("kind") or "")
        request = {
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": plural},
            "name": md.get("name") or "",
            "namespace": namespace or "",
            "operation": operation,
            "userInfo": inp.get("userInfo") or {},
            "dryRun": False,
        }
        ns_object = namespace_object(namespace, ns_info)
        values: dict[str, Any] = {
            "object": obj,
            "oldObject": inp.get("oldObject"),
            "request": request,
            "params": params,
            "namespaceObject": ns_object,
            "variables": {},
        }

        annotations: dict[str, str] = {}
        token = uuid.uuid4().hex
        if "authorizer" in repr(spec):
            AUTHORIZERS[token] = functools.partial(self._authorize, inp.get("userInfo") or {})
            values["authorizer"] = self.env.authorizer(token, request)
        try:
            results = run_code(self.env, spec, values, fail=fail, annotations=annotations)
        finally:
            AUTHORIZERS.pop(token, None)
        if isinstance(results, NotMatched):
            return None
        if isinstance(results, Unevaluated):
            return self._all(policy, f"not evaluated by stockade: {results.reason}", unevaluated=True)
        out: list[Violation] = []
        for index, message, reason in results:
            if index is None:  # a match condition's error: every validation
                out += self._all(policy, message)
                continue
            rule = self.rules.get(f"VAP-{policy.name}-{index}")
            if rule is not None:
                details: dict[str, Any] = {"reason": reason}
                if annotations:  # as the API server records them on the audit event: <policy>/<key>
                    details["auditAnnotations"] = {f"{policy.name}/{k}": v for k, v in annotations.items()}
                out.append(Violation(rule=rule, msg=message, details=details))
        return out


def _without_values(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Secret as params: its key names only (``dataKeys``), never its values, in every gate (the
    audit lists Secrets so), so no messageExpression can carry a Secret's data into a report."""
    if obj.get("kind") != "Secret" or obj.get("apiVersion") != "v1":
        return obj
    from stockade.policies.facts.credentials import key_names_only

    reduced = copy.deepcopy(dict(obj))
    key_names_only(reduced)
    return reduced


def _ident(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    md = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion") or ""),
        str(obj.get("kind") or ""),
        str(md.get("namespace") or ""),
        str(md.get("name") or ""),
    )


def _node_user(user: str, groups: Sequence[str]) -> bool:
    return user.startswith("system:node:") or "system:nodes" in groups


def namespace_object(namespace: Any, ns_info: Any) -> dict[str, Any] | None:
    """CEL's ``namespaceObject``: the object's Namespace as the gate knows it (name and labels; None
    for a cluster-scoped object)."""
    if not namespace or not isinstance(ns_info, Mapping):
        return None
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": namespace, "labels": ns_info.get("labels") or {}},
    }


class _Unsupported(Exception):
    pass


@dataclass(frozen=True)
class Unevaluated:
    """The code uses what this CEL environment lacks: reported as not evaluated, never as passing."""

    reason: str


class NotMatched:
    """The match conditions say no: the policy does not apply (Kyverno's and gator's "skip")."""


NOT_MATCHED = NotMatched()


def run_code(
    env: Environment,
    code: Mapping[str, Any],
    values: dict[str, Any],
    *,
    fail: bool,
    annotations: dict[str, str] | None = None,
) -> list[tuple[int | str | None, str, str]] | Unevaluated | NotMatched:
    """Evaluate a policy's CEL code (``matchConditions``, ``variables``, ``validations``: a
    ValidatingAdmissionPolicy's spec, or a Gatekeeper template's K8sNativeValidation source) on
    `values` (the variables; ``values["variables"]`` may hold predefined ones, such as Gatekeeper's
    ``params`` and ``anyObject``). Returns (validation index, message, reason) per violation; an
    index of None is a match condition's error (every validation fails, when `fail`)."""
    predefined = dict(values.get("variables") or {})
    values = {**values, "variables": predefined}

    def run(expression: str) -> tuple[Any, str | None]:
        try:
            outcome = env.evaluate(expression, env.activation(values))
        except CelError as exc:
            raise _Unsupported(str(exc)) from None
        if outcome.error is not None and UNDECIDABLE in outcome.error:
            raise _Unsupported(outcome.error.split(UNDECIDABLE, 1)[1])
        return outcome.value, outcome.error

    try:
        for cond in code.get("matchConditions") or ():
            value, error = run(str(cond.get("expression") or ""))
            if error is not None:
                if fail:
                    return [(None, f"matchCondition {cond.get('name')!r} failed: {error}", "Invalid")]
                return NOT_MATCHED
            if value is not True:
                return NOT_MATCHED
        for var in code.get("variables") or ():
            value, error = run(str(var.get("expression") or ""))
            values["variables"] = {
                **values["variables"],
                str(var.get("name")): value if error is None else None,
            }
        out: list[tuple[int | str | None, str, str]] = []
        for i, validation in enumerate(code.get("validations") or ()):
            expression = str(validation.get("expression") or "")
            value, error = run(expression)
            if error is not None:
                if fail:
                    out.append((i, f"expression {expression!r} could not be evaluated: {error}", "Invalid"))
                continue
            if value is not True:
                out.append(
                    (i, _message(validation, expression, run), str(validation.get("reason") or "Invalid"))
                )
        if annotations is not None:  # auditAnnotations: a string value is kept, null omits the key
            for entry in code.get("auditAnnotations") or ():
                expression = str(entry.get("valueExpression") or "")
                value, error = run(expression)
                if error is None and value is not None and not isinstance(value, str):
                    error = f"valueExpression '{expression}' resulted in unsupported return type"
                if error is not None:
                    if fail:  # as for a validation: the API server denies under failurePolicy Fail
                        out.append((ANNOTATIONS, f"auditAnnotation {entry.get('key')!r}: {error}", "Invalid"))
                    continue
                if isinstance(value, str):
                    annotations[str(entry.get("key"))] = value[:10000]
        return out
    except _Unsupported as exc:
        return Unevaluated(str(exc))


def _message(validation: Mapping[str, Any], expression: str, run: Any) -> str:
    text = validation.get("messageExpression")
    if isinstance(text, str) and text:
        value, error = run(text)
        if error is None and isinstance(value, str) and value.strip() and "\n" not in value:
            return value
    message = validation.get("message")
    if isinstance(message, str) and message:
        return message
    return f"failed expression: {expression}"


def _unsupported(message: str) -> bool:
    """A compile error that names something Kubernetes has and this environment lacks."""
    return (
        "undeclared reference" in message
        or "not available outside the API server" in message
        or ("found no matching overload" in message)
    )
