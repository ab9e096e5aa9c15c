"""`stockade webhook install` / `uninstall`: server-side apply of the rendered objects, and their removal.

Server-side apply (PATCH, `Content-Type: application/apply-patch+yaml`, `fieldManager=stockade`,
`force=true`) makes install idempotent without a read-modify-write: the API server merges what we send
with what it has, a re-apply of the same objects changes nothing (not even resourceVersions), and
fields we stop sending are removed because we own them. `force` takes over fields another manager set
(a `kubectl edit` of the replicas, say): the rendered manifests are the desired state.

Requests go through the `kubernetes` client's generated typed methods (`patch_namespaced_deployment`,
`CustomObjectsApi.patch_namespaced_custom_object` for cert-manager's kinds, ...) found by name from the
kind, with `_content_type` set to the apply patch type and `_preload_content=False` (raw JSON back, no
model classes). Those methods carry authentication (and in-cluster token refresh), and the
`_content_type` override is part of both generator generations the client has shipped (the older
`local_var_params` style and the current one; tested here on the installed 37.x), while
`ApiClient.call_api` changed its signature between them (positional path/query/auth arguments
before, a pre-serialized request after), and the dynamic client costs discovery round trips and
keeps a discovery cache on disk.

Order: the ValidatingWebhookConfiguration is applied last, and only once the Deployment has rolled out
(when waiting): with `failurePolicy: Fail`, registering the webhook before a pod can answer would
reject every matching request in the cluster. Uninstall removes it first, for the same reason.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
from kubernetes import client as k8s_client

from stockade.admission.inventory import describe_error
from stockade.webhooks.certs import CA_CERT, TLS_CERT, TLS_KEY, CertPlan, check_writable, plan_certs
from stockade.webhooks.kinds import resource_of_object
from stockade.webhooks.manifests import NAME, TLS_SECRET, Obj, Options, render, tls_secret

FIELD_MANAGER = "stockade"
APPLY_PATCH = "application/apply-patch+yaml"
WEBHOOK_KIND = "ValidatingWebhookConfiguration"
HTTP_NOT_FOUND = 404
REQUEST_TIMEOUT = (10.0, 30.0)


class InstallError(RuntimeError):
    """A request the API server refused, or a rollout that did not finish; one line, no secrets."""


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str
    namespace: str | None
    name: str
    result: str  # created | applied | deleted | absent

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind.lower()}/{where}{self.name} {self.result}"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _typed_api(api_client: Any, group: str, version: str) -> Any | None:
    """The generated API class of a built-in group (`rbac.authorization.k8s.io` -> RbacAuthorizationV1Api),
    or None for custom resources."""
    if group and "." in group and not group.endswith(".k8s.io"):
        return None
    words = group.removesuffix(".k8s.io").split(".") if group else ["core"]
    cls = getattr(k8s_client, "".join(w.capitalize() for w in words) + version.capitalize() + "Api", None)
    return cls(api_client) if cls is not None else None


def _call(api_client: Any, verb: str, obj: Obj, **options: Any) -> Any:
    """PATCH (verb "patch") or DELETE (verb "delete") one object through its generated method."""
    resource = resource_of_object(obj)
    md = obj["metadata"]
    name, namespace = str(md["name"]), md.get("namespace")
    if resource.namespaced and not namespace:
        raise InstallError(f"{resource.kind}/{name} is namespaced but has no namespace")
    body = [obj] if verb == "patch" else []
    typed = _typed_api(api_client, resource.group, resource.version)
    if typed is None:
        custom = k8s_client.CustomObjectsApi(api_client)
        scope = "namespaced" if resource.namespaced else "cluster"
        method = getattr(custom, f"{verb}_{scope}_custom_object")
        where = [namespace] if resource.namespaced else []
        return method(resource.group, resource.version, *where, resource.plural, name, *body, **options)
    scope = "namespaced_" if resource.namespaced else ""
    method = getattr(typed, f"{verb}_{scope}{_snake(resource.kind)}", None)
    if method is None:
        raise InstallError(f"the kubernetes client has no {verb} method for {resource.kind}")
    return method(name, *([namespace] if resource.namespaced else []), *body, **options)


def _identity(obj: Obj) -> tuple[str, str | None, str]:
    md = obj["metadata"]
    return str(obj["kind"]), md.get("namespace"), str(md["name"])


def apply_object(api_client: Any, obj: Obj) -> Outcome:
    try:
        response = _call(
            api_client,
            "patch",
            obj,
            field_manager=FIELD_MANAGER,
            force=True,
            _content_type=APPLY_PATCH,
            _preload_content=False,
            _request_timeout=REQUEST_TIMEOUT,
        )
    except k8s_client.ApiException as exc:
        kind, namespace, name = _identity(obj)
        raise InstallError(f"applying {kind} {namespace or ''}/{name}: {describe_error(exc)}") from None
    return Outcome(*_identity(obj), "created" if response.status == 201 else "applied")


def delete_object(api_client: Any, obj: Obj) -> Outcome:
    try:
        _call(
            api_client,
            "delete",
            obj,
            propagation_policy="Background",
            _preload_content=False,
            _request_timeout=REQUEST_TIMEOUT,
        )
    except k8s_client.ApiException as exc:
        if exc.status == HTTP_NOT_FOUND:  # already gone, or its kind (a CRD) is not installed
            return Outcome(*_identity(obj), "absent")
        kind, namespace, name = _identity(obj)
        raise InstallError(f"deleting {kind} {namespace or ''}/{name}: {describe_error(exc)}") from None
    return Outcome(*_identity(obj), "deleted")


def rolled_out(deployment: Obj) -> bool:
    """As `kubectl rollout status`: newest generation observed, every replica updated and available."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    md = deployment.get("metadata") or {}
    wanted = int(spec.get("replicas", 1))
    return (
        int(status.get("observedGeneration", 0)) >= int(md.get("generation", 1))
        and int(status.get("updatedReplicas", 0)) >= wanted
        and int(status.get("replicas", 0)) == int(status.get("updatedReplicas", 0))
        and int(status.get("availableReplicas", 0)) >= wanted
    )


def wait_rolled_out(
    api_client: Any,
    namespace: str,
    name: str,
    timeout: float,
    poll: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    apps: Any = k8s_client.AppsV1Api(api_client)  # raw responses (_preload_content=False), not models
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = apps.read_namespaced_deployment_status(
                name, namespace, _preload_content=False, _request_timeout=REQUEST_TIMEOUT
            )
        except k8s_client.ApiException as exc:
            raise InstallError(f"reading Deployment {namespace}/{name}: {describe_error(exc)}") from None
        if rolled_out(orjson.loads(response.data)):
            return
        if time.monotonic() >= deadline:
            raise InstallError(
                f"Deployment {namespace}/{name} did not roll out within {timeout:g}s; the webhook "
                "configuration was not applied (check the pods, then run install again)"
            )
        sleep(poll)


def install_objects(
    options: Options,
    library_kinds: Sequence[str],
    certs_dir: Path | None,
    audit_roles: Sequence[Obj] = (),
) -> tuple[list[Obj], CertPlan | None]:
    """What install applies: the rendered objects plus, without cert-manager, the TLS Secret from
    `certs_dir`, whose certificates are created or rotated (see `plan_certs`). Nothing is written:
    the caller writes the returned plan (`CertPlan.write`) once every other check has passed."""
    if options.cert_manager:
        return render(options, library_kinds, audit_roles=audit_roles), None
    if certs_dir is None:
        raise InstallError("install needs --certs-dir DIR (created if empty) or --cert-manager")
    check_writable(certs_dir)
    plan = plan_certs(certs_dir, options.dns_names)
    rendered = render(replace(options, ca_bundle=plan.read(CA_CERT)), library_kinds, audit_roles=audit_roles)
    secret = tls_secret(options.namespace, plan.read(TLS_CERT), plan.read(TLS_KEY))
    at = next(i for i, o in enumerate(rendered) if o["kind"] == "Deployment")
    return [*rendered[:at], secret, *rendered[at:]], plan


def install(
    api_client: Any,
    objects: Sequence[Obj],
    wait_seconds: float = 0.0,
    on_outcome: Callable[[Outcome], None] = lambda _: None,
    poll: float = 2.0,
) -> list[Outcome]:
    """Apply every object in order, the webhook configuration last (after the rollout when waiting)."""
    outcomes = []
    rest = [o for o in objects if o["kind"] != WEBHOOK_KIND]
    hooks = [o for o in objects if o["kind"] == WEBHOOK_KIND]
    for obj in rest:
        outcomes.append(apply_object(api_client, obj))
        on_outcome(outcomes[-1])
    deployments = [o for o in rest if o["kind"] == "Deployment"]
    if wait_seconds > 0:
        for d in deployments:
            wait_rolled_out(api_client, d["metadata"]["namespace"], d["metadata"]["name"], wait_seconds, poll)
    for obj in hooks:
        outcomes.append(apply_object(api_client, obj))
        on_outcome(outcomes[-1])
    return outcomes


def register(
    api_client: Any, configuration: Obj, namespace: str, wait_seconds: float, poll: float = 2.0
) -> Outcome:
    """Apply the webhook configuration once the Deployment has rolled out (the Helm chart's
    post-install hook): registered earlier, a fail-closed webhook rejects every write it judges."""
    if wait_seconds > 0:
        wait_rolled_out(api_client, namespace, NAME, wait_seconds, poll)
    return apply_object(api_client, configuration)


def unregister(api_client: Any) -> Outcome:
    """Remove the webhook configuration (the chart's pre-delete hook), before what it calls goes."""
    return delete_object(
        api_client,
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": WEBHOOK_KIND, "metadata": {"name": NAME}},
    )


def uninstall_objects(namespace: str) -> list[Obj]:
    """Everything any install may have created, whichever certificate mode it used."""
    rendered = render(Options(namespace=namespace, cert_manager=True), [])
    # The serving Secret (install's, or cert-manager's) and cert-manager's CA Secret: cert-manager
    # leaves Secrets behind when their Certificate is deleted.
    secrets = [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace}}
        for name in (TLS_SECRET, f"{NAME}-ca")
    ]
    return [*rendered, *secrets]


def uninstall(
    api_client: Any,
    objects: Sequence[Obj],
    keep_namespace: bool = False,
    on_outcome: Callable[[Outcome], None] = lambda _: None,
) -> list[Outcome]:
    """Delete the webhook configuration first, then the rest in reverse apply order, the Namespace last."""
    hooks = [o for o in objects if o["kind"] == WEBHOOK_KIND]
    namespaces = [o for o in objects if o["kind"] == "Namespace"]
    rest = [o for o in reversed(objects) if o["kind"] not in (WEBHOOK_KIND, "Namespace")]
    outcomes = []
    for obj in [*hooks, *rest, *([] if keep_namespace else namespaces)]:
        outcomes.append(delete_object(api_client, obj))
        on_outcome(outcomes[-1])
    return outcomes
