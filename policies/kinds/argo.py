"""The pods Argo Workflows runs for a workflow's templates: what ``input.pod.spec`` is for each.

A Workflow (and a WorkflowTemplate, a ClusterWorkflowTemplate, a CronWorkflow's ``workflowSpec``)
holds no PodSpec. Each of its templates that runs the user's containers (a ``container``, a
``script`` or a ``containerSet`` template; steps, DAG, suspend, resource, data, HTTP and plugin
templates run none) becomes one pod, which the workflow controller builds
(workflow/controller/workflowpod.go, createWorkflowPod and the functions it calls):

- containers: the template's ``container`` or ``script`` (a container whose ``source`` the
  executor stages), named ``main`` whatever name it gives, or each of ``containerSet.containers`` (with
  ``containerSet.volumeMounts`` added to every one), then its ``sidecars``; init containers: its
  ``initContainers``; a sidecar or init container with ``mirrorVolumeMounts`` gets the main
  container's mounts (addSidecars, addInitContainers);
- volumes: the template's own, and those of the workflow's ``volumes`` and ``volumeClaimTemplates``
  that a container mounts (addVolumeReferences);
- the template's value, else the workflow's: ``serviceAccountName``, ``securityContext`` (the pod's),
  ``nodeSelector``, ``affinity``, ``tolerations``, ``schedulerName``, ``priorityClassName`` (the
  workflow's ``podPriorityClassName``), ``podResources`` (the pod's ``resources``) and
  ``resourceClaims``; ``automountServiceAccountToken`` only where one of them sets it false
  (setupServiceAccount);
- the workflow's only: ``hostNetwork``, ``dnsPolicy``, ``dnsConfig``, ``imagePullSecrets``;
  ``hostAliases`` the workflow's and the template's;
- labels and annotations: the workflow's ``podMetadata``, then the template's ``metadata``;
- ``templateDefaults`` fill in each template first, the template's own values winning (a
  strategic merge: lists of named items merged by name), type-specific defaults (a default
  ``container``) only into templates of that type (operator.go mergedTemplateDefaultsInto);
- a ``podSpecPatch`` (the workflow's, then the template's) is merged over the pod as a strategic
  merge; a value given by a ``{{...}}`` parameter is kept as written (the field is set, its value
  decided when the workflow runs).

A ``resource`` template that creates an object (``action`` create, apply or replace) holds that
object's pods when it is a workload (a Job, a Volcano Job, a TFJob, another Workflow):
:func:`created_object` reads its manifest with its `{{...}}` parameters kept as written.

Argo's own containers (``init``, ``wait``: the executor image and security context of the
controller's configuration, not of the workflow) are not in the pod judged, nor is the
controller's ``mainContainer`` configuration (workflow-controller-configmap), which it merges under
every main container: a securityContext or resources set there for all workflows is not seen.
Argo's containers use the pod's ServiceAccount token to report results unless
``executor.serviceAccountName`` names another, so every workflow pod is an API client (its token
is needed). Not modelled: a Workflow's
``workflowTemplateRef`` (its templates are the referenced template's, judged there), the
scheduling constraints a step inherits from its steps or DAG template (the boundary template), a
manifest given by an artifact (``manifestFrom``) or holding a YAML alias.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

#: ``input.pod.parameters`` of the pods the workflow controller builds: it fills `{{...}}` in first
PARAMETERS = {"mark": "{{", "text": "an Argo Workflows parameter, set when the workflow runs"}
#: the container a template's container or script runs as when it names none (common.MainContainerName)
MAIN = "main"
#: the template fields that run the user's containers in a pod
POD_TYPES = ("container", "script", "containerSet")
#: every template type (Template.GetType): type-specific defaults apply only to templates of that type
TYPES = (*POD_TYPES, "resource", "dag", "steps", "suspend", "data", "http", "plugin")
#: pod fields of the template, else the workflow (template field, workflow field, pod field); a
#: pointer field of the template (securityContext, affinity, podResources) replaces the workflow's
#: even when empty, as Go's `!= nil` does; a map, list or string only when it holds something
_EITHER = (
    ("serviceAccountName", "serviceAccountName", "serviceAccountName"),
    ("securityContext", "securityContext", "securityContext"),
    ("nodeSelector", "nodeSelector", "nodeSelector"),
    ("affinity", "affinity", "affinity"),
    ("tolerations", "tolerations", "tolerations"),
    ("schedulerName", "schedulerName", "schedulerName"),
    ("priorityClassName", "podPriorityClassName", "priorityClassName"),
    ("podResources", "podResources", "resources"),
    ("resourceClaims", "resourceClaims", "resourceClaims"),
)
_POINTERS = frozenset({"securityContext", "affinity", "podResources"})
#: pod fields of the workflow only
_WORKFLOW = ("hostNetwork", "dnsPolicy", "dnsConfig", "imagePullSecrets")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _set(value: Any, field: str = "") -> bool:
    """Whether a field is set as Go reads it: a pointer field (:data:`_POINTERS`) when present, even
    empty; a string, map or list when it holds something."""
    if field in _POINTERS:
        return isinstance(value, Mapping)
    return value is not None and value != "" and value != {} and value != []


def template_type(template: Mapping[str, Any]) -> str | None:
    """The template's type: the first of Argo's template fields it sets."""
    return next((t for t in TYPES if template.get(t) is not None), None)


def runs_pod(template: Any) -> bool:
    """Whether a template runs a pod of the user's containers."""
    return isinstance(template, Mapping) and template_type(template) in POD_TYPES


#: the actions of a resource template whose manifest is the object it makes (a patch changes another,
#: a delete or a get makes none)
CREATING = ("create", "apply", "replace")
#: a workflow parameter or expression, `{{inputs.parameters.image}}`, `{{=sprig.trim(x)}}`
_PARAMETER = re.compile(r"\{\{.*?\}\}")
_TOKEN = re.compile(r"__argo_parameter_(\d+)__")
#: manifests past this size are not read (an object the webhook admits is parsed in its request:
#: real manifests are a few KiB)
MAX_MANIFEST = 256 * 1024
#: YAML's safe loader, libyaml's where PyYAML is built with it (ten times faster)
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def created_object(template: Mapping[str, Any]) -> dict[str, Any] | None:
    """The object a resource template creates (``resource.manifest`` with ``action`` create, apply or
    replace), as the controller submits it once its parameters are filled in: each `{{...}}` kept as
    written, the value then unknown. None for other templates, a manifest that is not one YAML or
    JSON object, or one larger than :data:`MAX_MANIFEST`."""
    resource = template.get("resource")
    if not isinstance(resource, Mapping) or resource.get("action") not in CREATING:
        return None
    text = resource.get("manifest")
    if not isinstance(text, str) or len(text) > MAX_MANIFEST:
        return None
    return _parameterised(text)


def _parameterised(text: str) -> dict[str, Any] | None:
    """One YAML or JSON object whose values may be `{{...}}` parameters, each kept as written."""
    parameters = _PARAMETER.findall(text)
    # a parameter stands where YAML would read `{` as a flow mapping: a token stands in while parsing
    counter = iter(range(len(parameters)))
    obj = _load(_PARAMETER.sub(lambda _: f"__argo_parameter_{next(counter)}__", text))
    restored = _restored(obj, parameters) if obj is not None else None
    return restored if isinstance(restored, dict) else None


def _load(text: str) -> dict[str, Any] | None:
    """One YAML or JSON object written in a field of the workflow (a manifest, a podSpecPatch), or None:
    not one object, nested past what the parser recurses into, or holding a YAML alias (`*name`: it
    may stand for a structure a walk would visit again and again, which the scan's decoder budgets;
    no manifest needs one)."""
    try:
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=_LOADER)):
            return None
        obj = yaml.load(text, Loader=_LOADER)  # a safe loader (libyaml's where built)
    except (yaml.YAMLError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _restored(value: Any, parameters: list[str]) -> Any:
    if isinstance(value, str):
        return _TOKEN.sub(lambda m: parameters[int(m.group(1))], value)
    if isinstance(value, dict):
        return {_restored(k, parameters): _restored(v, parameters) for k, v in value.items()}
    if isinstance(value, list):
        return [_restored(v, parameters) for v in value]
    return value


def with_defaults(workflow: Mapping[str, Any], template: Mapping[str, Any]) -> Mapping[str, Any]:
    """The template with the workflow's ``templateDefaults`` filled in."""
    defaults = workflow.get("templateDefaults")
    if not isinstance(defaults, Mapping) or not defaults:
        return template
    own = template_type(template)
    applicable = {k: v for k, v in defaults.items() if k not in TYPES or k == own}
    merged = merge(applicable, template)
    return merged if isinstance(merged, Mapping) else template


def merge(base: Any, patch: Any) -> Any:
    """``patch`` over ``base`` as a strategic merge does for these fields: mappings key by key, lists
    of named items (containers, env, volumes, mounts) item by item by name, anything else replaced.
    ``None`` in a patch removes the key."""
    if isinstance(base, Mapping) and isinstance(patch, Mapping):
        out = dict(base)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = merge(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(patch, list) and _named(base) and _named(patch):
        by_name = {item["name"]: i for i, item in enumerate(base)}
        merged = list(base)
        for item in patch:
            at = by_name.get(item["name"])
            if at is None:
                merged.append(item)
            else:
                merged[at] = merge(merged[at], item)
        return merged
    return patch


def _volume_name(field: str, volume: Any) -> Any:
    """A volume's name, or a volume claim template's (its metadata's)."""
    named = _mapping(volume) if field == "volumes" else _mapping(_mapping(volume).get("metadata"))
    return named.get("name")


def _named(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(i, Mapping) and isinstance(i.get("name"), str) for i in items)


def _main_containers(template: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = template_type(template)
    if kind in ("container", "script"):
        container = dict(_mapping(template.get(kind)))
        container.pop("source", None)  # a script's text: staged by the executor, not a container field
        container["name"] = MAIN  # whatever name it gives (createWorkflowPod)
        return [container]
    container_set = _mapping(template.get("containerSet"))
    shared = _list(container_set.get("volumeMounts"))
    out = []
    for node in _list(container_set.get("containers")):
        if isinstance(node, Mapping):
            container = {k: v for k, v in node.items() if k != "dependencies"}
            if shared:
                container["volumeMounts"] = _list(container.get("volumeMounts")) + shared
            out.append(container)
    return out


def _user(containers: Any, main: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """A template's sidecars or init containers (UserContainer: a container and mirrorVolumeMounts)."""
    out = []
    for item in _list(containers):
        if isinstance(item, Mapping):
            container = {k: v for k, v in item.items() if k != "mirrorVolumeMounts"}
            if item.get("mirrorVolumeMounts") is True and main is not None:
                mirrored = _list(main.get("volumeMounts"))
                container["volumeMounts"] = _list(container.get("volumeMounts")) + mirrored
            out.append(container)
    return out


Path = tuple[str | int, ...]
Patches = tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]


def pod(
    workflow: Mapping[str, Any], template: Mapping[str, Any], at: Path, tmpl: Path
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The pod the workflow spec ``workflow`` (at ``at`` in its object) runs for ``template`` (at
    ``tmpl``): its PodSpec, its labels and annotations, and where each field of the PodSpec is
    written (:func:`_placements`). The template's defaults are merged and the podSpecPatches read
    once for the three."""
    merged = with_defaults(workflow, template)
    patches = _patches(workflow, merged)
    spec = _pod_spec(workflow, merged, patches)
    moved = _placements(workflow, template, merged, spec, patches, at, tmpl)
    return spec, _pod_metadata(workflow, merged), moved


def pod_spec(workflow: Mapping[str, Any], template: Mapping[str, Any]) -> dict[str, Any]:
    """The PodSpec of the pod the workflow spec ``workflow`` runs for ``template``."""
    merged = with_defaults(workflow, template)
    return _pod_spec(workflow, merged, _patches(workflow, merged))


def _patches(workflow: Mapping[str, Any], merged: Mapping[str, Any]) -> Patches:
    """The workflow's podSpecPatch and the template's (its defaults' where it has none), in the order
    they apply."""
    return _patch(workflow.get("podSpecPatch")), _patch(merged.get("podSpecPatch"))


def _pod_spec(workflow: Mapping[str, Any], template: Mapping[str, Any], patches: Patches) -> dict[str, Any]:
    """:func:`pod_spec` of a template whose defaults are merged in, its ``patches`` read."""
    mains = _main_containers(template)
    main = next((c for c in mains if c.get("name") == MAIN), None)
    spec: dict[str, Any] = {"restartPolicy": "Never"}
    spec["containers"] = [*mains, *_user(template.get("sidecars"), main)]
    init = _user(template.get("initContainers"), main)
    if init:
        spec["initContainers"] = init
    volumes = [v for v in _list(template.get("volumes")) if isinstance(v, Mapping)]
    mounted = {
        m.get("name")
        for c in (*spec["containers"], *init)
        for m in _list(_mapping(c).get("volumeMounts"))
        if isinstance(m, Mapping)
    }
    have = {v.get("name") for v in volumes}
    for volume in _list(workflow.get("volumes")):
        name = _mapping(volume).get("name")
        if name in mounted and name not in have:
            volumes.append(volume)
            have.add(name)
    for claim in _list(workflow.get("volumeClaimTemplates")):
        name = _volume_name("volumeClaimTemplates", claim)
        if name in mounted and name not in have:
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
            have.add(name)
    if volumes:
        spec["volumes"] = volumes
    for own, workflows, field in _EITHER:
        value = template.get(own) if _set(template.get(own), own) else workflow.get(workflows)
        if _set(value, own):
            spec[field] = value
    automount = template.get("automountServiceAccountToken")
    if automount is None:
        automount = workflow.get("automountServiceAccountToken")
    if automount is False:
        spec["automountServiceAccountToken"] = False
    for field in _WORKFLOW:
        if _set(workflow.get(field)):
            spec[field] = workflow[field]
    aliases = _list(workflow.get("hostAliases")) + _list(template.get("hostAliases"))
    if aliases:
        spec["hostAliases"] = aliases
    for patched in patches:
        if patched is not None:
            spec = merge(spec, patched)
    return spec


def _patch(text: Any) -> Mapping[str, Any] | None:
    """A podSpecPatch as a mapping: the fields it sets are known from its text, a value given by a
    `{{...}}` parameter kept as written (decided when the workflow runs)."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_MANIFEST:
        return None
    return _parameterised(text)


def _pod_metadata(workflow: Mapping[str, Any], template: Mapping[str, Any]) -> dict[str, Any]:
    """The labels and annotations the pod carries: the workflow's podMetadata, then the (merged)
    template's."""
    pod = _mapping(workflow.get("podMetadata"))
    own = _mapping(template.get("metadata"))
    return {key: {**_mapping(pod.get(key)), **_mapping(own.get(key))} for key in ("labels", "annotations")}


def _placements(
    workflow: Mapping[str, Any],
    own: Mapping[str, Any],
    template: Mapping[str, Any],
    spec: Mapping[str, Any],
    patches: Patches,
    at: Path,
    tmpl: Path,
) -> list[dict[str, Any]]:
    """Where the pod spec's fields are written in the object, for findings to point at them: each
    entry moves the pod path ``from`` (below the pod spec) to the object path ``at``. ``at`` is the
    workflow spec's path, ``tmpl`` the template's; ``own`` the template as written, ``template``
    with its defaults merged, ``spec`` and ``patches`` what :func:`pod` built from them. The
    serviceAccountName's entry is where the account is named (the template, its defaults, the
    workflow)."""
    defaults = _mapping(workflow.get("templateDefaults"))
    moved: list[dict[str, Any]] = []

    def place(source: Path, target: Path) -> None:
        moved.append({"from": list(source), "at": list(target)})

    kind = template_type(template)
    index = 0
    if kind in ("container", "script"):
        place(("containers", 0), (*tmpl, kind))
        index = 1
    elif kind == "containerSet":
        for j, _ in enumerate(_list(_mapping(template.get("containerSet")).get("containers"))):
            place(("containers", j), (*tmpl, "containerSet", "containers", j))
        index = len(_main_containers(template))
    for j, _ in enumerate(_list(template.get("sidecars"))):
        place(("containers", index + j), (*tmpl, "sidecars", j))
    for j, _ in enumerate(_list(template.get("initContainers"))):
        place(("initContainers", j), (*tmpl, "initContainers", j))
    for j, volume in enumerate(_list(spec.get("volumes"))):
        name = _mapping(volume).get("name")
        for field, owner, base in (
            ("volumes", own, tmpl),
            ("volumes", defaults, (*at, "templateDefaults")),
            ("volumes", workflow, at),
            ("volumeClaimTemplates", workflow, at),
        ):
            names = [_volume_name(field, v) for v in _list(owner.get(field))]
            if name in names:
                place(("volumes", j), (*base, field, names.index(name)))
                break
    for field, workflows, pod_field in _EITHER:
        if _set(own.get(field), field):
            place((pod_field,), (*tmpl, field))
        elif _set(defaults.get(field), field):
            place((pod_field,), (*at, "templateDefaults", field))
        elif _set(workflow.get(workflows), field):
            place((pod_field,), (*at, workflows))
    if own.get("automountServiceAccountToken") is not None:
        place(("automountServiceAccountToken",), (*tmpl, "automountServiceAccountToken"))
    elif defaults.get("automountServiceAccountToken") is not None:
        place(("automountServiceAccountToken",), (*at, "templateDefaults", "automountServiceAccountToken"))
    elif workflow.get("automountServiceAccountToken") is not None:
        place(("automountServiceAccountToken",), (*at, "automountServiceAccountToken"))
    for field in (*_WORKFLOW, "hostAliases"):
        place((field,), (*at, field))
    # what a podSpecPatch sets is written there (the template's own, applied last)
    workflow_patch, template_patch = patches
    for patch, path in ((workflow_patch, at), (template_patch if "podSpecPatch" in own else None, tmpl)):
        for field in patch or ():
            place((field,), (*path, "podSpecPatch"))
    return moved
