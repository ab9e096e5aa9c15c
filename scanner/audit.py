"""`stockade audit`: live clusters in, one fleet report out.

The same pipeline as `stockade scan` (resources → facts → engine → decisions), with clusters as the
source. What differs is scale, and that a cluster is a shared, live system:

1. **List** every kind the enabled rules and the facts need, from each cluster in parallel (one
   thread per cluster: listing is I/O), page by page (:mod:`stockade.scanner.sources.cluster`).
   One unreachable cluster, or one forbidden kind, is a coverage gap, never a crash.
2. **Fold pods into their workloads while listing.** Pods of one ReplicaSet / Job / StatefulSet
   revision share a spec, so only one pod per (owning workload, template hash) is kept; the others
   only add to its replica count. 150,000 pods from 3,000 Deployments become 3,000 evaluations and
   a few thousand objects in memory. Findings on that pod are reported on the owning workload (the
   Deployment, not its ReplicaSet; the CronJob, not its Job), with the number of pods affected.
   The pod is what actually runs (mutating webhooks and LimitRanges applied), so it is evaluated
   rather than the template; a workload with no pods at all (scaled to zero, a CronJob between
   runs) is evaluated from its own template. Bare pods are evaluated one by one.
3. **Facts** come from the cluster's own inventory, which is complete (absence means "does not
   exist") only when every kind the analyzers index was listed.
4. **Evaluate and decide** in this thread (regorus holds the GIL; exception usage is counted once),
   with `operation: AUDIT` and the cluster's name, so `overrides` and exceptions that name clusters
   apply.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import pickle
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from stockade.policies.config.waivers import SuppressionBook
from stockade.policies.decoding.decode import TOO_DEEP, deeper_than
from stockade.policies.engines.library import KIND_ALIASES
from stockade.policies.evaluate import Evaluator, InventoryFacts, namespace_for
from stockade.policies.facts.inventory import INDEXED_KINDS, Inventory
from stockade.policies.facts.sandbox import sandbox_summary
from stockade.policies.folding import fold
from stockade.policies.kinds.api import KINDS, KindInfo, guess_plural, info_for, object_kind
from stockade.policies.model import Finding, InputError, Operation, Origin, Resource
from stockade.scanner.notes import REGISTRIES, audit_notes, workload_registries
from stockade.scanner.result import ClusterStats, CoverageGap, Result
from stockade.scanner.scan import Job, ScanOptions, Workers, batch_gc, evaluate_jobs
from stockade.scanner.sources.cluster import (
    HTTP_FORBIDDEN,
    HTTP_NOT_FOUND,
    HTTP_UNAUTHORIZED,
    ClusterReader,
    ListError,
)

#: Controllers whose pods are folded into the workload that owns them.
CONTROLLER_KINDS = (
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
    "ReplicationController",
)
#: Labels that tell apart pods of different templates of one owner.
TEMPLATE_HASH_LABELS = ("pod-template-hash", "controller-revision-hash", "batch.kubernetes.io/controller-uid")


class AuditProgress(Protocol):
    """What the audit reports while it runs (a rich display on a terminal; nothing in CI)."""

    def listed(self, cluster: str, kind: str, objects: int) -> None: ...

    def evaluating(self, cluster: str, total: int) -> None: ...

    def evaluated(self, cluster: str, done: int, findings: int) -> None: ...

    def finished(self, cluster: str, ok: bool, message: str) -> None: ...


class QuietProgress:
    """No display (CI, pipes, tests)."""

    def __enter__(self) -> QuietProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def listed(self, cluster: str, kind: str, objects: int) -> None:
        pass

    def evaluating(self, cluster: str, total: int) -> None:
        pass

    def evaluated(self, cluster: str, done: int, findings: int) -> None:
        pass

    def finished(self, cluster: str, ok: bool, message: str) -> None:
        pass


@dataclass(slots=True)
class Target:
    """One cluster to audit: its name in the report and how to open a reader for it."""

    name: str
    open: Callable[[], ClusterReader]


def kinds_to_list(evaluator: Evaluator) -> list[KindInfo]:
    """The kinds the enabled rules apply to, those the analyzers index, and the pod controllers: the
    built-in ones and every custom workload kind (a RayCluster's pods are folded into it; a CRD that
    is not installed answers 404, "not installed")."""
    # Nodes: only their names and labels, for the sandbox summary (which classes' pools exist).
    wanted: set[str] = set(INDEXED_KINDS) | set(CONTROLLER_KINDS) | {"Pod", "Namespace", "Node"}
    for rule in evaluator.rules.values():
        if rule.id not in getattr(evaluator.engine, "enabled", {rule.id}):
            continue
        for kind in rule.kinds:
            wanted.update(KIND_ALIASES.get(kind, (kind,)))
    listed = [info for info in KINDS.values() if info.kind in wanted]
    # the VAPs' params: a kind the table does not hold is found by discovery in each cluster (plural "")
    params = [
        info_for(api_version, kind)
        or KindInfo(
            api_version.rpartition("/")[0], api_version.rpartition("/")[2], "", kind, True, custom=True
        )
        for api_version, kind in sorted(evaluator.engine.library.vap.param_kinds())
        if kind not in wanted
    ]
    kinds = list(dict.fromkeys([*listed, *evaluator.workloads.custom, *params]))
    # Pods last: the largest list, folded into controllers that are then all known (and the owned
    # ones reduced to their identity first, so that the pods reuse what that frees)
    return [k for k in kinds if k.kind != "Pod"] + [k for k in kinds if k.kind == "Pod"]


# --- one cluster: list and fold ------------------------------------------------------------------


@dataclass(slots=True)
class _PodGroup:
    pod: dict[str, Any]
    count: int = 1


@dataclass(slots=True)
class ClusterSnapshot:
    """What was kept of one cluster's lists: objects to evaluate, pod groups, the inventory."""

    name: str
    objects: list[dict[str, Any]] = field(default_factory=list)  # evaluated as themselves
    controllers: dict[str, dict[str, Any]] = field(default_factory=dict)  # uid -> controller object
    pod_groups: dict[tuple[str, str], _PodGroup] = field(default_factory=dict)  # (owner uid, hash)
    bare_pods: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)  # name and labels only
    inventory: Inventory = field(default_factory=lambda: Inventory(complete=False))
    gaps: list[CoverageGap] = field(default_factory=list)
    stats: ClusterStats = field(default_factory=lambda: ClusterStats(name=""))
    failed: str | None = None  # the cluster could not be listed at all


def _controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return ref
    return None


def _uid(obj: Mapping[str, Any]) -> str:
    md = obj.get("metadata") or {}
    return str(md.get("uid") or f"{obj.get('kind')}/{md.get('namespace')}/{md.get('name')}")


def _template_hash(pod: Mapping[str, Any]) -> str:
    """What tells the pods of one owner's templates apart: the controller's template-hash label, else
    (custom controllers: Ray's groups, a JobSet's jobs, Volcano's tasks label no hash) the labels and
    the spec themselves, without the fields the scheduler sets per pod."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    for key in TEMPLATE_HASH_LABELS:
        if labels.get(key):
            return str(labels[key])
    spec = pod.get("spec")
    spec = (
        {k: v for k, v in spec.items() if k not in ("nodeName", "hostname")}
        if isinstance(spec, Mapping)
        else spec
    )
    digest = hashlib.blake2b(orjson.dumps([labels, spec], option=orjson.OPT_SORT_KEYS), digest_size=16)
    return "content:" + digest.hexdigest()


def collect(reader: ClusterReader, kinds: Sequence[KindInfo], progress: AuditProgress) -> ClusterSnapshot:
    """List one cluster and keep only what the audit needs (module docstring, step 2)."""
    snap = ClusterSnapshot(name=reader.name, stats=ClusterStats(name=reader.name))
    snap.inventory.cluster = reader.name  # per-cluster settings (the sandbox profile) follow the context
    started = time.monotonic()
    listed_indexed: set[str] = set()
    listed_any = False  # some kind was read (a CRD that is not installed does not count)
    for i, info in enumerate(kinds):
        if reader.expired():
            # the cluster's own deadline: what was read stands, what was not is one gap
            names = ", ".join(k.kind for k in kinds[i:])
            limit = f"{reader.deadlines.cluster:g} s"
            snap.gaps.append(
                CoverageGap(reader.name, f"not listed (the lists did not finish within {limit}): {names}")
            )
            break
        try:
            if not info.plural:  # a VAP's param kind the table does not hold
                found = reader.discover(info)
                if found is None:
                    continue  # its group-version does not serve it: nothing of that kind exists
                info = found
            if info.kind == "Pod":
                owners = frozenset(CONTROLLER_KINDS) | {object_kind(k) for k in kinds if k.custom and k.pods}
                _trim_owned(snap)  # what it frees (if the controllers came first), the pods reuse
                _collect_pods(reader, info, snap, owners)
            else:
                kept: list[dict[str, Any]] = []
                for page in reader.pages(info, on_restart=kept.clear):
                    kept.extend(page)
                for obj in kept:
                    if info.kind == "Node":
                        md = obj.get("metadata") or {}
                        snap.nodes.append(
                            {"metadata": {"name": md.get("name"), "labels": md.get("labels") or {}}}
                        )
                        continue
                    if info.kind in CONTROLLER_KINDS or (info.custom and info.pods):
                        snap.controllers[_uid(obj)] = obj
                    else:
                        snap.objects.append(obj)
                    snap.inventory.add(obj)
            if info.kind in INDEXED_KINDS:
                listed_indexed.add(info.kind)
            listed_any = True
        except ListError as exc:
            if exc.status == HTTP_UNAUTHORIZED:
                # the credentials are refused: nothing this identity lists can be trusted to be complete
                snap.failed = f"authentication refused: {exc}"
                snap.gaps.append(CoverageGap(reader.name, f"cluster not audited: {snap.failed}"))
                break
            if exc.unreachable:
                # no connection (refused, DNS, TLS verification, no answer, lost and not regained),
                # or no credentials: known once for the cluster, not again for each kind
                snap.failed = str(exc)
                snap.gaps.append(CoverageGap(reader.name, f"cluster not audited: {exc}"))
                break
            if exc.status == HTTP_NOT_FOUND and info.custom:
                # the CRD is not installed: nothing of that kind can exist, a complete answer
                if info.kind in INDEXED_KINDS:
                    listed_indexed.add(info.kind)
                continue
            what = "forbidden" if exc.status == HTTP_FORBIDDEN else "could not be listed"
            snap.gaps.append(CoverageGap(f"{reader.name}/{info.kind}", f"{info.plural} {what}: {exc}"))
        progress.listed(reader.name, info.kind, reader.stats.by_kind.get(info.kind, 0))
    _trim_owned(snap)
    _trim_reported(snap)
    if snap.failed is None and not listed_any and kinds:
        first = next((g.message for g in snap.gaps), "every list failed")
        snap.failed = f"no kind could be listed ({first})"
        snap.gaps.append(CoverageGap(reader.name, f"cluster not audited: {snap.failed}"))
    snap.inventory.complete = snap.failed is None and listed_indexed >= (
        INDEXED_KINDS & {k.kind for k in kinds}
    )
    snap.stats.reachable = snap.failed is None
    snap.stats.objects = reader.stats.objects
    snap.stats.requests = reader.stats.requests
    snap.stats.kinds = dict(reader.stats.by_kind)
    snap.stats.seconds = time.monotonic() - started
    return snap


def _trim_owned(snap: ClusterSnapshot) -> None:
    """Reduce each controller another listed controller owns (a Deployment's ReplicaSets, a CronJob's
    Jobs) to what the audit reads of it: its identity and owner references. Its top owner is what
    is evaluated and reported (:func:`_evaluable`), and its template is the owner's; 3,000
    ReplicaSets kept whole were about a sixth of a 150,000-pod audit's memory."""
    for uid, obj in snap.controllers.items():
        parent = _controller_of(obj)
        if parent is None or str(parent.get("uid")) not in snap.controllers or "spec" not in obj:
            continue  # (a trimmed one has no spec)
        md = obj.get("metadata") or {}
        snap.controllers[uid] = {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "metadata": {k: md[k] for k in ("name", "namespace", "uid", "ownerReferences") if k in md},
        }


def _trim_reported(snap: ClusterSnapshot) -> None:
    """Reduce each top controller that has running pods to its metadata: a running pod of each of
    its templates is what is evaluated, and the controller is only the workload the findings are
    reported on (its identity, labels and annotations: what exceptions and suppressions match)."""
    for owner_uid, _ in snap.pod_groups:
        top = _top_owner(owner_uid, snap.controllers)
        if top is None or "spec" not in top:
            continue
        uid = _uid(top)
        md = {k: v for k, v in (top.get("metadata") or {}).items() if k != "managedFields"}
        snap.controllers[uid] = {"apiVersion": top.get("apiVersion"), "kind": top.get("kind"), "metadata": md}


def _collect_pods(
    reader: ClusterReader, info: KindInfo, snap: ClusterSnapshot, owners: frozenset[str]
) -> None:
    groups: dict[tuple[str, str], _PodGroup] = {}
    bare: list[dict[str, Any]] = []

    def restart() -> None:
        groups.clear()
        bare.clear()

    count = 0
    for page in reader.pages(info, on_restart=restart):
        for pod in page:
            count += 1
            phase = (pod.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed"):
                continue  # finished pods run nothing; their owner is still evaluated
            owner = _controller_of(pod)
            if owner is None or str(owner.get("kind")) not in owners:
                bare.append(pod)
                continue
            key = (str(owner.get("uid") or owner.get("name")), _template_hash(pod))
            group = groups.get(key)
            if group is None:
                groups[key] = _PodGroup(pod)
            else:
                group.count += 1
    snap.pod_groups, snap.bare_pods = groups, bare
    snap.stats.pods = count


# --- evaluation ----------------------------------------------------------------------------------


def _top_owner(uid: str, controllers: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The outermost listed controller above `uid` (ReplicaSet → Deployment, Job → CronJob)."""
    obj = controllers.get(uid)
    seen = 0
    while obj is not None and seen < 8:
        ref = _controller_of(obj)
        parent = controllers.get(str(ref.get("uid"))) if ref is not None else None
        if parent is None:
            return obj
        obj, seen = parent, seen + 1
    return obj


def _evaluable(snap: ClusterSnapshot) -> list[tuple[Resource, Resource | None, int | None]]:
    """(resource to evaluate, workload to report on, pods it stands for) for one cluster.

    Findings on a pod are decided as the workload's: its identity and labels are what exceptions
    and overrides match, so a waiver written for a DaemonSet covers the DaemonSet's pods.
    """
    origin = snap.name
    out: list[tuple[Resource, Resource | None, int | None]] = []
    with_pods: set[str] = set()
    owner_groups: dict[str, list[_PodGroup]] = {}
    for (owner_uid, _), group in snap.pod_groups.items():
        top = _top_owner(owner_uid, snap.controllers)
        top_uid = _uid(top) if top is not None else owner_uid
        with_pods.add(top_uid)
        owner_groups.setdefault(top_uid, []).append(group)
    for top_uid, groups in owner_groups.items():
        top = snap.controllers.get(top_uid)
        for group in groups:
            pod = Resource(group.pod, Origin(cluster=origin))
            workload = Resource(dict(top), Origin(cluster=origin)) if top is not None else None
            out.append((pod, workload, group.count))
    for uid, obj in snap.controllers.items():
        parent = _controller_of(obj)
        if parent is not None and str(parent.get("uid")) in snap.controllers:
            continue  # an owned controller (ReplicaSet of a Deployment): its top owner speaks for it
        if uid in with_pods:
            continue
        out.append((Resource(obj, Origin(cluster=origin)), None, 0))
    for bare in snap.bare_pods:
        out.append((Resource(bare, Origin(cluster=origin)), None, 1))
    for obj in snap.objects:
        out.append((Resource(obj, Origin(cluster=origin)), None, None))
    return out


def evaluate_snapshot(
    snap: ClusterSnapshot,
    evaluator: Evaluator,
    result: Result,
    progress: AuditProgress,
    workers: Workers | None = None,
    suppressions: SuppressionBook | None = None,
) -> None:
    """Evaluate one cluster's snapshot into `result` (findings, errors, stats).

    Suppression annotations (`stockade.io/ignore-<RULE>`) are honoured only as `suppressions.audit`
    allows (by default nowhere: whoever can write a manifest could otherwise exempt it);
    ``suppressions`` keeps what became of them across clusters.

    Inputs (namespace, facts) are built here, from the cluster's inventory; the engine runs in the
    scan's worker processes when `workers` allows (regorus holds the GIL), and decisions are made
    here, so exception usage is counted once.
    """
    source = InventoryFacts(snap.inventory)
    if suppressions is None:
        suppressions = SuppressionBook(evaluator.config.suppressions, "audit", evaluator.exceptions.today)
    todo = []
    for t in _evaluable(snap):
        if not evaluator.in_scope(t[0]):
            continue
        if deeper_than(t[0].obj):
            # objects from a cluster are not read by the decoders (a custom resource keeps unknown
            # fields): nesting the engines cannot encode is an error of that object, not a crash
            message = f"{TOO_DEEP}: not evaluated"
            result.errors.append(InputError(f"{snap.name}/{t[0].ref().display()}", message))
            continue
        todo.append(t)
    progress.evaluating(snap.name, len(todo))
    jobs: list[Job] = [
        (
            i,
            evaluator.inputs(
                resource, operation=Operation.AUDIT, namespace=namespace_for(resource, source), source=source
            ),
            None,
        )
        for i, (resource, _, _) in enumerate(todo)
    ]
    enabled = getattr(evaluator.engine, "enabled", None)
    findings_before = len(result.findings)
    seen: set[tuple[Any, ...]] = set()
    done = 0
    options = workers.options if workers is not None else ScanOptions(evaluator.config, workers=1)
    everything = [*snap.objects, *snap.controllers.values()]
    if evaluator.set_inventory(everything, complete=snap.inventory.complete):
        options = ScanOptions(evaluator.config, workers=1)  # data.inventory lives in this process
    for index, outcome, _ in evaluate_jobs(jobs, evaluator, options, workers or Workers(options), None):
        resource, owner, replicas = todo[index]
        done += 1
        if isinstance(outcome, str):
            result.errors.append(InputError(f"{snap.name}/{resource.ref().display()}", outcome))
            continue
        if enabled is not None:  # workers run the whole library; --framework narrows it here
            outcome = [v for v in outcome if v.rule.id in enabled]
        decided = owner or resource
        for finding in fold(suppressions.apply(decided, evaluator.decide(decided, outcome))):
            finding.replicas = replicas if replicas else None
            key = (finding.resource, finding.rule.id, finding.message, finding.path)
            if key in seen:  # two templates of one workload during a rollout: report once
                continue
            seen.add(key)
            result.findings.append(finding)
        if done % 200 == 0 or done == len(todo):
            progress.evaluated(snap.name, done, len(result.findings) - findings_before)
    snap.stats.evaluated = len(todo)
    snap.stats.extras[REGISTRIES] = workload_registries((r.obj for r, _, _ in todo), evaluator.workloads)
    workloads = [r.obj for r, owner, replicas in todo if owner is None and replicas is not None]
    workloads += [owner.obj for _, owner, _ in todo if owner is not None]
    nodes = snap.nodes if "Node" in snap.stats.kinds else None  # None: Nodes could not be listed
    snap.stats.extras["sandbox"] = sandbox_summary(
        snap.inventory, _unique(workloads), evaluator.config, nodes
    )


def _unique(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for obj in objects:
        uid = _uid(obj)
        if uid not in seen:
            seen.add(uid)
            out.append(obj)
    return out


#: clusters held at once by default (`audit --parallel`): listing is mostly waiting on the network for
#: remote clusters, and a 150,000-pod cluster's snapshot is about 0.4 GiB
DEFAULT_PARALLEL = 4


class FindingSpool:
    """The findings of audited clusters, kept in an unnamed temporary file until the report.

    A fleet's findings would otherwise stay in memory while every later cluster is listed and
    evaluated: memory would grow with the fleet, and each snapshot would be allocated around them. Each
    cluster's findings are pickled here once its evaluation (and its PolicyReports) are done, and read
    back when the audit ends, when no snapshot is held any longer. The file is created unlinked (no
    other process can open it) and closed with the spool; findings hold no Secret data.
    """

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close(): the spool lives across a loop)
        self._parts = 0

    def put(self, findings: list[Finding]) -> None:
        # written as it is pickled, and read back as it is unpickled: no copy of the bytes in memory
        pickle.dump(findings, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self._parts += 1

    def load(self) -> list[Finding]:
        """Every finding put, in the order put; the spool is empty afterwards."""
        out: list[Finding] = []
        self._file.seek(0)
        for _ in range(self._parts):
            out.extend(pickle.load(self._file))
        self._file.seek(0)
        self._file.truncate()
        self._parts = 0
        return out

    def close(self) -> None:
        self._file.close()


def run_audit(
    targets: Sequence[Target],
    evaluator: Evaluator,
    *,
    version: str,
    progress: AuditProgress | None = None,
    max_parallel: int = DEFAULT_PARALLEL,
    on_snapshot: Callable[[ClusterSnapshot, Result], None] | None = None,
    options: ScanOptions | None = None,
    cluster_layer: Callable[[str], Iterable[Mapping[str, Any]]] | None = None,
) -> Result:
    """Audit every target: list them in parallel, evaluate each as its lists complete.

    ``cluster_layer(context)`` gives the Azure objects of the cluster behind a context (its AKS
    managed cluster, from ``--azure-subscription``): added to the context's inventory, they are the
    cross-layer facts (policies/facts/aks_cluster.py) of its Kubernetes objects."""
    progress = progress or QuietProgress()
    kinds = kinds_to_list(evaluator)
    result = Result(tool_version=version, rules=dict(evaluator.rules))
    lock = threading.Lock()

    def list_one(target: Target) -> ClusterSnapshot:
        try:
            reader = target.open()
        except Exception as exc:  # a broken kubeconfig entry, missing credentials plugin, ...
            snap = ClusterSnapshot(name=target.name, stats=ClusterStats(name=target.name, reachable=False))
            snap.failed = _one_line(exc)
            snap.gaps.append(CoverageGap(target.name, f"cluster not audited: {snap.failed}"))
            return snap
        with reader:
            reader.name = target.name
            return collect(reader, kinds, progress)

    suppressions = SuppressionBook(evaluator.config.suppressions, "audit", evaluator.exceptions.today)
    options = options or ScanOptions(evaluator.config, workers=1)
    workers = Workers(options)
    if options.workers > 1:
        workers.get()  # fork the evaluation processes before any listing thread starts
    # a batch run, as a scan is: 150,000 listed pods make every collection the JSON decoder's
    # allocations trigger walk all that was kept (ten times the decode itself); each snapshot is frozen
    # before it is evaluated (it lives until then anyway)
    with (
        batch_gc(),
        workers,
        contextlib.closing(FindingSpool()) as spool,
        ThreadPoolExecutor(max_workers=max(1, min(max_parallel, len(targets) or 1))) as pool,
    ):
        # At most `window` clusters are held at once (listing, or listed and being evaluated): the
        # next listing starts when a cluster's evaluation is done and its snapshot dropped, so that
        # memory does not grow with the fleet. Clusters are evaluated as their lists complete (a
        # slow cluster holds no other up) and reported in the order given.
        window = max(1, min(max_parallel, len(targets) or 1))
        pending: dict[Future[ClusterSnapshot], int] = {}
        order = {t.name: i for i, t in enumerate(targets)}
        next_target = 0

        def start_next() -> None:
            nonlocal next_target
            if next_target < len(targets):
                pending[pool.submit(list_one, targets[next_target])] = next_target
                next_target += 1

        for _ in range(window):
            start_next()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                pending.pop(future)
                snap = future.result()
                with lock:
                    result.gaps.extend(snap.gaps)
                    result.clusters.append(snap.stats)
                    if snap.failed is None:
                        for obj in cluster_layer(snap.name) if cluster_layer is not None else ():
                            snap.inventory.add(obj)
                        gc.freeze()
                        evaluate_snapshot(snap, evaluator, result, progress, workers, suppressions)
                        if on_snapshot is not None:
                            on_snapshot(snap, result)
                        if pending or next_target < len(targets):  # another cluster comes after this one
                            spool.put(result.findings)
                            result.findings = []
                    progress.finished(snap.name, snap.failed is None, snap.failed or "")
                    result.resources += snap.stats.evaluated
                del snap, future
                start_next()
        result.findings = spool.load() + result.findings

    # in the order the targets were given, whatever order their lists completed in (stable sorts)
    def cluster_rank(name: str | None) -> int:
        return order.get(name or "", len(order))

    result.clusters.sort(key=lambda c: cluster_rank(c.name))
    result.findings.sort(key=lambda f: cluster_rank(f.resource.cluster))
    result.gaps.sort(key=lambda g: cluster_rank(g.scope.split("/", 1)[0]))
    result.errors.sort(key=lambda e: cluster_rank(e.file.split("/", 1)[0]))
    result.exceptions = evaluator.exceptions.statuses() + suppressions.statuses()
    result.notes = audit_notes(evaluator, result.clusters)  # once, over every cluster
    return result


def findings_by_cluster(findings: Iterable[Finding]) -> dict[str | None, list[Finding]]:
    out: dict[str | None, list[Finding]] = {}
    for f in findings:
        out.setdefault(f.resource.cluster, []).append(f)
    return out


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def audit_cluster_roles(kinds: Sequence[KindInfo]) -> list[dict[str, Any]]:
    """The least RBAC an audit identity needs: `list` on exactly the kinds the audit lists.

    No `get`, no `watch`, no Secrets unless a rule reads them (then they are listed whole, as RBAC
    cannot grant less, and reduced to metadata, type and key names as each page is parsed). A second
    ClusterRole covers `--write-policy-reports`, which is optional.
    """
    by_group: dict[str, list[str]] = {}
    for info in kinds:
        by_group.setdefault(info.group, []).append(info.plural or guess_plural(info.kind))
    rules = [
        {"apiGroups": [group], "resources": sorted(set(plurals)), "verbs": ["list"]}
        for group, plurals in sorted(by_group.items())
    ]
    labels = {"app.kubernetes.io/name": "stockade", "app.kubernetes.io/component": "audit"}
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "stockade-audit-reader", "labels": labels},
            "rules": rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "stockade-audit-policyreport-writer", "labels": labels},
            "rules": [
                {
                    "apiGroups": ["wgpolicyk8s.io"],
                    "resources": ["policyreports", "clusterpolicyreports"],
                    # server-side apply is a PATCH, authorized as `patch` whether or not the object exists
                    "verbs": ["list", "patch", "delete"],
                }
            ],
        },
    ]
