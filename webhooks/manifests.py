"""Everything a cluster needs to run the webhook, rendered as plain dicts from one set of options.

`stockade webhook manifests` prints them, `stockade webhook install` applies them, and the kustomize
base in `webhooks/deploy/` is written from them, so the three never drift. Two lists are derived,
never written by hand:

- the RBAC of the webhook's ServiceAccount is `list` + `watch` on exactly the kinds the inventory
  cache watches (`stockade.admission.inventory.DEFAULT_KINDS`, itself the watchable kinds in
  `INDEXED_KINDS`): a new analyzer that indexes a kind gets it granted, and nothing else is granted;
- the webhook's namespaceSelector leaves out kube-system, its own namespace and the config's
  `scope.excluded_namespaces` (those given by exact name), all of which it would allow anyway;
- the ValidatingWebhookConfiguration's rules send exactly the kinds the library's rules cover
  (METADATA `kinds`, `@workloads` expanded by the engine), plus `pods/ephemeralcontainers`, the one
  subresource the webhook evaluates: a new rule area is sent to the webhook without a change here.

The serving certificate comes from `stockade webhook certs` (its `ca.crt` becomes the caBundle, its
key is put in a Secret by `install` only, never rendered to text), from cert-manager (`cert_manager`:
a self-signed root, a CA Issuer, a serving Certificate, and the cainjector annotation), or from the
webhook itself (`self_issued`, the Helm chart's default: `webhook serve --self-issued-certs` keeps a
CA and serving certificate in a Secret and the caBundle in step, `stockade.webhooks.selfcert`; the
pods get the least RBAC for it, `self_issued_rbac`).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

import yaml

from stockade.admission.inventory import DEFAULT_KINDS, WatchedKind
from stockade.policies.config.settings import STARTER_CONFIG, Config, ConfigError, parse_config
from stockade.policies.engines.library import Library
from stockade.policies.facts.inventory import CALICO_NETWORK_POLICY
from stockade.policies.kinds.api import CUSTOM_ALIAS
from stockade.policies.kinds.workloads import WORKLOAD_ALIAS, WorkloadKinds
from stockade.webhooks.kinds import resource_of

Obj = dict[str, Any]

NAME = "stockade-webhook"
DEFAULT_NAMESPACE = "stockade-system"
TLS_SECRET = f"{NAME}-tls"
#: the self-issuing webhook's CA and serving certificate (stockade.webhooks.selfcert)
SELF_ISSUED_SECRET = f"{NAME}-certs"
#: the public CA bundle (`ca.crt`) the registration hook reads: the chart's, or the self-issuer's
CA_BUNDLE_MAP = f"{NAME}-ca-bundle"
SELF_ISSUED_ROLE = f"{NAME}-certs"
CONFIG_MAP = f"{NAME}-config"
CONFIG_KEY = "stockade.yaml"
POLICY_MAP = f"{NAME}-policies"
POLICY_MOUNT = "/policies"
#: a ConfigMap holds at most 1 MiB; keep room for metadata
MAX_POLICY_BYTES = 900 * 1024
WEBHOOK_NAME = "validate.stockade.io"
PORT = 8443
#: UID/GID of the container (no root, no name needed: the image's files are world-readable).
RUN_AS = 65532
DEFAULT_IMAGE_REPOSITORY = "ghcr.io/stockade-dev/stockade"
SELECTOR = {"app.kubernetes.io/name": NAME}
LABELS = {**SELECTOR, "app.kubernetes.io/part-of": "stockade", "app.kubernetes.io/component": "admission"}
#: kubernetes.io/metadata.name is set by the API server on every namespace (1.21+): selecting on it
#: cannot be dodged by relabelling a namespace.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
#: Updates of an object that is being deleted (finalizers removed by its controller) are not sent: a
#: policy that tightened since the object was created must not hold up its deletion.
MATCH_CONDITIONS = [{"name": "not-being-deleted", "expression": "!has(object.metadata.deletionTimestamp)"}]
#: cert-manager's cainjector copies the named Certificate's CA into the caBundle.
CA_INJECT_ANNOTATION = "cert-manager.io/inject-ca-from"
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_CRON = re.compile(r"^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\S+\s+){4}\S+)$")
AUDIT = "stockade-audit"
AUDIT_LABELS = {
    "app.kubernetes.io/name": AUDIT,
    "app.kubernetes.io/part-of": "stockade",
    "app.kubernetes.io/component": "audit",
}


class ManifestError(ValueError):
    """Options that cannot be rendered; the message is one line naming the option."""


def tool_version() -> str:
    try:
        return version("stockade")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def default_image() -> str:
    return f"{DEFAULT_IMAGE_REPOSITORY}:{tool_version()}"


@dataclass(frozen=True)
class Options:
    """What `stockade webhook manifests` is told; defaults are the production shape."""

    namespace: str = DEFAULT_NAMESPACE
    replicas: int = 3
    failure_policy: Literal["Fail", "Ignore"] = "Fail"
    timeout_seconds: int = 5
    cert_manager: bool = False
    image: str = field(default_factory=default_image)
    image_digest: str | None = None
    #: the stockade.yaml put in the ConfigMap (validated): the commented starter file by default
    config_text: str = STARTER_CONFIG
    #: PEM CA bundle for clientConfig.caBundle; required unless cert_manager or self_issued
    ca_bundle: bytes | None = None
    #: the webhook issues, rotates and publishes its own certificate (`serve --self-issued-certs`)
    self_issued: bool = False
    extra_dns_names: tuple[str, ...] = ()
    #: where the API server is, for the NetworkPolicy's egress; empty: any address, ports 443/6443
    apiserver_cidrs: tuple[str, ...] = ()
    #: the cluster's name, passed to `webhook serve --cluster`: per-cluster settings as in audits
    cluster: str | None = None
    #: extra Rego and Gatekeeper templates/constraints (`--policy-dir`): (ConfigMap key, content),
    #: shipped in a ConfigMap mounted at /policies and served with `--policy-dir /policies`
    policy_files: tuple[tuple[str, str], ...] = ()
    #: the webhook pods' PriorityClass (`--priority-class`): a fail-closed webhook preempted on a busy
    #: GPU cluster blocks every write it judges; None: the cluster's default priority
    priority_class: str | None = None
    #: a CronJob that runs `stockade audit --in-cluster` on this schedule (`--audit SCHEDULE`), writing
    #: PolicyReports; None: no continuous audit
    audit_schedule: str | None = None
    #: where the audit CronJob pushes its counts (`--audit-push-metrics URL`, a Pushgateway)
    audit_push_metrics: str | None = None
    #: (API group, resource) the webhook's cache lists and watches beyond its own kinds: the VAPs'
    #: param kinds (the chart's `paramKinds`, whose policies arrive at install time); those of
    #: `policy_files` are added on their own
    param_resources: tuple[tuple[str, str], ...] = ()

    def validate(self) -> None:
        if not _DNS_LABEL.match(self.namespace):
            raise ManifestError(f"--namespace {self.namespace!r} is not a valid namespace name")
        if self.replicas < 2:
            raise ManifestError(
                "--replicas must be at least 2: one webhook pod is an outage on every rollout"
            )
        if self.failure_policy not in ("Fail", "Ignore"):
            raise ManifestError(f"--failure-policy must be Fail or Ignore, not {self.failure_policy!r}")
        if not 1 <= self.timeout_seconds <= 30:
            raise ManifestError("--timeout must be between 1 and 30 seconds (the API server's limits)")
        if self.image_digest is not None and not _DIGEST.match(self.image_digest):
            raise ManifestError(
                f"--image-digest must look like sha256:<64 hex digits>, not {self.image_digest!r}"
            )
        if self.priority_class is not None and not _DNS_SUBDOMAIN.match(self.priority_class):
            raise ManifestError(f"--priority-class {self.priority_class!r} is not a valid PriorityClass name")
        if self.audit_schedule is not None and not _CRON.match(self.audit_schedule.strip()):
            raise ManifestError(
                f"--audit {self.audit_schedule!r} is not a cron schedule (five fields, or @hourly/@daily/...)"
            )
        if self.audit_push_metrics is not None and not re.match(
            r"^https?://[^\s/]+", self.audit_push_metrics
        ):
            raise ManifestError("--audit-push-metrics must be an http(s):// URL of a Pushgateway")
        if self.self_issued and self.cert_manager:
            raise ManifestError("a self-issued certificate and --cert-manager exclude each other")
        if self.audit_push_metrics is not None and self.audit_schedule is None:
            raise ManifestError("--audit-push-metrics needs --audit SCHEDULE")
        if "@" in self.image and self.image_digest:
            raise ManifestError("--image already has a digest; drop --image-digest")
        try:
            parse_config(self.config_text, "--config")
        except ConfigError as exc:
            raise ManifestError(str(exc)) from None
        size = sum(len(text.encode()) for _, text in self.policy_files)
        if size > MAX_POLICY_BYTES:
            raise ManifestError(
                f"--policy-dir: {size} bytes of policies do not fit a ConfigMap (at most {MAX_POLICY_BYTES})"
            )

    def validated(self) -> Options:
        self.validate()
        return self

    @property
    def image_ref(self) -> str:
        return f"{self.image}@{self.image_digest}" if self.image_digest else self.image

    @property
    def dns_names(self) -> tuple[str, ...]:
        return service_dns_names(self.namespace) + tuple(
            n for n in self.extra_dns_names if n not in service_dns_names(self.namespace)
        )


def service_dns_names(namespace: str) -> tuple[str, ...]:
    """The names the webhook's Service answers to; the API server calls `<name>.<ns>.svc`."""
    return (NAME, f"{NAME}.{namespace}", f"{NAME}.{namespace}.svc", f"{NAME}.{namespace}.svc.cluster.local")


def policy_files(dirs: Iterable[Path]) -> tuple[tuple[str, str], ...]:
    """The `.rego` and YAML/JSON files of policy directories, keyed for a ConfigMap: keys cannot hold
    `/`, so each is numbered and flattened (Rego packages and Gatekeeper kinds, not file names, are
    what the webhook reads). Test modules stay behind."""
    out: list[tuple[str, str]] = []
    for root in dirs:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if path.suffix not in (".rego", ".yaml", ".yml", ".json") or path.name.endswith("_test.rego"):
                continue
            rel = path.name if root.is_file() else path.relative_to(root).as_posix()
            key = f"{len(out):03d}-" + re.sub(r"[^-._a-zA-Z0-9]", "_", rel)
            out.append((key, path.read_text(encoding="utf-8")))
    return tuple(out)


def covered_kinds(library: Library, config: Config | None = None) -> list[str]:
    """The Kubernetes kinds the enabled rules of the library cover, in a stable order (`*` if any rule
    covers every kind). A kind whose rules are all disabled in `config` (``rules: {ID: {enabled:
    false}}``) is not sent: a fail-closed webhook must not stand in the way of writes it never judges.

    Azure resource types (`Microsoft.Storage/storageAccounts`) are not sent by an API server: skipped.
    Calico's namespaced NetworkPolicy (projectcalico.org/v3, kind NetworkPolicy too) is decided by
    the rules that understand Calico (those that list GlobalNetworkPolicy) under the kind
    NetworkPolicy: it is registered as its own resource.
    """
    rules = [
        rule
        for rule in library.rules.values()
        if config is None or config.rules.get(rule.id) is None or config.rules[rule.id].enabled
    ]
    # `@custom` (custom resources no rule names) is not a kind an API server can be asked to send
    kinds = {k for rule in rules for k in rule.kinds if "/" not in k and k != CUSTOM_ALIAS}
    if any({"NetworkPolicy", "GlobalNetworkPolicy"} <= set(rule.kinds) for rule in rules):
        kinds.add(CALICO_NETWORK_POLICY)
    return sorted(kinds)


def pull_policy(image_ref: str) -> str:
    """A digest is content-addressed, so a cached copy is the same image; a tag must be re-resolved."""
    return "IfNotPresent" if "@" in image_ref else "Always"


def pod_security(*, fs_group: bool = False) -> Obj:
    """The pod securityContext of every pod stockade runs (restricted Pod Security level, UID 65532);
    `fs_group` for pods whose mounted files must be group-readable by that UID."""
    out: Obj = {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS}
    if fs_group:
        out["fsGroup"] = RUN_AS
    out["seccompProfile"] = {"type": "RuntimeDefault"}
    return out


def container_security() -> Obj:
    """The container securityContext of every container stockade runs (restricted, read-only root)."""
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _meta(name: str, namespace: str | None = None, **extra: Any) -> Obj:
    md: Obj = {"name": name}
    if namespace is not None:
        md["namespace"] = namespace
    md["labels"] = dict(LABELS)
    md.update(extra)
    return md


def render(
    options: Options,
    library_kinds: Iterable[str],
    watched: Sequence[WatchedKind] = DEFAULT_KINDS,
    audit_roles: Sequence[Obj] = (),
) -> list[Obj]:
    """Every object, in apply order (the webhook configuration last, after what it calls).
    `audit_roles`: the audit's least ClusterRoles (`stockade audit --print-rbac`), for the CronJob."""
    options.validate()
    if options.audit_schedule is not None and not audit_roles:
        raise ManifestError("the audit CronJob needs the audit's ClusterRoles")
    if not options.cert_manager and not options.ca_bundle and not options.self_issued:
        raise ManifestError(
            "a caBundle is needed: give --certs-dir (from `stockade webhook certs`) or --cert-manager"
        )
    ns = options.namespace
    objects: list[Obj] = [
        _namespace(ns),
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(NAME, ns),
            "automountServiceAccountToken": True,  # the inventory cache lists and watches the API
        },
        *_rbac(
            ns,
            watched,
            [*options.param_resources, *((k.group, k.plural) for k in param_kinds(options.policy_files))],
        ),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(CONFIG_MAP, ns),
            "data": {CONFIG_KEY: options.config_text},
        },
    ]
    if options.policy_files:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": _meta(POLICY_MAP, ns),
                "data": dict(options.policy_files),
            }
        )
    if options.cert_manager:
        objects += cert_manager_objects(ns, options.dns_names)
    if options.self_issued:
        objects += self_issued_rbac(ns)
    objects += [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _meta(NAME, ns),
            "spec": {
                "type": "ClusterIP",
                "selector": dict(SELECTOR),
                "ports": [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}],
            },
        },
        _deployment(options),
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": _meta(NAME, ns),
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": dict(SELECTOR)}},
        },
        _network_policy(ns, options.apiserver_cidrs),
    ]
    if options.audit_schedule is not None:
        objects += audit_objects(options, audit_roles)
    objects.append(webhook_configuration(options, library_kinds))
    return objects


def audit_objects(options: Options, roles: Sequence[Obj]) -> list[Obj]:
    """The continuous audit: a ServiceAccount bound to the audit's least ClusterRoles (list on the kinds
    the rules read, PolicyReports written back), a CronJob running `stockade audit --in-cluster` with
    the webhook's stockade.yaml and policies, and its egress NetworkPolicy (the API server; with a
    Pushgateway, its port, which a name gives no address for)."""
    ns = options.namespace
    meta = {"name": AUDIT, "namespace": ns, "labels": dict(AUDIT_LABELS)}
    out: list[Obj] = [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": dict(meta),
            "automountServiceAccountToken": False,
        }
    ]
    for role in roles:
        name = role["metadata"]["name"]
        out.append({**role, "metadata": {"name": name, "labels": dict(AUDIT_LABELS)}})
        out.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": dict(AUDIT_LABELS)},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": AUDIT, "namespace": ns}],
            }
        )
    args = [
        "audit",
        "--in-cluster",
        options.cluster or "in-cluster",
        "--config",
        f"/config/{CONFIG_KEY}",
        "--write-policy-reports",
        # findings are the reports' business; a failed Job means the audit could not read everything
        "--fail-on",
        "never",
        "--format",
        "json",
        "--output",
        "/tmp/audit.json",
        *(["--policy-dir", POLICY_MOUNT] if options.policy_files else []),
        *(["--push-metrics", options.audit_push_metrics] if options.audit_push_metrics else []),
    ]
    mounts: list[Obj] = [
        {"name": "config", "mountPath": "/config", "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    volumes: list[Obj] = [
        {"name": "config", "configMap": {"name": CONFIG_MAP, "defaultMode": 0o444}},
        {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}},
    ]
    if options.policy_files:
        mounts.append({"name": "policies", "mountPath": POLICY_MOUNT, "readOnly": True})
        volumes.append({"name": "policies", "configMap": {"name": POLICY_MAP, "defaultMode": 0o444}})
    pod = {
        "metadata": {"labels": dict(AUDIT_LABELS)},
        "spec": {
            **({"priorityClassName": options.priority_class} if options.priority_class else {}),
            "serviceAccountName": AUDIT,
            "automountServiceAccountToken": True,  # the audit lists the cluster
            "enableServiceLinks": False,
            "restartPolicy": "Never",
            "securityContext": pod_security(),
            "containers": [
                {
                    "name": "audit",
                    "image": options.image_ref,
                    "imagePullPolicy": pull_policy(options.image_ref),
                    "command": ["stockade"],
                    "args": args,
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "512Mi"},
                        "limits": {"memory": "2Gi"},
                    },
                    "securityContext": container_security(),
                    "volumeMounts": mounts,
                }
            ],
            "volumes": volumes,
        },
    }
    out.append(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": dict(meta),
            "spec": {
                "schedule": options.audit_schedule,
                # one audit at a time: a slow audit of a big cluster is not stacked on
                "concurrencyPolicy": "Forbid",
                "startingDeadlineSeconds": 600,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 3,
                "jobTemplate": {"spec": {"backoffLimit": 1, "activeDeadlineSeconds": 3600, "template": pod}},
            },
        }
    )
    egress: list[Obj] = [{"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]}]
    if options.apiserver_cidrs:
        egress[0]["to"] = [{"ipBlock": {"cidr": c}} for c in options.apiserver_cidrs]
    if options.audit_push_metrics:
        port = _url_port(options.audit_push_metrics)
        egress.append({"ports": [{"protocol": "TCP", "port": port}]})
        egress.append(
            {
                "to": [
                    {
                        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                    }
                ],
                "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
            }
        )
    out.append(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": dict(meta),
            "spec": {
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": AUDIT}},
                "policyTypes": ["Ingress", "Egress"],
                "egress": egress,
            },
        }
    )
    return out


def _url_port(url: str) -> int:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def _namespace(ns: str) -> Obj:
    md = _meta(ns)
    md["labels"].update(
        {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/audit": "restricted",
        }
    )
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": md}


def param_kinds(files: Sequence[tuple[str, str]]) -> list[WatchedKind]:
    """The kinds of the VAPs' params in the policy files (``paramKind`` of a bound policy), beyond
    those the cache watches anyway: the webhook lists and watches them. A kind the table does not hold
    gets the plural its CRD tooling would derive; the webhook finds the real one by discovery, and a
    wrong guess leaves its cache unsynced (forbidden, logged): never ready, the webhook fails closed."""
    from stockade.policies.decoding.decode import DecodeError, documents
    from stockade.policies.kinds.api import guess_plural, info_for

    policies: dict[str, Any] = {}
    bound: set[str] = set()
    for _, text in files:
        try:
            docs = [d for d, _ in documents(text)]
        except DecodeError:
            continue  # the library load reports it, with the file and line
        for doc in docs:
            if not isinstance(doc, dict) or not str(doc.get("apiVersion") or "").startswith(
                "admissionregistration.k8s.io/"
            ):
                continue
            raw = doc.get("spec")
            spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if doc.get("kind") == "ValidatingAdmissionPolicy":
                policies[str((doc.get("metadata") or {}).get("name") or "")] = spec.get("paramKind")
            elif doc.get("kind") == "ValidatingAdmissionPolicyBinding":
                bound.add(str(spec.get("policyName") or ""))
    watched = {k.kind for k in DEFAULT_KINDS}
    out: dict[str, WatchedKind] = {}
    for policy, kind in policies.items():
        if (
            policy not in bound
            or not isinstance(kind, dict)
            or not kind.get("kind")
            or kind["kind"] in watched
        ):
            continue
        api_version, name = str(kind.get("apiVersion") or ""), str(kind["kind"])
        group, _, version = api_version.rpartition("/")
        out[name] = info_for(api_version, name) or WatchedKind(
            group, version, guess_plural(name), name, True, True
        )
    return [out[k] for k in sorted(out)]


def _rbac(ns: str, watched: Sequence[WatchedKind], params: Sequence[tuple[str, str]] = ()) -> list[Obj]:
    """The inventory cache's ClusterRole (list and watch on its kinds, then on the VAPs' param kinds,
    one rule each, after the others) and its binding."""
    groups: dict[str, list[str]] = {}
    for kind in watched:
        groups.setdefault(kind.group, []).append(kind.plural)
    own = {(g, p) for g, plurals in groups.items() for p in plurals}
    role = f"{NAME}-inventory"
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": _meta(role),
            "rules": [
                {"apiGroups": [group], "resources": sorted(plurals), "verbs": ["list", "watch"]}
                for group, plurals in sorted(groups.items())
            ]
            + [
                {"apiGroups": [group], "resources": [plural], "verbs": ["list", "watch"]}
                for group, plural in dict.fromkeys(params)
                if (group, plural) not in own
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(role),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}],
        },
    ]


def self_issued_rbac(ns: str) -> list[Obj]:
    """The self-issuing webhook's Secret and ConfigMap, created empty, and its least RBAC
    (stockade.webhooks.selfcert), bound to its ServiceAccount:

    - in its namespace, `get`/`update` of that one Secret and one ConfigMap, by name. Not `create`:
      Kubernetes cannot limit a create by name (a create request carries none), and create on
      Secrets would let the webhook's token write a `kubernetes.io/service-account-token` Secret for
      any ServiceAccount of the namespace (the registrar's: STK-RBAC-014, and the escalation path
      STK-RBAC-031). So the two objects are rendered here, empty, and the first replica to fill the
      Secret wins by its resourceVersion (the others get 409 Conflict and read it);
    - cluster-wide, `get`/`patch` of its own ValidatingWebhookConfiguration, by name (never create
      or delete: the registration hook creates it, the pre-delete hook removes it).

    Applying these again (`helm upgrade`, `kubectl apply`) leaves the data the webhook wrote: none
    is in the manifest.
    """
    rbac = "rbac.authorization.k8s.io"
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": ns}]
    return [
        {"apiVersion": "v1", "kind": "Secret", "metadata": _meta(SELF_ISSUED_SECRET, ns), "type": "Opaque"},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(CA_BUNDLE_MAP, ns)},
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "Role",
            "metadata": _meta(SELF_ISSUED_ROLE, ns),
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["secrets"],
                    "resourceNames": [SELF_ISSUED_SECRET],
                    "verbs": ["get", "update"],
                },
                {
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "resourceNames": [CA_BUNDLE_MAP],
                    "verbs": ["get", "update"],
                },
            ],
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "RoleBinding",
            "metadata": _meta(SELF_ISSUED_ROLE, ns),
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": SELF_ISSUED_ROLE},
            "subjects": subject,
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRole",
            "metadata": _meta(SELF_ISSUED_ROLE),
            "rules": [
                {
                    "apiGroups": ["admissionregistration.k8s.io"],
                    "resources": ["validatingwebhookconfigurations"],
                    "resourceNames": [NAME],
                    "verbs": ["get", "patch"],
                }
            ],
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(SELF_ISSUED_ROLE),
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": SELF_ISSUED_ROLE},
            "subjects": subject,
        },
    ]


def cert_manager_objects(ns: str, dns_names: Sequence[str]) -> list[Obj]:
    """A private CA of the webhook's own (self-signed root -> CA Issuer -> serving Certificate), so
    serving certificates rotate without the caBundle changing; cainjector fills the caBundle."""
    root, ca = f"{NAME}-selfsigned", f"{NAME}-ca"
    key = {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"}
    return [
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": _meta(root, ns),
            "spec": {"selfSigned": {}},
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": _meta(ca, ns),
            "spec": {
                "isCA": True,
                "commonName": ca,
                "secretName": ca,
                "duration": "43800h",
                "renewBefore": "4380h",
                "privateKey": key,
                "issuerRef": {"kind": "Issuer", "name": root},
            },
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": _meta(ca, ns),
            "spec": {"ca": {"secretName": ca}},
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": _meta(NAME, ns),
            "spec": {
                "secretName": TLS_SECRET,
                "dnsNames": list(dns_names),
                "duration": "2160h",
                "renewBefore": "720h",
                "privateKey": key,
                "usages": ["server auth", "digital signature"],
                "issuerRef": {"kind": "Issuer", "name": ca},
            },
        },
    ]


def _deployment(options: Options) -> Obj:
    container = {
        "name": "webhook",
        "image": options.image_ref,
        "imagePullPolicy": pull_policy(options.image_ref),
        "command": ["stockade"],
        "args": [
            "webhook",
            "serve",
            "--tls-cert",
            "/tls/tls.crt",
            "--tls-key",
            "/tls/tls.key",
            *(["--self-issued-certs"] if options.self_issued else []),
            "--config",
            f"/config/{CONFIG_KEY}",
            "--port",
            str(PORT),
            *(["--cluster", options.cluster] if options.cluster else []),
            *(["--policy-dir", POLICY_MOUNT] if options.policy_files else []),
        ],
        # the self-issuer's namespace (its Secret, ConfigMap and the Service's DNS names)
        **(
            {
                "env": [
                    {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}
                ]
            }
            if options.self_issued
            else {}
        ),
        "ports": [{"name": "https", "containerPort": PORT, "protocol": "TCP"}],
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"},
            "periodSeconds": 5,
            "failureThreshold": 2,
        },
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": "https", "scheme": "HTTPS"},
            "initialDelaySeconds": 10,
            "periodSeconds": 10,
            "failureThreshold": 3,
        },
        # No CPU limit: CFS throttling would add latency to every admission request in a burst.
        "resources": {
            "requests": {"cpu": "100m", "memory": "256Mi"},
            "limits": {"memory": "512Mi"},
        },
        "securityContext": container_security(),
        "volumeMounts": [
            {"name": "tls", "mountPath": "/tls", "readOnly": not options.self_issued},
            {"name": "config", "mountPath": "/config", "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
            *(
                [{"name": "policies", "mountPath": POLICY_MOUNT, "readOnly": True}]
                if options.policy_files
                else []
            ),
        ],
    }
    # Whole-volume mounts (no subPath): Secret and ConfigMap updates reach the files, which the webhook
    # reloads live (certificates on rotation, stockade.yaml on edit).
    # Self-issued: the webhook writes the pair it reads from its Secret into memory, never to disk.
    tls: Obj = (
        {"name": "tls", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}}
        if options.self_issued
        else {"name": "tls", "secret": {"secretName": TLS_SECRET, "defaultMode": 0o440}}
    )
    volumes = [
        tls,
        {"name": "config", "configMap": {"name": CONFIG_MAP, "defaultMode": 0o444}},
        {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
    ]
    if options.policy_files:
        volumes.append({"name": "policies", "configMap": {"name": POLICY_MAP, "defaultMode": 0o444}})
    spread = {"labelSelector": {"matchLabels": dict(SELECTOR)}, "whenUnsatisfiable": "ScheduleAnyway"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(NAME, options.namespace),
        "spec": {
            "replicas": options.replicas,
            "revisionHistoryLimit": 5,
            "selector": {"matchLabels": dict(SELECTOR)},
            # Never fewer ready pods than asked during a rollout: the API server calls every one.
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {
                "metadata": {"labels": dict(LABELS)},
                "spec": {
                    **({"priorityClassName": options.priority_class} if options.priority_class else {}),
                    "serviceAccountName": NAME,
                    "automountServiceAccountToken": True,
                    "enableServiceLinks": False,
                    "securityContext": pod_security(fs_group=True),
                    # Preferred, not required: replicas still schedule on a small cluster.
                    "affinity": {
                        "podAntiAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 100,
                                    "podAffinityTerm": {
                                        "labelSelector": {"matchLabels": dict(SELECTOR)},
                                        "topologyKey": "kubernetes.io/hostname",
                                    },
                                }
                            ]
                        }
                    },
                    "topologySpreadConstraints": [
                        {**spread, "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone"}
                    ],
                    "terminationGracePeriodSeconds": 30,
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


def _network_policy(ns: str, apiserver_cidrs: Sequence[str]) -> Obj:
    """Ingress: the webhook port only, from anywhere (the API server may sit outside the pod network,
    as on AKS). Egress: the API server only (the in-cluster client uses its IP: no DNS needed)."""
    egress: Obj = {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]}
    if apiserver_cidrs:
        egress["to"] = [{"ipBlock": {"cidr": c}} for c in apiserver_cidrs]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _meta(NAME, ns),
        "spec": {
            "podSelector": {"matchLabels": dict(SELECTOR)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"ports": [{"protocol": "TCP", "port": PORT}]}],
            "egress": [egress],
        },
    }


def webhook_rules(library_kinds: Iterable[str], declared: Sequence[WatchedKind] = ()) -> list[Obj]:
    """One rule per API group/version, for CREATE and UPDATE (DELETE and CONNECT are always allowed).

    The pod rules' ``@workloads`` stands for the custom workload kinds too (RayCluster, JobSet, ...,
    and those the configuration declares, ``declared``): registering a resource whose CRD is not
    installed is harmless, and one installed later is judged from its first object.
    """
    kinds = set(library_kinds)
    operations = ["CREATE", "UPDATE"]
    if "*" in kinds:
        return [
            {
                "apiGroups": ["*"],
                "apiVersions": ["*"],
                "resources": ["*", "pods/ephemeralcontainers"],
                "operations": operations,
                "scope": "*",
            }
        ]
    by_group: dict[tuple[str, str], set[str]] = {}
    resources = [(kind, resource_of(kind)) for kind in kinds if kind != WORKLOAD_ALIAS]
    if WORKLOAD_ALIAS in kinds:
        resources += [(info.kind, info) for info in WorkloadKinds(declared).custom]
    for kind, resource in resources:
        plurals = by_group.setdefault((resource.group, resource.version), set())
        plurals.add(resource.plural)
        if kind == "Pod":
            plurals.add("pods/ephemeralcontainers")
    return [
        {
            "apiGroups": [group],
            "apiVersions": [version],
            "resources": sorted(plurals),
            "operations": operations,
            "scope": "*",
        }
        for (group, version), plurals in sorted(by_group.items())
    ]


def unsent_namespaces(config_text: str) -> list[str]:
    """The config's out-of-scope namespaces that a label selector can name (globs cannot be): the
    webhook allows everything in them anyway, so not sending them changes no verdict, saves the calls,
    and keeps them working while the webhook is down."""
    excluded = parse_config(config_text).scope.excluded_namespaces
    return [n for n in excluded if _DNS_LABEL.match(n)]


def webhook_configuration(options: Options, library_kinds: Iterable[str]) -> Obj:
    """The ValidatingWebhookConfiguration (`manifests --registration`, `install`, `register`)."""
    client: Obj = {
        "service": {"namespace": options.namespace, "name": NAME, "path": "/validate", "port": 443}
    }
    metadata = _meta(NAME)
    if options.cert_manager:
        metadata["annotations"] = {CA_INJECT_ANNOTATION: f"{options.namespace}/{NAME}"}
    elif options.ca_bundle is not None:
        client["caBundle"] = base64.b64encode(options.ca_bundle).decode()
    elif not options.self_issued:  # self-issued and not yet published: the webhook patches it in
        raise ManifestError("a caBundle is needed: give --certs-dir or --cert-manager")
    names = sorted({"kube-system", options.namespace, *unsent_namespaces(options.config_text)})
    excluded = {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": names}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": metadata,
        "webhooks": [
            {
                "name": WEBHOOK_NAME,
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "timeoutSeconds": options.timeout_seconds,
                "failurePolicy": options.failure_policy,
                # Also sent when a request uses another version of a kind (converted to the one listed).
                "matchPolicy": "Equivalent",
                "clientConfig": client,
                "namespaceSelector": {"matchExpressions": [excluded]},
                "matchConditions": [dict(c) for c in MATCH_CONDITIONS],
                "rules": webhook_rules(library_kinds, parse_config(options.config_text).workload_kinds()),
            }
        ],
    }


def tls_secret(namespace: str, cert_pem: bytes, key_pem: bytes) -> Obj:
    """The serving certificate's Secret. Built only to be sent to the API server by `install`: it is
    never part of the rendered text (which is printed and committed)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(TLS_SECRET, namespace),
        "type": "kubernetes.io/tls",
        "data": {
            "tls.crt": base64.b64encode(cert_pem).decode(),
            "tls.key": base64.b64encode(key_pem).decode(),
        },
    }


# -- text: multi-document YAML and the kustomize base ----------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings (the ConfigMap's stockade.yaml stays readable), no anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


def to_documents(objects: Sequence[Obj]) -> str:
    return "---\n".join(to_yaml(o) for o in objects)


KUSTOMIZE_HEADER = (
    "# Generated by `stockade webhook manifests --cert-manager --kustomize-dir DIR`: do not edit;\n"
    "# change webhooks/manifests.py and regenerate (tests/webhooks/test_kustomize.py checks it).\n"
)


def file_name(obj: Obj) -> str:
    return f"{str(obj['kind']).lower()}-{obj['metadata']['name']}.yaml"


def kustomize_files(objects: Sequence[Obj]) -> dict[str, str]:
    """File name -> text: one file per object and a kustomization.yaml listing them in apply order."""
    files = {file_name(o): KUSTOMIZE_HEADER + to_yaml(o) for o in objects}
    if len(files) != len(objects):
        raise ManifestError("two objects would share a file name")
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": list(files),
    }
    return {"kustomization.yaml": KUSTOMIZE_HEADER + to_yaml(kustomization), **files}


#: where the kustomize base keeps the webhook configuration, apart from what it calls
REGISTRATION_DIR = "registration"
REGISTRATION_KINDS = frozenset({"ValidatingWebhookConfiguration"})


def split_registration(objects: Sequence[Obj]) -> tuple[list[Obj], list[Obj]]:
    """(what the webhook needs, the webhook configuration). Applied in one go, `kubectl apply` would
    register a fail-closed webhook before any replica is ready, and every write it judges would be
    rejected until one is (or forever, if the image cannot be pulled): the registration is applied
    apart, once the Deployment has rolled out. `install` does the same in one command."""
    return (
        [o for o in objects if o["kind"] not in REGISTRATION_KINDS],
        [o for o in objects if o["kind"] in REGISTRATION_KINDS],
    )


def _write_files(files: dict[str, str], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.yaml"):
        if stale.name not in files and stale.read_text(encoding="utf-8").startswith(KUSTOMIZE_HEADER):
            stale.unlink()
    written = []
    for name, text in files.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def write_kustomize(objects: Sequence[Obj], directory: Path) -> list[Path]:
    """Write the base (everything but the webhook configuration) and, in `registration/`, a second
    base holding the webhook configuration, to apply once the webhook is ready; generated YAML files
    that no longer correspond to an object are removed."""
    base, registration = split_registration(objects)
    written = _write_files(kustomize_files(base), directory)
    if registration:
        written += _write_files(kustomize_files(registration), directory / REGISTRATION_DIR)
    return written
