"""A fake API server that also takes server-side apply, GET and DELETE of single objects.

It subclasses `tests/admission/fake_apiserver.py`'s FakeApiServer (aiohttp on 127.0.0.1: its store,
resourceVersions, LIST/WATCH and request log stay as they are) and adds, for the plurals it is given,
the object paths kube-apiserver serves:

    /api/v1/[namespaces/{ns}/]{plural}/{name}
    /apis/{group}/{version}/[namespaces/{ns}/]{plural}/{name}

- PATCH accepts only server-side apply, as a real server requires for what `install` sends:
  `Content-Type: application/apply-patch+yaml`, a `fieldManager`, `force=true`; the body's kind,
  apiVersion, name and namespace must match the path (else 400), and a namespaced kind must be
  addressed in a namespace that exists (else 404). The applied configuration becomes the object (one
  manager owning every field), with server fields added; an apply that changes nothing keeps the
  resourceVersion (201 on create, 200 otherwise). Deployments get a `metadata.generation` bumped
  on spec changes and, when `deployments_roll_out` is true, a rolled-out status.
- `fail_next` failures answer object requests too.
- GET returns the object (the `/status` subresource too), DELETE removes it; 404 when absent. Deleting
  a Namespace deletes the objects in it, as the namespace controller eventually does.
- POST to a namespaced collection creates (409 AlreadyExists when the name is taken); PUT replaces,
  with the resourceVersion the body carries (409 Conflict when it is not the stored one); PATCH with
  `application/json-patch+json` applies RFC 6902 `add`/`replace`/`test` operations (a failed test
  is 422, as kube-apiserver answers). `race_next[plural]`: the next POST or PUT of that plural finds
  this object written first (stored as another client's write), so it gets its 409.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web


def load_module(name: str, path: Path) -> Any:
    """Import a test helper from its path once (test folders are not packages)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


#: tests/admission/conftest.py: its loader (so the parent class is loaded once, under its usual
#: name) and its `api_client` fixture, reused by tests/webhooks/conftest.py
admission_conftest = load_module(
    "stockade_tests_admission_conftest", Path(__file__).resolve().parents[1] / "admission" / "conftest.py"
)
_base = admission_conftest._load_fake_apiserver()

#: plural -> (kind, apiVersion, namespaced) for what `stockade webhook install` touches
APPLY_KINDS: dict[str, tuple[str, str, bool]] = {
    "namespaces": ("Namespace", "v1", False),
    "serviceaccounts": ("ServiceAccount", "v1", True),
    "configmaps": ("ConfigMap", "v1", True),
    "secrets": ("Secret", "v1", True),
    "services": ("Service", "v1", True),
    "deployments": ("Deployment", "apps/v1", True),
    "poddisruptionbudgets": ("PodDisruptionBudget", "policy/v1", True),
    "networkpolicies": ("NetworkPolicy", "networking.k8s.io/v1", True),
    "clusterroles": ("ClusterRole", "rbac.authorization.k8s.io/v1", False),
    "clusterrolebindings": ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", False),
    "validatingwebhookconfigurations": (
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        False,
    ),
}
CERT_MANAGER_KINDS: dict[str, tuple[str, str, bool]] = {
    "issuers": ("Issuer", "cert-manager.io/v1", True),
    "certificates": ("Certificate", "cert-manager.io/v1", True),
}
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation")


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    status: int
    authorized: bool


class FakeApplyServer(_base.FakeApiServer):  # type: ignore[misc]
    def __init__(self, kinds: dict[str, tuple[str, str, bool]] | None = None, **kwargs: Any) -> None:
        kinds = dict(kinds or APPLY_KINDS)
        super().__init__({p: (k, v) for p, (k, v, _) in kinds.items()}, **kwargs)
        self.namespaced = {p for p, (_, _, namespaced) in kinds.items() if namespaced}
        self.calls: list[Call] = []
        self.deployments_roll_out = True
        self.race_next: dict[str, dict[str, Any]] = {}

    async def _start(self) -> None:
        # The parent's _start builds the app and binds it; routes cannot be added afterwards, so the
        # whole (small) start is redone here with the object routes added.
        app = web.Application()
        app.router.add_get("/api/v1/{plural}", self._handle)
        app.router.add_get("/apis/{group}/{version}/{plural}", self._handle)
        for prefix in ("/api/{version}", "/apis/{group}/{version}"):
            for scope in ("", "/namespaces/{namespace}"):
                path = f"{prefix}{scope}/{{plural}}/{{name}}"
                app.router.add_route("*", path, self._object)
                app.router.add_get(f"{path}/status", self._object)
            app.router.add_post(f"{prefix}/namespaces/{{namespace}}/{{plural}}", self._create)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.ssl_context)
        await site.start()
        server = site._server
        assert server is not None and server.sockets
        self.port = server.sockets[0].getsockname()[1]

    # -- what tests read -------------------------------------------------------------------------------

    def get(self, plural: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        with self._lock:
            obj = self._objects[plural].get((namespace or "", name))
            return copy.deepcopy(obj) if obj is not None else None

    def snapshot(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        with self._lock:
            items = [(p, key, o) for p, objs in self._objects.items() for key, o in objs.items()]
        return {(p, ns, n): copy.deepcopy(o) for p, (ns, n), o in items}

    # -- HTTP -----------------------------------------------------------------------------------------

    def _answer(self, request: web.Request, status: int, body: dict[str, Any]) -> web.Response:
        authorized = "Authorization" in request.headers
        content_type = request.headers.get("Content-Type", "")
        call = Call(request.method, request.path, dict(request.query), content_type, status, authorized)
        self.calls.append(call)
        return web.json_response(body, status=status)

    def _error(self, request: web.Request, status: int, reason: str, message: str) -> web.Response:
        return self._answer(request, status, _base._status(status, reason, message))

    async def _object(self, request: web.Request) -> web.Response:
        info = request.match_info
        plural, name, namespace = info["plural"], info["name"], info.get("namespace")
        api_version = f"{info['group']}/{info['version']}" if "group" in info else info["version"]
        if plural not in self.kinds or self.kinds[plural][1] != api_version:
            return self._error(request, 404, "NotFound", f"the server could not find the resource {plural}")
        if (plural in self.namespaced) != (namespace is not None):
            return self._error(request, 404, "NotFound", f"{plural} addressed in the wrong scope")
        with self._lock:  # the parent's injected failures (fail_next) apply to object requests too
            failure = self._failures[plural].pop(0) if self._failures[plural] else None
        if failure is not None:
            return self._error(request, failure, "InternalError", "injected failure")
        key = (namespace or "", name)
        if request.method == "GET":
            obj = self.get(plural, namespace, name)
            if obj is None:
                return self._error(request, 404, "NotFound", f'{plural} "{name}" not found')
            return self._answer(request, 200, obj)
        if request.method == "DELETE":
            return self._delete(request, plural, key)
        if request.method == "PATCH" and request.headers.get("Content-Type") == "application/json-patch+json":
            return await self._json_patch(request, plural, key)
        if request.method == "PATCH":
            return await self._apply(request, plural, key)
        if request.method == "PUT":
            return await self._replace(request, plural, key)
        return self._error(request, 405, "MethodNotAllowed", request.method)

    def _delete(self, request: web.Request, plural: str, key: tuple[str, str]) -> web.Response:
        with self._lock:
            obj = self._objects[plural].pop(key, None)
            if obj is None:
                return self._error(request, 404, "NotFound", f'{plural} "{key[1]}" not found')
            self._rv += 1
            if plural == "namespaces":
                for objects in self._objects.values():
                    for k in [k for k in objects if k[0] == key[1]]:
                        del objects[k]
        return self._answer(request, 200, _base._status(200, "", "deleted") | {"status": "Success"})

    async def _apply(self, request: web.Request, plural: str, key: tuple[str, str]) -> web.Response:
        if request.headers.get("Content-Type") != "application/apply-patch+yaml":
            return self._error(request, 415, "UnsupportedMediaType", "only server-side apply is faked")
        if not request.query.get("fieldManager") or request.query.get("force") != "true":
            return self._error(request, 400, "BadRequest", "apply needs fieldManager and force=true")
        body = yaml.safe_load(await request.text())
        kind, api_version = self.kinds[plural]
        md = body.get("metadata") if isinstance(body, dict) else None
        if (
            not isinstance(md, dict)
            or body.get("kind") != kind
            or body.get("apiVersion") != api_version
            or md.get("name") != key[1]
            or (md.get("namespace") or "") != key[0]
        ):
            return self._error(request, 400, "BadRequest", "the object does not match the request path")
        with self._lock:
            if key[0] and ("", key[0]) not in self._objects.get("namespaces", {}):
                return self._error(request, 404, "NotFound", f'namespaces "{key[0]}" not found')
            old = self._objects[plural].get(key)
            new = copy.deepcopy(body)
            server = {f: old["metadata"][f] for f in SERVER_FIELDS if old and f in old["metadata"]}
            if not old:
                server = {"uid": str(uuid.uuid4()), "creationTimestamp": "2026-01-01T00:00:00Z"}
            new["metadata"].update(server)
            if kind == "Deployment":
                changed = old is None or old.get("spec") != new.get("spec")
                generation = int((old or {}).get("metadata", {}).get("generation", 0))
                new["metadata"]["generation"] = generation + changed
                new["status"] = copy.deepcopy((old or {}).get("status", {}))
                if self.deployments_roll_out:
                    n = int(new["spec"].get("replicas", 1))
                    new["status"] = {
                        "observedGeneration": new["metadata"]["generation"],
                        "replicas": n,
                        "updatedReplicas": n,
                        "readyReplicas": n,
                        "availableReplicas": n,
                    }
            if old is not None and _without_rv(old) == _without_rv(new):
                return self._answer(request, 200, copy.deepcopy(old))
            self._rv += 1
            new["metadata"]["resourceVersion"] = str(self._rv)
            self._objects[plural][key] = new
            event = {"type": "MODIFIED" if old else "ADDED", "object": copy.deepcopy(new)}
            self._emit(plural, event, logged=True)
            return self._answer(request, 201 if old is None else 200, copy.deepcopy(new))

    # -- create, replace, JSON patch ------------------------------------------------------------------

    def _raced(self, plural: str, key: tuple[str, str]) -> None:
        """Store the queued object of another client's write (race_next), if any, first."""
        other = self.race_next.pop(plural, None)
        if other is not None:
            self._store(plural, key, copy.deepcopy(other), self._objects[plural].get(key))

    def _store(
        self, plural: str, key: tuple[str, str], new: dict[str, Any], old: dict[str, Any] | None
    ) -> dict[str, Any]:
        kind, api_version = self.kinds[plural]
        new.update(kind=kind, apiVersion=api_version)
        md = new.setdefault("metadata", {})
        md.update(name=key[1], **({"namespace": key[0]} if key[0] else {}))
        md["uid"] = old["metadata"]["uid"] if old else str(uuid.uuid4())
        md["creationTimestamp"] = "2026-01-01T00:00:00Z"
        self._rv += 1
        md["resourceVersion"] = str(self._rv)
        self._objects[plural][key] = new
        self._emit(
            plural, {"type": "MODIFIED" if old else "ADDED", "object": copy.deepcopy(new)}, logged=True
        )
        return new

    async def _create(self, request: web.Request) -> web.Response:
        info = request.match_info
        plural, namespace = info["plural"], info["namespace"]
        if plural not in self.kinds or plural not in self.namespaced:
            return self._error(request, 404, "NotFound", f"the server could not find the resource {plural}")
        body = yaml.safe_load(await request.text())
        name = ((body or {}).get("metadata") or {}).get("name")
        if not name:
            return self._error(request, 400, "BadRequest", "metadata.name is required")
        key = (namespace, str(name))
        with self._lock:
            self._raced(plural, key)
            if key in self._objects[plural]:
                return self._error(request, 409, "AlreadyExists", f'{plural} "{name}" already exists')
            body["metadata"].pop("resourceVersion", None)
            return self._answer(request, 201, copy.deepcopy(self._store(plural, key, body, None)))

    async def _replace(self, request: web.Request, plural: str, key: tuple[str, str]) -> web.Response:
        body = yaml.safe_load(await request.text())
        with self._lock:
            self._raced(plural, key)
            old = self._objects[plural].get(key)
            if old is None:
                return self._error(request, 404, "NotFound", f'{plural} "{key[1]}" not found')
            given = ((body or {}).get("metadata") or {}).get("resourceVersion")
            if given and given != old["metadata"]["resourceVersion"]:
                return self._error(
                    request, 409, "Conflict", "the object has been modified; please apply your changes"
                )
            return self._answer(request, 200, copy.deepcopy(self._store(plural, key, body, old)))

    async def _json_patch(self, request: web.Request, plural: str, key: tuple[str, str]) -> web.Response:
        ops = yaml.safe_load(await request.text())
        with self._lock:
            old = self._objects[plural].get(key)
            if old is None:
                return self._error(request, 404, "NotFound", f'{plural} "{key[1]}" not found')
            new = copy.deepcopy(old)
            for op in ops:
                *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
                target: Any = new
                try:
                    for part in parents:
                        target = target[int(part)] if isinstance(target, list) else target[part]
                    leaf = int(last) if isinstance(target, list) else last
                    if op["op"] == "test":
                        if target[leaf] != op["value"]:
                            raise KeyError(op["path"])
                    elif op["op"] in ("add", "replace"):
                        target[leaf] = copy.deepcopy(op["value"])
                    else:
                        return self._error(request, 400, "BadRequest", f"op {op['op']} is not faked")
                except (KeyError, IndexError, ValueError, TypeError):
                    return self._error(request, 422, "Invalid", f"the patch failed at {op['path']}")
            return self._answer(request, 200, copy.deepcopy(self._store(plural, key, new, old)))


def _without_rv(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].pop("resourceVersion", None)
    return out
