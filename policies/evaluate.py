"""Resource -> rule input -> engine -> violations -> decisions: the pipeline every gate runs.

Scan, admission and audit differ only in where resources come from and where findings go; they all
call :class:`Evaluator`, so the same object gets the same verdict at every gate.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from stockade.policies.config.settings import Config, ConfigError
from stockade.policies.config.waivers import ExceptionBook
from stockade.policies.engines.base import Engine, EngineInput, evaluate_inputs
from stockade.policies.engines.library import Library, load_library
from stockade.policies.engines.select import build_engine
from stockade.policies.facts import Inventory, facts_for
from stockade.policies.kinds.api import CUSTOM_ALIAS, custom_resource
from stockade.policies.kinds.workloads import WorkloadKinds, rule_kind
from stockade.policies.model import (
    Action,
    Finding,
    Operation,
    Resource,
    Rule,
    Severity,
    Violation,
    namespace_info,
)

#: namespaced RBAC kinds: out of scope only by scope.rbac_excluded_namespaces
_RBAC_KINDS = frozenset({"Role", "RoleBinding"})


class FactsSource(Protocol):
    """Where a gate gets namespace labels and cross-object facts: the scanned set, the webhook's
    inventory cache, a cluster's lists."""

    def namespace(self, name: str | None) -> dict[str, Any]: ...

    def facts(self, obj: Mapping[str, Any], pod: Mapping[str, Any] | None = None) -> dict[str, Any]: ...


class InventoryFacts:
    """Facts from a fixed inventory: the scanned set, a test's objects, or nothing (`--no-inventory`)."""

    def __init__(self, inventory: Inventory | None = None) -> None:
        # not `inventory or ...`: an Inventory has a length, and one holding no indexed objects (only
        # pods, say) is falsy although complete
        self.inventory = inventory if inventory is not None else Inventory(complete=False)

    def namespace(self, name: str | None) -> dict[str, Any]:
        obj = self.inventory.get("Namespace", None, name) if name else None
        return namespace_info(obj, name)

    def facts(self, obj: Mapping[str, Any], pod: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return facts_for(obj, self.inventory, pod)

    def snapshot(self) -> tuple[int, list[Mapping[str, Any]]]:
        return self.inventory.version, self.inventory.objects()


def namespace_for(resource: Resource, source: FactsSource) -> dict[str, Any]:
    """`input.namespace` in every gate: a Namespace describes itself, other objects get theirs."""
    if resource.kind == "Namespace":
        return namespace_info(resource.obj, resource.name)
    return source.namespace(resource.namespace)


def unknown_rule_ids(config: Config, rule_ids: Iterable[str]) -> None:
    """Raise ConfigError for a rule id, or a pattern, that names no rule of the library: a typo in
    `rules`, `overrides[].rules`, `exceptions[].rules` or `suppressions.<gate>.rules` would otherwise
    do nothing, silently (an override meant to deny would leave the rule warning). The message
    suggests the closest ids."""
    import difflib
    import fnmatch

    ids = sorted(set(rule_ids))
    problems = []

    def check(where: str, pattern: str) -> None:
        if any(fnmatch.fnmatchcase(rid, pattern) for rid in ids):
            return
        close = difflib.get_close_matches(pattern, ids, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        problems.append(f"{where}: {pattern!r} names no rule of the library{hint}")

    for rid in config.rules:
        check("rules", rid)
    for i, override in enumerate(config.overrides):
        for pattern in override.rules:
            check(f"overrides[{i}].rules", pattern)
    for i, exception in enumerate(config.exceptions):
        for pattern in exception.rules:
            check(f"exceptions[{i}] ({exception.name}).rules", pattern)
    for gate in ("admission", "audit"):
        for pattern in getattr(config.suppressions, gate).rules:
            check(f"suppressions.{gate}.rules", pattern)
    if problems:
        raise ConfigError("; ".join(problems))


class Evaluator:
    """Decides findings for resources, with one configuration and one engine."""

    def __init__(self, engine: Engine, config: Config, today: dt.date | None = None) -> None:
        self.engine = engine
        self.config = config
        self.workloads = WorkloadKinds(config.workload_kinds())
        self.exceptions = ExceptionBook(config.exceptions, today)
        self.rules: dict[str, Rule] = {}
        for rule in engine.library.rules.values():
            setting = config.rules.get(rule.id)
            if setting is not None and setting.severity is not None:
                rule = dataclasses.replace(rule, severity=setting.severity)
            self.rules[rule.id] = rule
        #: the kinds the rules name (a custom resource of another kind is evaluated as CUSTOM_ALIAS)
        self._named_kinds = frozenset(k for rule in self.rules.values() for k in rule.kinds)

    @classmethod
    def default(
        cls,
        config: Config | None = None,
        policy_dirs: Sequence[Path] = (),
        *,
        library: Library | None = None,
        today: dt.date | None = None,
        opa_url: str | None = None,
        isolated: bool = False,
    ) -> Evaluator:
        """The evaluator of a config and library; ``opa_url`` evaluates on an OPA server, and
        ``isolated`` runs the embedded engine in a child process with the config's admission
        evaluation timeout (the webhook): :func:`~stockade.policies.engines.select.build_engine`."""
        config = config or Config()
        library = library or load_library(policy_dirs)
        unknown_rule_ids(config, library.rules)
        engine = build_engine(library, config, policy_dirs, opa_url=opa_url, isolated=isolated)
        return cls(engine, config, today)

    def set_inventory(self, objects: Iterable[Mapping[str, Any]], *, complete: bool = False) -> bool:
        """Give the rules that read beyond their input the objects the gate knows: Gatekeeper templates
        that read `data.inventory`, VAPs their params and, for ``authorizer`` checks, the RBAC
        objects (`complete`: they are all the cluster's, as in a complete audit or a synced cache).
        Returns whether any rule reads them: the gate must then evaluate in this process (worker
        processes have their own engines, without them)."""
        if not self.engine.library.uses_inventory:
            return False
        set_inventory = getattr(self.engine, "set_inventory", None)
        if set_inventory is not None:
            modes = set(self.config.rbac.authorization_modes)
            set_inventory(objects, decisive=complete and modes <= {"Node", "RBAC"})
        return True

    def in_scope(self, resource: Resource) -> bool:
        if resource.kind == "Namespace":
            return not self.config.scope.namespace_excluded(resource.name)
        rbac = resource.kind in _RBAC_KINDS and str(resource.obj.get("apiVersion") or "").startswith(
            "rbac.authorization.k8s.io/"
        )
        return not self.config.scope.namespace_excluded(resource.namespace, rbac=rbac)

    def build_input(
        self,
        resource: Resource,
        *,
        operation: Operation = Operation.SCAN,
        namespace: Mapping[str, Any] | None = None,
        facts: Mapping[str, Any] | None = None,
        old_object: Mapping[str, Any] | None = None,
        user_info: Mapping[str, Any] | None = None,
        pod: Mapping[str, Any] | None = None,
        pod_known: bool = False,
    ) -> dict[str, Any]:
        """The rule input for a resource; for a workload, for one of its pod specs (``pod``, one of
        :meth:`WorkloadKinds.pods`; the first when not given, unless ``pod_known`` says that None
        is the answer: the object has no pod spec)."""
        ns = dict(namespace) if namespace is not None else namespace_info(None, resource.namespace)
        inp: dict[str, Any] = {
            "object": resource.obj,
            "operation": operation.value,
            "namespace": ns,
            "facts": dict(facts or {}),
        }
        if pod is None and not pod_known:
            pods = self.workloads.pods(resource.obj)
            pod = pods[0] if pods else None
        if pod is not None:
            inp["pod"] = pod
        if old_object is not None:
            inp["oldObject"] = old_object
        if user_info is not None:
            inp["userInfo"] = user_info
        return inp

    def inputs(
        self,
        resource: Resource,
        *,
        source: FactsSource | None = None,
        facts: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[EngineInput]:
        """What the engine evaluates for a resource: one input per pod spec of a workload (facts from
        ``source`` for each, since each may name another ServiceAccount or RuntimeClass), one input
        for other objects. Keyword arguments are those of :meth:`build_input`."""
        # The object's kind and pod specs are read once here and handed to every later step (its
        # input, its facts, each analyzer), which never look them up again.
        info = self.workloads.info(resource.obj)
        kind = rule_kind(info) or resource.kind
        if info is None and kind not in self._named_kinds and custom_resource(resource.obj):
            kind = CUSTOM_ALIAS  # a custom resource no rule names: the rules that read any object's text
        inventory = getattr(source, "inventory", None)
        if isinstance(inventory, Inventory):
            # what the API server authorizes depends on its version (rbac.kubernetes_version); the
            # facts are computed for the version of this config, in every gate
            inventory.kubernetes_minor = self.config.rbac.kubernetes_minor
        pods: list[Mapping[str, Any] | None] = list(self.workloads.pods(resource.obj, info)) or [None]
        out = []
        for pod in pods:
            pod_facts = facts if facts is not None or source is None else source.facts(resource.obj, pod)
            out.append((kind, self.build_input(resource, facts=pod_facts, pod=pod, pod_known=True, **kwargs)))
        return out

    def scoped_inputs(self, resource: Resource, **kwargs: Any) -> list[EngineInput]:
        """What :meth:`violations` evaluates: :meth:`inputs`, none for a resource out of scope."""
        return self.inputs(resource, **kwargs) if self.in_scope(resource) else []

    def violations(self, resource: Resource, **kwargs: Any) -> list[Violation]:
        """Keyword arguments are those of :meth:`inputs`."""
        inputs = self.scoped_inputs(resource, **kwargs)
        return evaluate_inputs(self.engine, inputs) if inputs else []

    def decide(self, resource: Resource, violations: Sequence[Violation]) -> list[Finding]:
        ref = resource.ref()
        labels = resource.labels  # once per object, not once per violation
        out = []
        for v in violations:
            rule = self.rules.get(v.rule.id, v.rule)
            if v.error:  # the rule could not decide: a high-severity deny of its own
                rule = dataclasses.replace(rule, severity=Severity.HIGH)
            out.append(
                Finding(
                    rule=rule,
                    action=Action.DENY
                    if v.error
                    else Action.AUDIT
                    if v.unevaluated or v.details.get("note") is True  # a note never fails a gate
                    else self.action_for(rule, ref.namespace, ref.cluster),
                    error=v.error,
                    message=v.msg,
                    resource=ref,
                    file=resource.origin.file,
                    line=resource.origin.line_of(v.path),
                    path=v.path,
                    details=v.details,
                    exception=self.exceptions.match(rule.id, ref, labels),
                    template=v.template,
                )
            )
        return out

    def evaluate(self, resource: Resource, **kwargs: Any) -> list[Finding]:
        """Findings for one resource; keyword arguments are those of :meth:`build_input`."""
        return self.decide(resource, self.violations(resource, **kwargs))

    def action_for(self, rule: Rule, namespace: str | None, cluster: str | None) -> Action:
        setting = self.config.rules.get(rule.id)
        action = setting.action if setting is not None and setting.action is not None else rule.action
        for override in self.config.overrides:
            if override.matches(rule.id, namespace, cluster):
                action = override.action
        return action
