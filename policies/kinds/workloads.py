"""The pod specs of every workload kind, so that pod rules are written once.

A rule sees ``input.pod`` whatever kind was submitted::

    input.pod = {
        "spec": {...},             # the PodSpec the pods will run
        "metadata": {...},         # the labels and annotations the pods will carry
        "path": [...],             # where the pod template sits in the object
        "specPath": [...],         # where the PodSpec's fields sit (findings point there)
        "metadataPath": [...],     # where the pods' labels/annotations are written
        "template": "workerGroupSpecs[gpu]",  # which of the object's pod specs ("" if it has one)
        "highRisk": false,         # its kind runs untrusted code by nature (an agent Sandbox), or
                                   # it is a Pod such an object owns: it must run in a sandbox
        "namespaced": true,        # false for a cluster-scoped template (ClusterTrainingRuntime):
                                   # its pods' namespace is not known
        "parameters": {"mark": "{{", "text": "an Argo Workflows parameter, ..."},  # (only where a
                                   # controller fills parameters into the pod before it creates it:
                                   # what they start with, and what they are; their values unknown)
        "account": {"source": "pod"},  # who decides the pods' ServiceAccount (the kinds table's
                                   # Account): "pod" (the pod spec, as Kubernetes does); "inherited"
                                   # ({"by": "InferenceService"}: the pod spec has no such field); or
                                   # "operator" ({"by": "KubeRay", "name": account it sets, "" when
                                   # generated, "when": the field that made it so, "apiClient": true:
                                   # the operator binds its Role to the account); "field": the
                                   # object path of the account's field where it is not the pod
                                   # spec's serviceAccountName (a SparkPodSpec's serviceAccount)
    }

An object may hold several pod specs (a RayCluster's head and worker groups, a JobSet's replicated
jobs): :meth:`WorkloadKinds.pods` gives one ``input.pod`` per pod spec, and the gates evaluate the pod
rules once for each. Where the pod specs sit is the kinds table's (``stockade.policies.kinds.api``) for
built-in and custom kinds, plus the kinds a configuration declares (``workloads:`` in stockade.yaml).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from stockade.policies.kinds import argo, ray, spark
from stockade.policies.kinds.api import KINDS, WILDCARD, KindInfo, PodPath, field_at, object_kind
from stockade.policies.model import is_mapping

#: The rule-kind alias of pod rules (METADATA ``kinds: ["@workloads"]``); custom workload kinds are
#: evaluated under it, so a kind declared in a configuration gets every pod rule.
WORKLOAD_ALIAS = "@workloads"

#: Built-in workload kinds (Pod, Deployment, ...): each has one pod template.
WORKLOAD_KINDS: tuple[str, ...] = tuple(k.kind for k in KINDS.values() if k.pods and not k.custom)
#: kind -> path of the pod template of a built-in workload kind (from the kinds table).
TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {k: KINDS[k].pods[0].path for k in WORKLOAD_KINDS}

#: Field names that only wrap a pod spec; left out of a pod spec's display name.
_WRAPPERS = frozenset({"spec", "template"})
#: Fields that name an item of a list of pod-holding specs (Ray's groupName, JobSet's name, ...).
_ITEM_NAMES = ("name", "groupName")


def group_of(api_version: Any) -> str | None:
    """The API group of an apiVersion ("" for core), or None when the object has none."""
    if not isinstance(api_version, str) or not api_version:
        return None
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if is_mapping(value) else {}


class WorkloadKinds:
    """The workload kinds a gate knows: built-in, custom (the kinds table), and declared ones."""

    def __init__(self, declared: Iterable[KindInfo] = ()) -> None:
        self.declared = tuple(declared)
        infos = [i for i in KINDS.values() if i.pods] + list(self.declared)
        self._by_group_kind: dict[tuple[str, str], KindInfo] = {}
        by_name: dict[str, list[KindInfo]] = {}
        for info in infos:
            self._by_group_kind[(info.group, object_kind(info))] = info  # a declaration wins
            by_name.setdefault(object_kind(info), []).append(info)
        # objects without an apiVersion (tests, fragments): a built-in kind, else a unique custom one
        self._by_name = {
            name: next((i for i in found if not i.custom), found[0])
            for name, found in by_name.items()
            if len(found) == 1 or any(not i.custom for i in found)
        }

    @property
    def infos(self) -> list[KindInfo]:
        return list(dict.fromkeys(self._by_group_kind.values()))

    @property
    def custom(self) -> list[KindInfo]:
        return [i for i in self.infos if i.custom]

    def info(self, obj: Mapping[str, Any]) -> KindInfo | None:
        """The workload kind of an object, or None for other kinds."""
        kind = obj.get("kind")
        if not isinstance(kind, str):
            return None
        group = group_of(obj.get("apiVersion"))
        if group is None:
            return self._by_name.get(kind)
        found = self._by_group_kind.get((group, kind))
        if found is None and kind in TEMPLATE_PATHS:
            # a built-in kind under any other group (extensions/v1beta1, or a group the API server
            # would refuse): judged as the built-in kind, never skipped
            found = KINDS[kind]
        return found

    def engine_kind(self, obj: Mapping[str, Any]) -> str | None:
        """The rule kind to evaluate an object under: a built-in kind's own name, the workload alias
        for custom workload kinds (a Volcano ``Job`` gets the pod rules, not batch/v1 Job's), None
        when the object is not a workload."""
        return rule_kind(self.info(obj))

    def pods(
        self, obj: Mapping[str, Any], info: KindInfo | bool | None = True, *, embedded: bool = False
    ) -> list[dict[str, Any]]:
        """One ``input.pod`` per pod spec of a workload object, in document order; [] for other kinds.
        ``info`` is the object's :meth:`info` when the caller has it already. An Argo workflow's
        resource template that creates a workload holds that workload's pods (not read again within
        an object so created: ``embedded``)."""
        if info is True:
            info = self.info(obj)
        if not isinstance(info, KindInfo):
            return []
        named = len(info.pods) > 1 or any(WILDCARD in p.path for p in info.pods)
        high_risk = info.high_risk or self._owned_by_high_risk(obj)
        out = []
        for pod_path in info.pods:
            found = list(_walk(obj, pod_path.path, (), ()))
            if pod_path.form == "argo":  # steps, DAG, suspend, ... templates run no pod
                for node, path, label in found:
                    if argo.runs_pod(node):
                        out.append(_pod(obj, node, pod_path, path, label, high_risk, info.namespaced))
                    elif not embedded and (made := argo.created_object(node)) is not None:
                        made_pods = self.pods(made, embedded=True)
                        prefix = (*path, "resource", "manifest")
                        out += [_created(pod, made, prefix, label, argo.PARAMETERS) for pod in made_pods]
                continue
            if pod_path.form == "object":  # an object of another kind a controller creates
                for node, path, _ in found:
                    if not embedded and isinstance(node.get("kind"), str):
                        made_pods = self.pods(node, embedded=True)
                        out += [_created(pod, node, path, "", KATIB_PARAMETERS) for pod in made_pods]
                continue
            if (
                not found
                and pod_path.form == "spark"
                and isinstance(field_at(obj, pod_path.path[:-1]), Mapping)
            ):
                # a role left out still runs, with the application's defaults (its executors)
                found = [({}, pod_path.path, pod_path.path[-1])]
            if not found and pod_path.form == "ray-submitter":
                job = field_at(obj, pod_path.path[:-1])
                if isinstance(job, Mapping) and ray.default_submitter(job) is not None:
                    # the submitter KubeRay builds: named as what it is, the object has no such field
                    found = [({}, pod_path.path, ray.DEFAULT_SUBMITTER)]
            for node, path, label in found:
                if _no_workers(obj, path):
                    continue
                out.append(
                    _pod(obj, node, pod_path, path, label if named else "", high_risk, info.namespaced)
                )
        if not out and not any(WILDCARD in p.path for p in info.pods):
            # a workload without its template (a malformed manifest) is still one, empty, pod
            out.append(_pod(obj, {}, info.pods[0], info.pods[0].path, "", high_risk))
        return out

    def _owned_by_high_risk(self, obj: Mapping[str, Any]) -> bool:
        """A Pod whose controller is of a high-risk kind (the pod an agent Sandbox runs)."""
        refs = _mapping(obj.get("metadata")).get("ownerReferences")
        for ref in refs if isinstance(refs, list) else ():
            owner = self.info(_mapping(ref)) if isinstance(ref, Mapping) else None
            if owner is not None and owner.high_risk:
                return True
        return False


#: ``input.pod.parameters`` of a Katib trial's pods: the trial controller fills them in
KATIB_PARAMETERS = {"mark": "${trialParameters.", "text": "a Katib trial parameter, set for each trial"}


def _created(
    pod: dict[str, Any],
    made: Mapping[str, Any],
    at: tuple[Any, ...],
    label: str,
    parameters: Mapping[str, str],
) -> dict[str, Any]:
    """A pod of an object another one holds for a controller to create (``made``, at ``at``: an Argo
    resource template's ``resource.manifest``, a text whose line findings point at; a Katib
    Experiment's ``trialTemplate.trialSpec``), as a pod of the holder: its paths under ``at``, named
    after the holder's template and the object, its ``parameters`` filled in when it runs."""
    prefix = list(at)
    out = dict(pod)
    for key in ("path", "specPath", "metadataPath"):
        out[key] = [*prefix, *pod[key]]
    for key in ("injected", "moved"):
        if key in pod:
            out[key] = [{**entry, "at": [*prefix, *entry["at"]]} for entry in pod[key]]
    account = dict(pod["account"])
    if "field" in account:
        account["field"] = [*prefix, *account["field"]]
    out["account"] = account
    what = f"{made.get('kind')} {pod['template']}" if pod["template"] else str(made.get("kind"))
    out["template"] = f"{label}: {what}" if label else what
    out["parameters"] = dict(parameters)
    return out


def _no_workers(obj: Mapping[str, Any], path: tuple[str | int, ...]) -> bool:
    """A LeaderWorkerSet's workerTemplate (or a DisaggregatedSet role's) that makes no pod: groups of
    `size` 1 (its default) with a leaderTemplate, whose workers' StatefulSet the lws controller
    creates with size - 1 = 0 replicas (pod_controller.go). Without a leaderTemplate the
    workerTemplate is the leader's too, and judged."""
    if len(path) < 2 or path[-1] != "workerTemplate" or path[-2] != "leaderWorkerTemplate":
        return False
    group = field_at(obj, path[:-1])  # through lists too: a DisaggregatedSet's roles[i]
    if not isinstance(group, Mapping) or not isinstance(group.get("leaderTemplate"), Mapping):
        return False
    size = group.get("size", 1)
    return size == 1 and not isinstance(size, bool)


def _walk(
    node: Any, rest: tuple[str, ...], path: tuple[str | int, ...], label: tuple[str, ...]
) -> Iterator[tuple[Mapping[str, Any], tuple[str | int, ...], str]]:
    if not rest:
        if is_mapping(node):
            yield node, path, ".".join(label)
        return
    head, tail = rest[0], rest[1:]
    if head != WILDCARD:
        child = node.get(head) if is_mapping(node) else None
        if child is None:
            return
        yield from _walk(child, tail, (*path, head), label if head in _WRAPPERS else (*label, head))
        return
    items: Iterable[tuple[str | int, Any]]
    if isinstance(node, list):
        items = enumerate(node)
    elif isinstance(node, Mapping):
        items = node.items()
    else:
        return
    for key, child in items:
        name = key
        if isinstance(key, int):
            name = next((n for f in _ITEM_NAMES if isinstance(n := _mapping(child).get(f), str) and n), key)
        last = label[-1] if label else ""
        yield from _walk(child, tail, (*path, key), (*label[:-1], f"{last}[{name}]"))


def _pod(
    obj: Mapping[str, Any],
    node: Mapping[str, Any],
    pod_path: PodPath,
    path: tuple[Any, ...],
    label: str,
    high_risk: bool,
    namespaced: bool = True,
) -> dict[str, Any]:
    spec: Mapping[str, Any]
    metadata: Mapping[str, Any]
    moved: list[dict[str, Any]] = []  # where a built pod's fields are written in the object
    account_field: list[Any] | None = None  # the object's field naming the account, if not the spec's
    if pod_path.form == "ray-submitter" and not node:
        spec = ray.default_submitter(_mapping(field_at(obj, tuple(path[:-1])))) or {}
        metadata, spec_path, metadata_path = {}, list(path), list(path)
    elif pod_path.form in ("template", "ray-submitter"):
        spec, metadata = _mapping(node.get("spec")), _mapping(node.get("metadata"))
        spec_path, metadata_path = [*path, "spec"], [*path, "metadata"]
    elif pod_path.form == "spec":
        spec, metadata = node, _mapping(obj.get("metadata"))
        spec_path, metadata_path = list(path), ["metadata"]
    elif pod_path.form == "spark":  # built from the SparkPodSpec's fields, which findings point at
        app, role = _mapping(field_at(obj, tuple(path[:-1]))), str(path[-1])
        spec, metadata = spark.pod_spec(app, role), spark.pod_metadata(obj, app, role)
        spec_path, metadata_path = list(path), list(path)
        account_field = [*path, "serviceAccount"]  # the field a SparkPodSpec names its account by
    elif pod_path.form == "argo":  # built from the template and the workflow spec around it
        workflow_path = tuple(path[: path.index("templates")])  # a template may be a step's inline one
        workflow = _mapping(field_at(obj, workflow_path))
        # the pod, and where its fields are written (the template, its defaults, the workflow)
        spec, metadata, moved = argo.pod(workflow, node, workflow_path, tuple(path))
        spec_path, metadata_path = list(path), [*path, "metadata"]
        # the account named in the template's defaults or the workflow: not the template's own field
        named = next((m["at"] for m in moved if m["from"] == ["serviceAccountName"]), None)
        if named is not None and named != [*path, "serviceAccountName"]:
            account_field = named
    else:  # component: the controller adds the component's labels/annotations to the object's
        own = _mapping(obj.get("metadata"))
        metadata = {
            key: {**_mapping(own.get(key)), **_mapping(node.get(key))} for key in ("labels", "annotations")
        }
        spec, spec_path, metadata_path = node, list(path), list(path)
    # containers an operator adds, and the field of the object that configures each
    injected: list[dict[str, Any]] = []
    if pod_path.account.by == "KubeRay":  # a Ray head: its account is KubeRay's when it autoscales
        spec, injected = ray.head_pod(obj, path[:-2], spec)  # path: headGroupSpec.template
    account = _account(obj, pod_path, spec)
    if account_field is not None:
        account["field"] = account_field
    pod = {
        "spec": spec,
        "metadata": metadata,
        "path": list(path),
        "specPath": spec_path,
        "metadataPath": metadata_path,
        "template": label,
        "highRisk": high_risk,
        "namespaced": namespaced,
        "account": account,
    }
    if injected:
        pod["injected"] = injected
    if moved:
        pod["moved"] = moved
    if pod_path.form == "argo":  # the controller substitutes `{{...}}` parameters into the pod
        pod["parameters"] = argo.PARAMETERS
    return pod


def _account(obj: Mapping[str, Any], pod_path: PodPath, spec: Mapping[str, Any]) -> dict[str, Any]:
    """``input.pod.account``: who decides the ServiceAccount of this pod spec's pods."""
    account = pod_path.account
    if account.source == "inherited":
        return {"source": "inherited", "by": account.by}
    if account.source == "operator" and field_at(obj, account.when) is True:
        own = spec.get("serviceAccountName")
        name = own if isinstance(own, str) and own else ""
        if not name and account.name == "object":
            name = str(_mapping(obj.get("metadata")).get("name") or "")
        return {
            "source": "operator",
            "by": account.by,
            "name": check_name(name) if name else "",
            "when": ".".join(account.when),
            "apiClient": True,
        }
    return {"source": "pod", "apiClient": True} if account.api_client else {"source": "pod"}


def check_name(name: str) -> str:
    """The account name KubeRay gives the head (ray-operator utils.CheckName): at most the last 50
    characters, a leading digit or punctuation replaced by "r"."""
    if len(name) > 50:
        name = name[len(name) - 50 :]
    if name[0].isdigit() or name[0] in _PUNCTUATION:
        name = "r" + name[1:]
    return name


#: ASCII characters of Unicode's punctuation categories (Go's unicode.IsPunct).
_PUNCTUATION = frozenset("!\"#%&'()*,-./:;?@[\\]_{}")


def rule_kind(info: KindInfo | None) -> str | None:
    """The rule kind of a workload kind's objects (:meth:`WorkloadKinds.engine_kind`)."""
    if info is None:
        return None
    return info.kind if not info.custom else WORKLOAD_ALIAS


#: The built-in and custom workload kinds, without a configuration's declarations.
DEFAULT_WORKLOADS = WorkloadKinds()


def pod_templates(obj: Mapping[str, Any], kinds: WorkloadKinds = DEFAULT_WORKLOADS) -> list[dict[str, Any]]:
    """Every ``input.pod`` of an object (see :meth:`WorkloadKinds.pods`)."""
    return kinds.pods(obj)


def pod_template(obj: Mapping[str, Any], kinds: WorkloadKinds = DEFAULT_WORKLOADS) -> dict[str, Any] | None:
    """The first ``input.pod`` of a workload object (its only one for built-in kinds), else None."""
    pods = kinds.pods(obj)
    return pods[0] if pods else None


#: fields that, beside a string ``image``, make a mapping a container (or a container-like spec an
#: operator turns into one: a TrainJob's ``trainer``)
_CONTAINER_FIELDS = frozenset(
    (
        "command",
        "args",
        "env",
        "envFrom",
        "resources",
        "ports",
        "volumeMounts",
        "securityContext",
        "workingDir",
    )
)
#: API groups whose objects hold containers as patterns to match or patch, not as pods to run
_PATTERN_GROUPS = ("kyverno.io", "gatekeeper.sh")
#: the walk of one object stops after this many values (an object of any size is read in bounded time)
_WALK_BUDGET = 20_000


def unmodelled_containers(obj: Mapping[str, Any]) -> list[str]:
    """Where an object of a kind the table does not hold (and no configuration declares) writes
    containers: the paths (``spec.predictors[*].componentSpecs[*].spec.containers[*]``) of mappings
    with an ``image`` and a container's fields, which some controller turns into pods that the pod
    rules never saw. [] for the kinds of admission policies, whose containers are patterns."""
    group = group_of(obj.get("apiVersion")) or ""
    if any(group == g or group.endswith("." + g) for g in _PATTERN_GROUPS):
        return []
    found: dict[str, None] = {}
    budget = _WALK_BUDGET
    stack: list[tuple[Any, str]] = [(v, k) for k, v in obj.items() if k not in ("metadata", "status")]
    while stack and budget > 0:
        node, path = stack.pop()
        budget -= 1
        if isinstance(node, Mapping):
            if isinstance(node.get("image"), str) and _CONTAINER_FIELDS & node.keys():
                found[path] = None
                continue
            stack.extend((v, f"{path}.{k}") for k, v in node.items() if isinstance(k, str))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[*]") for v in node)
    return sorted(found)
