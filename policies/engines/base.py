"""The one engine interface, and how an object's inputs are evaluated through it.

An :class:`Engine` answers one rule input for one kind with the violations of the library's rules
(and of the frameworks' constraints). :func:`evaluate_inputs` evaluates one object, all of its pod
specs, through any engine; an engine that evaluates elsewhere (the webhook's engine process) takes
the whole batch in one call and runs this same function there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from stockade.policies.config.settings import Config
from stockade.policies.engines.library import WORKLOAD_OBJECT, Library
from stockade.policies.kinds.workloads import WORKLOAD_ALIAS
from stockade.policies.model import Violation, is_mapping


class RuleEvaluationError(RuntimeError):
    """The engine failed on an input (rule error, engine fault); gates decide how to fail."""


class Engine(Protocol):
    """What every backend offers: evaluate one input for one kind, return the violations."""

    library: Library

    def evaluate(
        self, kind: str, input: Mapping[str, Any], *, library: bool = True, constraints: bool = True
    ) -> list[Violation]:
        """Violations of the library's rules for `kind` (``library``) and of the Gatekeeper
        constraints matching the object (``constraints``)."""
        ...

    def clone(self) -> Engine: ...


#: What the engine evaluates: (rule kind, input). A workload with several pod specs is several.
EngineInput = tuple[str, dict[str, Any]]


def evaluate_inputs(engine: Engine, inputs: Sequence[EngineInput]) -> list[Violation]:
    """The violations of one object, evaluated once per pod spec it holds.

    A violation found for every pod spec (a rule about the object itself) is the object's and reported
    once; the others name the pod spec they were found in (``Violation.template``), so a finding in a
    RayCluster's third worker group says so.

    Custom workload kinds (evaluated under ``@workloads``) give the library's rules the object's
    ``apiVersion``, ``kind`` and ``metadata`` as ``input.object`` and the pod spec as ``input.pod``:
    an object with N pod specs then costs N pod evaluations, not N evaluations of the whole object.
    Gatekeeper constraints judge the whole object, once, as Gatekeeper does.

    An engine that evaluates elsewhere (:class:`~stockade.policies.engines.process.ProcessEngine`)
    takes the whole batch in one call and runs this same function there.
    """
    batch = getattr(engine, "evaluate_inputs", None)
    if batch is not None:
        result: list[Violation] = batch(inputs)
        return result
    if inputs and inputs[0][0] == WORKLOAD_ALIAS:
        obj = inputs[0][1]["object"]
        slim = {k: obj[k] for k in WORKLOAD_OBJECT if k in obj}
        found = [engine.evaluate(kind, {**inp, "object": slim}, constraints=False) for kind, inp in inputs]
        whole = engine.evaluate(inputs[0][0], inputs[0][1], library=False)
    else:
        found = [engine.evaluate(kind, inp) for kind, inp in inputs]
        whole = []
    found = [_placed(vs, inp) for vs, (_, inp) in zip(found, inputs, strict=True)]
    labels = [(inp.get("pod") or {}).get("template") or None for _, inp in inputs]
    if len(found) == 1:
        own = [dataclasses.replace(v, template=labels[0]) for v in found[0]] if labels[0] else found[0]
        return own + whole
    keys = [{(v.rule.id, v.path, v.msg) for v in vs} for vs in found]
    common = set.intersection(*keys) if keys else set()
    out: list[Violation] = []
    seen: set[tuple[Any, ...]] = set()
    for label, vs in zip(labels, found, strict=True):
        for v in vs:
            key: tuple[Any, ...] = (v.rule.id, v.path, v.msg)
            shared = key in common
            if not shared:
                key = (*key, label)
            if key in seen:
                continue
            seen.add(key)
            out.append(v if shared else dataclasses.replace(v, template=label))
    return out + whole


def _placed(found: list[Violation], inp: Mapping[str, Any]) -> list[Violation]:
    """``found`` with paths into a pod spec an operator builds moved to the field of the object that
    writes them: a container an operator adds (``input.pod.injected``: KubeRay's autoscaler, moved to
    ``spec.autoscalerOptions``), and the fields of a pod built from another shape (``input.pod.moved``:
    an Argo template's ``containers[0]`` is its ``container``, its pod's ``hostNetwork`` the
    workflow's). The longest path that matches moves."""
    pod = inp.get("pod")
    if not is_mapping(pod) or not (pod.get("injected") or pod.get("moved")):
        return found
    spec_path = tuple(pod.get("specPath") or ())
    moved = {(*spec_path, "containers", i["container"]): tuple(i["at"]) for i in pod.get("injected") or ()}
    moved.update({(*spec_path, *m["from"]): tuple(m["at"]) for m in pod.get("moved") or ()})
    lengths = sorted({len(k) for k in moved}, reverse=True)
    out = []
    for v in found:
        head = next((tuple(v.path[:n]) for n in lengths if tuple(v.path[:n]) in moved), None)
        out.append(v if head is None else dataclasses.replace(v, path=(*moved[head], *v.path[len(head) :])))
    return out


def enabled_rules(config: Config, library: Library) -> list[str]:
    """The ids of the library's rules the configuration leaves enabled."""
    return [rid for rid in library.rules if config.rules.get(rid) is None or config.rules[rid].enabled]
