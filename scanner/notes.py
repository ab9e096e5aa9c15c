"""The notes of a batch run (:class:`~stockade.scanner.result.Note`): what its rules could not decide
on this input, and controls left unconfigured, computed once per run in this process from what was
read, never per object.

- **Egress not evaluated** (scan): the egress facts (:mod:`stockade.policies.facts.egress`) of a
  workload are unknown when the scanned set holds neither its namespace's Namespace object nor any of
  its network policies: STK-NET-001 (isolation) and the workload part of STK-NET-006 (metadata
  endpoints) then report nothing. Whether a namespace's policies are known is asked of the same
  analyzer the rules' facts come from, once per namespace.
- **Cross-layer checks not evaluated** (scan): the scan read AKS clusters (templates, plans) and
  Kubernetes objects but cannot tell which cluster the objects run on (several clusters, no
  ``azure.cluster``): STK-AZ-035..038 then report nothing, and the note says how to name it.
- **Registry allowlist not configured** (scan and audit): with ``images.allowed_registries`` empty,
  STK-IMG-001 checks nothing (the default), so the run says which registries its workloads pull from.
  Registries are normalised as the image rules do (:func:`image_registry`: ``parse(ref).domain`` of
  ``policies/rego/lib/images.rego``, as the image facts compute it); ``stockade
  init`` writes the same list into a new stockade.yaml.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stockade.policies.config.settings import Config
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import aks_cluster, egress
from stockade.policies.facts.images import image_texts, reference_fact
from stockade.policies.kinds.workloads import WorkloadKinds, group_of, unmodelled_containers
from stockade.policies.model import Resource, arm_type
from stockade.scanner.reports.base import count
from stockade.scanner.result import ClusterStats, Note

ISOLATION_RULE = "STK-NET-001"
METADATA_RULE = "STK-NET-006"
REGISTRY_RULE = "STK-IMG-001"
#: names listed in a note before "and N more"
LISTED = 5


def image_registry(ref: object) -> str | None:
    """The registry an image reference pulls from, lower-case, Docker Hub as ``docker.io`` ("nginx",
    "user/app", "index.docker.io/x"); None for a string that is not an image reference (a
    placeholder, a template), which the image rules do not judge either. The image rules' own
    parse, done once in Python (:func:`~stockade.policies.facts.images.reference_fact`)."""
    parsed = reference_fact(ref) if isinstance(ref, str) and ref != "" else False
    return parsed["domain"] if parsed else None


def workload_registries(
    objects: Iterable[Mapping[str, Any]], kinds: WorkloadKinds
) -> tuple[int, Counter[str]]:
    """(how many of `objects` are workloads, how many workloads pull from each registry)."""
    return _registries(kinds.pods(obj) for obj in objects)


def _registries(pod_lists: Iterable[list[dict[str, Any]]]) -> tuple[int, Counter[str]]:
    """:func:`workload_registries` of the objects' ``input.pod`` lists ([] for other kinds)."""
    workloads = 0
    used: Counter[str] = Counter()
    for pods in pod_lists:
        if pods:
            workloads += 1
            used.update({r for pod in pods for r in map(image_registry, image_texts(pod)) if r is not None})
    return workloads, used


# ---- the notes ----------------------------------------------------------------------------------------


def _enabled(config: Config, rules: Mapping[str, object], rule_id: str) -> bool:
    setting = config.rules.get(rule_id)
    return rule_id in rules and (setting is None or setting.enabled)


def _listed(names: Sequence[str]) -> str:
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")


def allowlist_configured(config: Config) -> bool:
    """Whether STK-IMG-001 has a list to check (entries that are not empty once "/" is trimmed)."""
    return any(e.rstrip("/") for e in config.images.allowed_registries)


def registry_note(
    config: Config, rules: Mapping[str, object], workloads: int, used: Counter[str]
) -> Note | None:
    """The note of an empty registry allowlist: when STK-IMG-001 is enabled and a workload was read."""
    if workloads == 0 or allowlist_configured(config) or not _enabled(config, rules, REGISTRY_RULE):
        return None
    names = sorted(used)
    if names:
        verb = "is" if len(names) == 1 else "are"
        here = f"{count(len(names), 'registry', 'registries')} {verb} in use here: {_listed(names)}; "
        here += "add them to stockade.yaml"
    else:
        here = "no image of the workloads here names a registry"
    return Note(
        REGISTRY_RULE,
        f"images.allowed_registries is not configured: {REGISTRY_RULE} checks no registry; {here} "
        "(`stockade init` writes the registries a repository uses)",
        workloads,
    )


def egress_note(
    evaluator: Evaluator,
    todo: Sequence[Resource],
    source: InventoryFacts,
    pod_lists: Sequence[list[dict[str, Any]]] | None = None,
) -> Note | None:
    """The note of workloads whose egress the scan cannot decide (their namespace's policies are not in
    the scanned set), when STK-NET-001 or STK-NET-006 is enabled; `pod_lists`: each object's
    ``input.pod`` list, when the caller has them."""
    config = evaluator.config
    rules = [r for r in (ISOLATION_RULE, METADATA_RULE) if _enabled(config, evaluator.rules, r)]
    if not rules or source.inventory.complete:
        return None
    known: dict[str, bool] = {}
    unknown: Counter[str] = Counter()
    for i, resource in enumerate(todo):
        pods = pod_lists[i] if pod_lists is not None else evaluator.workloads.pods(resource.obj)
        if not pods or pods[0].get("namespaced") is False:
            continue  # not a workload, or a cluster-scoped template (no egress facts either way)
        namespace = resource.namespace or "default"
        if namespace not in known:  # the analyzer the rules' facts come from, once per namespace
            facts = egress.facts(resource.obj, source.inventory, pods[0]).get("egress", {})
            known[namespace] = facts.get("policiesKnown") is not False
        if not known[namespace]:
            unknown[namespace] += 1
    if not unknown:
        return None
    n = sum(unknown.values())
    namespaces = [f"{ns}: {unknown[ns]}" for ns in sorted(unknown)]
    return Note(
        rules[0],
        f"{' and '.join(rules)} could not evaluate the egress of {count(n, 'workload')} "
        f"({'namespace' if len(unknown) == 1 else 'namespaces'} {_listed(namespaces)}): the scanned files "
        "hold neither their namespace's Namespace object nor any of its NetworkPolicies, so whether a "
        "policy isolates them is unknown; scan each namespace's manifests together (its Namespace or "
        "NetworkPolicies with its workloads), or audit the cluster (stockade audit)",
        n,
    )


#: `ClusterStats.extras` key of an audited cluster's :func:`workload_registries`
REGISTRIES = "registries"


def audit_notes(evaluator: Evaluator, clusters: Iterable[ClusterStats]) -> list[Note]:
    """Every note of an audit, from what each cluster's evaluation recorded under :data:`REGISTRIES`
    (a cluster's inventory is complete, so its egress facts are known)."""
    workloads, used = 0, Counter[str]()
    for stats in clusters:
        recorded = stats.extras.get(REGISTRIES)
        if isinstance(recorded, tuple):
            workloads += recorded[0]
            used.update(recorded[1])
    note = registry_note(evaluator.config, evaluator.rules, workloads, used)
    return [note] if note is not None else []


def scan_notes(evaluator: Evaluator, todo: Sequence[Resource], source: InventoryFacts) -> list[Note]:
    """Every note of a scan of `todo` (the objects in scope), from the scan's inventory."""
    pod_lists = [evaluator.workloads.pods(r.obj) for r in todo]  # walked once for both notes
    workloads, used = _registries(pod_lists)
    notes = [
        egress_note(evaluator, todo, source, pod_lists),
        registry_note(evaluator.config, evaluator.rules, workloads, used),
        cross_layer_note(todo, source),
        unmodelled_note(evaluator.workloads, todo),
    ]
    return [n for n in notes if n is not None]


def unmodelled_note(workloads: WorkloadKinds, todo: Sequence[Resource]) -> Note | None:
    """Objects of kinds the kinds table does not hold (and no configuration declares) that write
    containers some controller runs (a SeldonDeployment's componentSpecs, a TrainJob's trainer): the
    pod rules never saw them, which a scan without findings must not leave unsaid."""
    objects_of: Counter[tuple[str, str]] = Counter()  # (kind, group): objects
    paths_of: dict[tuple[str, str], dict[str, None]] = {}  # (kind, group): where, in first-seen order
    for resource in todo:
        if workloads.info(resource.obj) is not None or arm_type(resource.obj) is not None:
            continue  # a workload kind (judged as its pods), or an Azure resource (Azure's rules')
        paths = unmodelled_containers(resource.obj)
        if paths:
            key = (str(resource.obj.get("kind")), group_of(resource.obj.get("apiVersion")) or "core")
            objects_of[key] += 1
            paths_of.setdefault(key, {}).update(dict.fromkeys(paths))
    if not objects_of:
        return None
    objects = sum(objects_of.values())
    listed = [
        f"{kind} ({group}) at {_listed(list(paths_of[kind, group]))}" + (f" ({n} objects)" if n > 1 else "")
        for (kind, group), n in sorted(objects_of.items())
    ]
    return Note(
        None,
        f"{count(objects, 'object')} of kinds stockade does not model {'write' if objects > 1 else 'writes'} "
        "containers that a controller "
        f"runs, and the pod rules did not judge them: {'; '.join(listed[:LISTED])}"
        + (f"; and {len(listed) - LISTED} more kinds" if len(listed) > LISTED else "")
        + ". A kind whose objects hold pod specs or pod templates can be declared in stockade.yaml "
        "`workloads:` (pod_specs, pod_templates) to judge them",
        objects,
    )


def cross_layer_note(todo: Sequence[Resource], source: InventoryFacts) -> Note | None:
    """The cross-layer rules (STK-AZ-035..038) not evaluated: the scan read Kubernetes objects and
    AKS clusters but cannot tell which cluster the objects run on (:func:`aks_cluster.join_problem`)."""
    problem = aks_cluster.join_problem(source.inventory)
    if problem is None:
        return None
    objects = sum(1 for r in todo if arm_type(r.obj) is None)
    if not objects:
        return None  # only the Azure layer: nothing to join
    what = count(objects, "Kubernetes object")
    return Note(None, f"cross-layer checks (STK-AZ-035..038) not evaluated for {what}: {problem}", objects)
