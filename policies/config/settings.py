"""stockade.yaml: the one configuration every gate reads.

Unknown keys are errors (a misspelt `exeptions:` must not silently disable a waiver's expiry), and
every error names the key's path and, when the file is YAML, its line.
"""

import datetime as dt
import fnmatch
import ipaddress
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from stockade.policies.config.patterns import glob_problem, registry_prefix_problem
from stockade.policies.decoding.yamlpos import NodeLocator, YAMLSyntaxError, load_with_locator
from stockade.policies.kinds.api import KindInfo, pod_path
from stockade.policies.model import LATEST_MINOR, OLDEST_MINOR, Action, Severity

DEFAULT_EXCLUDED_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "stockade-system")
PSSLevel = Literal["privileged", "baseline", "restricted"]


def _glob(delimiter: str | None) -> AfterValidator:
    def check(pattern: str) -> str:
        problem = glob_problem(pattern, delimiter)
        if problem is not None:
            raise ValueError(f"{pattern!r} is not a glob every engine reads alike: {problem}")
        return pattern

    return AfterValidator(check)


# The configured globs (config/patterns.py): `Glob` where the rule matches with no delimiter (`*`
# crosses everything), `DotGlob` where it separates at "." (DNS and Azure names), `PathGlob` at "/".
Glob = Annotated[str, _glob(None)]
DotGlob = Annotated[str, _glob(".")]
PathGlob = Annotated[str, _glob("/")]


def _registry_prefix(entry: str) -> str:
    problem = registry_prefix_problem(entry)
    if problem is not None:
        raise ValueError(f"{entry!r} is not a registry prefix: {problem}")
    return entry


RegistryPrefix = Annotated[str, AfterValidator(_registry_prefix)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def glob_match(patterns: Sequence[str], value: str | None) -> bool:
    """True when `patterns` is empty (no constraint) or one shell-style pattern matches."""
    if not patterns:
        return True
    if value is None:
        return False
    return any(fnmatch.fnmatchcase(value, p) for p in patterns)


class PSSConfig(_Model):
    """Pod Security Standards: the level for namespaces without a `pod-security` enforce label."""

    default_level: PSSLevel = "restricted"


class ScopeConfig(_Model):
    """What is out of scope: system namespaces and bootstrap RBAC objects."""

    excluded_namespaces: tuple[Glob, ...] = DEFAULT_EXCLUDED_NAMESPACES
    include_system_rbac: bool = False
    # Roles and RoleBindings are excluded only by this list, never by excluded_namespaces: kube-system
    # is the first place an attacker runs a pod as a powerful ServiceAccount.
    rbac_excluded_namespaces: tuple[Glob, ...] = ()

    def namespace_excluded(self, namespace: str | None, *, rbac: bool = False) -> bool:
        patterns = self.rbac_excluded_namespaces if rbac else self.excluded_namespaces
        return namespace is not None and bool(patterns) and glob_match(patterns, namespace)


class ImagesConfig(_Model):
    """Where images may come from and how they must be named."""

    # Registry host + optional path prefixes, e.g. "myacr.azurecr.io/" or "mcr.microsoft.com/oss/".
    # Empty (the default) checks no registry: STK-IMG-001 is off until the list names the registries
    # images may come from, and the scan and the audit say so once (a note).
    allowed_registries: tuple[RegistryPrefix, ...] = ()
    # Namespaces (globs) whose images must be pinned by digest (@sha256:...).
    require_digest_namespaces: tuple[Glob, ...] = ()
    # Release channels publishers move (STK-IMG-002, besides "latest" and no tag): case-insensitive
    # globs, matched against the whole tag and against each of its words (split at "-", "_", "."), so
    # "latest-gpu" and "nightly-py310" float and "latestversion" does not. Not alpha, beta, rc, next or
    # lts by default: they also mark fixed releases ("1.0.0-beta.1", "2.440.1-lts").
    floating_tags: tuple[Glob, ...] = (
        "latest",
        "nightly",
        "main",
        "master",
        "edge",
        "dev",
        "stable",
        "develop",
        "development",
        "canary",
        "snapshot",
        "unstable",
        "head",
        "current",
    )


class ResourcesConfig(_Model):
    """Requests and limits every container must declare."""

    require_memory_limit: bool = True
    require_cpu_request: bool = True
    require_memory_request: bool = True


class Toleration(_Model):
    key: str
    operator: Literal["Equal", "Exists"] = "Exists"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None


class GPUConfig(_Model):
    """Accelerators: which resources count as GPUs and where GPU pods may run."""

    resources: tuple[str, ...] = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915")
    # A namespace must carry all these labels for GPU pods to run in it.
    namespace_labels: dict[str, str] = Field(default_factory=lambda: {"stockade.io/gpu": "true"})
    # A GPU pod must tolerate at least one of these taints (the GPU node pool's taint)...
    tolerations: tuple[Toleration, ...] = (Toleration(key="nvidia.com/gpu", effect="NoSchedule"),)
    # ...and select these node labels (nodeSelector or required node affinity); empty: no requirement.
    node_selector: dict[str, str] = Field(default_factory=dict)


SandboxProfileName = Literal["aks", "baremetal"]

# nvproxy (gVisor's GPU proxy) supports these GPUs only (gvisor.dev "GPU support"): T4, A10G, A100,
# L4, H100, as NVIDIA GPU Feature Discovery names them in `nvidia.com/gpu.product` (Tesla-T4,
# NVIDIA-A10G, NVIDIA-A100-SXM4-80GB, NVIDIA-L4, NVIDIA-H100-80GB-HBM3, ...). MIG is never supported.
DEFAULT_NVPROXY_PRODUCTS = ("*-T4", "*-A10G", "*-A100", "*-A100-*", "*-L4", "*-H100", "*-H100-*")


class SandboxSelector(_Model):
    """One kind of high-risk workload: every field given must match (globs for names, exact labels).

    `pod_labels` match the labels of the workload object or of its pod template. A selector must say
    something: use `namespaces: ["*"]` to make every workload high-risk.
    """

    namespaces: tuple[Glob, ...] = ()
    namespace_labels: dict[str, str] = Field(default_factory=dict)
    pod_labels: dict[str, str] = Field(default_factory=dict, validate_default=True)

    @field_validator("pod_labels")
    @classmethod
    def _not_empty(cls, value: dict[str, str], info: Any) -> dict[str, str]:
        data = info.data
        if not value and not data.get("namespaces") and not data.get("namespace_labels"):
            raise ValueError("a sandbox selector needs namespaces, namespace_labels or pod_labels")
        return value


class NvproxyConfig(_Model):
    """The bare-metal pool where gVisor can give pods GPUs through nvproxy."""

    # Labels of the nvproxy-capable pool; a sandboxed GPU pod (or its RuntimeClass) must select all.
    node_selector: dict[str, str] = Field(default_factory=dict)
    # Without node_selector, the pod must select a GPU model nvproxy supports through this label.
    product_label: str = "nvidia.com/gpu.product"
    products: tuple[Glob, ...] = DEFAULT_NVPROXY_PRODUCTS


class SandboxProfile(_Model):
    """What counts as a sandbox on one platform."""

    # RuntimeClass names a high-risk workload may use (exact names: an approval, not a pattern).
    classes: tuple[str, ...]
    # Handlers (globs) that are sandboxes: `runsc` is gVisor, `kata*` is Kata Containers.
    handlers: tuple[Glob, ...]
    # A sandbox class must pin its pods to the sandbox pool: its scheduling.nodeSelector holds every
    # label of one of these. Empty: any non-empty nodeSelector.
    node_selectors: tuple[dict[str, str], ...] = ()


class AKSSandboxProfile(SandboxProfile):
    """AKS Pod Sandboxing: Kata only (`kata-vm-isolation`, preview `kata-mshv-vm-isolation`), no GPUs."""

    classes: tuple[str, ...] = ("kata-vm-isolation", "kata-mshv-vm-isolation")
    handlers: tuple[Glob, ...] = ("kata*",)
    node_selectors: tuple[dict[str, str], ...] = (
        {"kubernetes.azure.com/kata-vm-isolation": "true"},
        {"kubernetes.azure.com/kata-mshv-vm-isolation": "true"},
    )


class BareMetalSandboxProfile(SandboxProfile):
    """Bare metal: gVisor (`runsc`, GPUs through nvproxy) or Kata."""

    classes: tuple[str, ...] = ("gvisor", "runsc", "kata", "kata-qemu", "kata-clh", "kata-fc")
    handlers: tuple[Glob, ...] = ("runsc", "kata*")
    nvproxy: NvproxyConfig = NvproxyConfig()


class SandboxCluster(_Model):
    """The profile of the clusters whose name matches: the gate's Inventory.cluster (audit contexts)."""

    clusters: tuple[Glob, ...] = Field(min_length=1)
    profile: SandboxProfileName


def _default_sandbox_selectors() -> tuple[SandboxSelector, ...]:
    label = {"stockade.io/sandbox": "required"}
    return (SandboxSelector(namespace_labels=label), SandboxSelector(pod_labels=label))


class SandboxConfig(_Model):
    """Sandboxed runtime classes: which workloads are high-risk and what sandboxes them per platform.

    `profile` applies where no `clusters` entry matches (the last match wins), and wherever the cluster
    name is unknown: always in `stockade scan`, and in the webhook until it is told its name. Its
    default is `baremetal`, the profile that knows both sandboxes, so a gVisor or Kata class is
    accepted in CI and the GPU rule still requires the nvproxy pool; an AKS-only repository sets
    `profile: aks`.
    """

    profile: SandboxProfileName = "baremetal"
    clusters: tuple[SandboxCluster, ...] = ()
    selectors: tuple[SandboxSelector, ...] = Field(default_factory=_default_sandbox_selectors)
    # RuntimeClass names (globs) that claim to be sandboxes: their handler must be a sandbox handler.
    class_patterns: tuple[Glob, ...] = ("*gvisor*", "*runsc*", "*kata*", "*sandbox*")
    aks: AKSSandboxProfile = AKSSandboxProfile()
    baremetal: BareMetalSandboxProfile = BareMetalSandboxProfile()

    def profile_for(self, cluster: str | None) -> SandboxProfileName:
        """The profile of `cluster` (None: unknown, as in a scan): the last matching entry, else `profile`."""
        found = self.profile
        for entry in self.clusters:
            if cluster is not None and glob_match(entry.clusters, cluster):
                found = entry.profile
        return found

    def settings(self, profile: SandboxProfileName) -> SandboxProfile:
        return self.aks if profile == "aks" else self.baremetal


DEFAULT_FORBIDDEN_HOST_PATHS = (
    "/",
    "/proc",
    "/etc",
    "/dev/nvidia*",
    "/var/lib/kubelet",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/var/run/docker",
    "/var/run/containerd",
    "/run/containerd",
    "/var/run/crio",
    "/run/crio",
    "/var/lib/docker",
    "/var/lib/containerd",
    # the Container Device Interface's dynamic specs (/etc/cdi is under /etc): a spec written there
    # adds devices, mounts and hooks the runtime runs on the host to every container that asks for
    # the device (NVIDIA's Container Toolkit and device plugin generate them)
    "/var/run/cdi",
    "/run/cdi",
)


class HostPathConfig(_Model):
    """hostPath targets never allowed, even where the Pod Security level permits hostPath."""

    forbidden: tuple[PathGlob, ...] = DEFAULT_FORBIDDEN_HOST_PATHS


def _ip_addresses(value: tuple[str, ...]) -> tuple[str, ...]:
    """`value` when every entry is an IP address (v4 or v6), else the first that is not."""
    for addr in value:
        try:
            ipaddress.ip_address(addr)
        except ValueError:
            raise ValueError(f"{addr!r} is not an IP address") from None
    return value


#: NodeLocal DNSCache's default listen address (kubernetes/dns nodelocaldns, __PILLAR__LOCAL__DNS__).
NODELOCAL_DNS_ADDRESS = "169.254.20.10"


class ClusterDNSConfig(_Model):
    """The cluster DNS pods: always reachable on port 53, and the only DNS server workloads may use."""

    namespace: str = "kube-system"
    pod_labels: dict[str, str] = Field(default_factory=lambda: {"k8s-app": "kube-dns"})
    # Addresses that are cluster DNS too: by default NodeLocal DNSCache's link-local address
    # (169.254.20.10, the address its manifests and AKS/GKE's add-ons listen on); add kube-dns'
    # Service IP or another cache's address. An ipBlock (or Cilium toCIDR) of exactly one of them is
    # cluster DNS. A list that is set replaces the default: keep 169.254.20.10 in it to keep the cache.
    addresses: tuple[str, ...] = (NODELOCAL_DNS_ADDRESS,)

    @field_validator("addresses")
    @classmethod
    def _addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _ip_addresses(value)


class EgressAllow(_Model):
    """Destinations some workloads may reach: `namespaces` (globs) and `workload_labels` (all must be
    on the pods) pick the workloads, empty meaning any; `cidrs`, `to_namespaces` (globs) and `fqdns`
    (DNS names or patterns whose `*` stays within one label, for Cilium's toFQDNs) are what they may
    reach."""

    namespaces: tuple[Glob, ...] = ()
    workload_labels: dict[str, str] = Field(default_factory=dict)
    cidrs: tuple[str, ...] = ()
    to_namespaces: tuple[Glob, ...] = ()
    fqdns: tuple[DotGlob, ...] = ()

    @field_validator("cidrs")
    @classmethod
    def _cidrs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in value:
            try:
                ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                raise ValueError(f"{cidr!r} is not a CIDR: {exc}") from None
        return value


class EgressConfig(_Model):
    """Deny-by-default egress: nothing is allowed beyond cluster DNS until listed in `allow`."""

    cluster_dns: ClusterDNSConfig = ClusterDNSConfig()
    allow: tuple[EgressAllow, ...] = ()
    # Reaching these is always reported: cloud instance metadata (IMDS) and Azure's WireServer.
    metadata_addresses: tuple[str, ...] = ("169.254.169.254", "168.63.129.16")
    # ... on these ports (PROTO/PORT): IMDS and the WireServer answer HTTP on TCP 80, the WireServer
    # also on TCP 32526; a rule that opens none of them (TCP 443 only, UDP 53) does not reach them
    metadata_ports: tuple[str, ...] = ("TCP/80", "TCP/32526")

    @field_validator("metadata_ports")
    @classmethod
    def _ports(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        out = []
        for text in value:
            proto, _, port = text.partition("/")
            if proto.upper() not in ("TCP", "UDP", "SCTP") or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{text!r} is not PROTOCOL/PORT (TCP, UDP or SCTP; 1-65535), e.g. TCP/80")
            out.append(f"{proto.upper()}/{int(port)}")
        return tuple(out)

    @field_validator("metadata_addresses")
    @classmethod
    def _addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return _ip_addresses(value)


class WorkloadSelector(_Model):
    """Selects workloads; empty lists mean "any". Patterns are globs (config/patterns.py)."""

    namespaces: tuple[Glob, ...] = ()
    kinds: tuple[Glob, ...] = ()
    names: tuple[Glob, ...] = ()
    labels: dict[str, str] = Field(default_factory=dict)


class ServiceAccountsConfig(_Model):
    """Workloads that talk to the Kubernetes API and so may mount a ServiceAccount token."""

    api_clients: tuple[WorkloadSelector, ...] = ()
    # Audiences the API server accepts (--api-audiences): a projected serviceAccountToken for one of
    # them, or for none, is a Kubernetes API credential (STK-SA-001, STK-RBAC-030).
    api_audiences: tuple[str, ...] = (
        "https://kubernetes.default.svc",
        "https://kubernetes.default.svc.cluster.local",
        "kubernetes.default.svc",
    )


class BreakGlassSubject(_Model):
    """A subject allowed to hold cluster-admin/admin/edit bindings (emergency access); name is a glob."""

    kind: Literal["User", "Group", "ServiceAccount"]
    name: DotGlob = Field(min_length=1)
    namespace: str | None = None  # ServiceAccounts only; None matches any namespace


class RBACConfig(_Model):
    """RBAC least privilege: who may hold the built-in admin roles, and how deep escalation search goes."""

    # Subjects that may be bound to the privileged_roles (break-glass accounts, the platform team).
    break_glass_subjects: tuple[BreakGlassSubject, ...] = ()
    # ClusterRoles whose bindings are reported unless every subject is a break-glass subject.
    privileged_roles: tuple[str, ...] = ("cluster-admin", "admin", "edit")
    # Escalation paths: longest chain of "can act as" steps followed, and most paths kept per binding.
    max_path_length: int = Field(3, ge=1, le=4)
    max_paths_per_binding: int = Field(20, ge=1)
    # The Kubernetes version the fleet runs ("1.30" ... "1.35"; the oldest one if they differ): from
    # 1.35 `get` on pods/exec, pods/attach and pods/portforward no longer opens a session (create
    # does, AuthorizePodWebsocketUpgradeCreatePermission); before, get alone was enough. Unset, any
    # supported version is assumed, and what any of them allows is reported (never a silent pass).
    kubernetes_version: str | None = None
    # The cluster's authorizers (kube-apiserver --authorization-mode), for VAPs' `authorizer` checks:
    # with Node and RBAC only, a check no RBAC binding allows is denied when every binding is known;
    # with another (Webhook: AKS with Azure RBAC for Kubernetes; ABAC), it cannot be told, and such a
    # policy is reported as not evaluated.
    authorization_modes: tuple[
        Literal["Node", "RBAC", "Webhook", "ABAC", "AlwaysAllow", "AlwaysDeny"], ...
    ] = (
        "Node",
        "RBAC",
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _quoted(cls, value: Any) -> Any:
        if isinstance(value, int | float):  # YAML reads 1.30 as the number 1.3
            raise ValueError(
                f'{value!r} is a number to YAML; write the version quoted, e.g. "1.{LATEST_MINOR}"'
            )
        return value

    @field_validator("kubernetes_version")
    @classmethod
    def _known_version(cls, value: str | None) -> str | None:
        if value is None:
            return None
        match = re.fullmatch(r"v?1\.(\d+)(?:\.\d+)?", value.strip())
        if match is None or not OLDEST_MINOR <= int(match.group(1)) <= LATEST_MINOR:
            raise ValueError(
                f"{value!r}: stockade knows Kubernetes 1.{OLDEST_MINOR} to 1.{LATEST_MINOR}"
                f' (write e.g. "1.{LATEST_MINOR}")'
            )
        return f"1.{int(match.group(1))}"

    @property
    def kubernetes_minor(self) -> int:
        """The minor version whose authorization applies; unset: the oldest, which allows the most."""
        return int(self.kubernetes_version.split(".")[1]) if self.kubernetes_version else OLDEST_MINOR


class AdmissionConfig(_Model):
    """How the webhook fails and what it accepts. Fail closed unless told otherwise."""

    failure_mode: Literal["closed", "open"] = "closed"
    max_request_bytes: int = Field(3 * 1024 * 1024, gt=0)
    evaluation_timeout_seconds: float = Field(2.0, gt=0)
    # Objects beyond these are denied before evaluation, in either failure mode (admission/bounds.py).
    max_object_values: int = Field(100_000, gt=0)
    max_containers: int = Field(128, gt=0)
    max_pod_specs: int = Field(64, gt=0)
    # Slow clients: the request line and headers, and then the body, must arrive within these.
    header_timeout_seconds: float = Field(5.0, gt=0)
    body_timeout_seconds: float = Field(10.0, gt=0)
    # Per worker process: open connections (more are closed at once), requests read and evaluated
    # at once (others wait before their body is read). Memory arithmetic: docs/benchmarks.md.
    max_connections: int = Field(1024, gt=0)
    max_inflight: int = Field(4, gt=0)
    # Bytes of request bodies being read at once, per worker; past it the longest reader is dropped.
    max_buffered_bytes: int = Field(48 * 1024 * 1024, gt=0)
    # The embedded engine in a child process per worker, killed and replaced when an evaluation
    # overruns its timeout. false: evaluate in the worker (about 1-2 ms faster at the median under
    # load, measured in docs/benchmarks.md), but an evaluation that runs away stalls the worker.
    engine_process: bool = True

    @model_validator(mode="after")
    def _budget_holds_a_request(self) -> "AdmissionConfig":
        if self.max_buffered_bytes < self.max_request_bytes:
            raise ValueError("max_buffered_bytes must be at least max_request_bytes")
        return self


class StorageConfig(_Model):
    """Private-link storage: the Azure storage CSI drivers, approved accounts, credential Secrets."""

    csi_drivers: tuple[str, ...] = ("blob.csi.azure.com", "file.csi.azure.com")
    # Storage account names (globs) volumes may use. Empty: none approved yet, so every volume is reported.
    approved_accounts: tuple[DotGlob, ...] = ()
    # Secret data keys that hold a storage account credential (compared case-insensitively).
    forbidden_secret_keys: tuple[str, ...] = ("azurestorageaccountkey", "azurestorageaccountsastoken")
    # Azure side: sub-resources every storage account needs an Approved private endpoint for
    # (dfs is added for accounts with a hierarchical namespace, file for FileStorage accounts).
    required_subresources: tuple[str, ...] = ("blob",)


class SensitivePort(_Model):
    """An interface without authentication of its own, by port number and port names."""

    what: str
    port: int = Field(ge=1, le=65535)
    names: tuple[str, ...] = ()


class SensitiveImage(_Model):
    """An interface without authentication of its own, by the images (globs) its pods run; not where
    the pods also run one of ``unless`` (an authenticating proxy in front of it)."""

    what: str
    images: tuple[Glob, ...]
    unless: tuple[Glob, ...] = ()


class ExposureConfig(_Model):
    """What must not be reachable from outside the cluster without authentication (STK-EXP-001)."""

    sensitive_ports: tuple[SensitivePort, ...] = (
        SensitivePort(what="Ray dashboard and Jobs API", port=8265, names=("dashboard",)),
        SensitivePort(what="Ray client", port=10001, names=("client", "ray-client")),
        SensitivePort(what="Ray GCS", port=6379, names=("gcs", "gcs-server", "redis")),
        SensitivePort(what="Ray dashboard agent", port=52365, names=("dashboard-agent",)),
        SensitivePort(what="Jupyter", port=8888, names=("jupyter", "notebook", "notebook-port")),
        SensitivePort(what="TensorBoard", port=6006, names=("tensorboard",)),
        SensitivePort(what="MLflow", port=5000, names=("mlflow",)),
        SensitivePort(what="Spark UI", port=4040, names=("spark-ui",)),
        SensitivePort(what="Dask scheduler", port=8786, names=("dask-scheduler",)),
        SensitivePort(what="Dask dashboard", port=8787, names=("dask-dashboard",)),
        SensitivePort(what="Gradio", port=7860, names=("gradio",)),
        SensitivePort(what="Streamlit", port=8501, names=("streamlit",)),
        SensitivePort(what="Ollama", port=11434, names=("ollama",)),
        SensitivePort(what="Argo Workflows server", port=2746, names=("argo-server",)),
    )
    # Where no port tells: the images of the pods a LoadBalancer/NodePort Service selects.
    sensitive_images: tuple[SensitiveImage, ...] = (
        SensitiveImage(
            what="Ray", images=("rayproject/ray*", "*/rayproject/ray*", "anyscale/ray*", "*/anyscale/ray*")
        ),
        SensitiveImage(
            what="Jupyter",
            images=(
                "jupyter/*",
                "*/jupyter/*",
                "kubeflownotebookswg/jupyter*",
                "*/kubeflownotebookswg/jupyter*",
            ),
        ),
        SensitiveImage(what="TensorBoard", images=("*tensorboard*",)),
        SensitiveImage(what="MLflow", images=("*mlflow*",)),
        SensitiveImage(what="Argo Workflows server", images=("argoproj/argocli*", "*/argoproj/argocli*")),
        SensitiveImage(
            what="vLLM OpenAI-compatible server", images=("vllm/vllm-openai*", "*/vllm/vllm-openai*")
        ),
        SensitiveImage(what="Ollama", images=("ollama/ollama*", "*/ollama/ollama*")),
        SensitiveImage(
            what="KubeRay API server",
            images=("kuberay/apiserver*", "*/kuberay/apiserver*"),
            unless=("kuberay/security-proxy*", "*/kuberay/security-proxy*"),
        ),
    )
    # Ingress annotations by which the controller authenticates requests (any non-empty value).
    ingress_auth_annotations: tuple[str, ...] = (
        "nginx.ingress.kubernetes.io/auth-url",
        "nginx.ingress.kubernetes.io/auth-type",
        "nginx.ingress.kubernetes.io/auth-tls-verify-client",
        "alb.ingress.kubernetes.io/auth-type",
        "traefik.ingress.kubernetes.io/router.middlewares",
        "haproxy-ingress.github.io/auth-url",
        "haproxy-ingress.github.io/auth-type",
        "konghq.com/plugins",
    )


class CredentialsConfig(_Model):
    """Plaintext credentials in manifests (STK-CRED-001)."""

    # Env var names and ConfigMap keys (globs, case-insensitive) never reported as credentials.
    allowed_names: tuple[Glob, ...] = ()


class AzureConfig(_Model):
    """The Azure side of the fleet (audit with credentials, ARM / terraform scans)."""

    # VM sizes (globs) whose node pools are GPU pools: no public IPs on their nodes.
    gpu_vm_sizes: tuple[DotGlob, ...] = ("Standard_N*",)
    # The AKS cluster (name or resource id) the scanned manifests run on, when the ARM templates or
    # terraform plans of the scan hold several: the cross-layer rules (STK-AZ-035..038) join it.
    cluster: str | None = None


class RuleSetting(_Model):
    """Per-rule switches: turn a rule off, or change its default action or severity."""

    enabled: bool = True
    action: Action | None = None
    severity: Severity | None = None

    @field_validator("severity", mode="before")
    @classmethod
    def _severity(cls, value: Any) -> Any:
        return Severity.parse(value) if isinstance(value, str) else value


class Override(_Model):
    """Change the action of matching rules in some namespaces or clusters (last match wins)."""

    rules: tuple[Glob, ...] = ("*",)
    namespaces: tuple[Glob, ...] = ()
    clusters: tuple[Glob, ...] = ()
    action: Action

    def matches(self, rule_id: str, namespace: str | None, cluster: str | None) -> bool:
        return (
            glob_match(self.rules, rule_id)
            and glob_match(self.namespaces, namespace)
            and glob_match(self.clusters, cluster)
        )


class ExceptionMatch(_Model):
    """Which objects a waiver covers; empty lists mean "any". Patterns are globs (config/patterns.py)."""

    clusters: tuple[Glob, ...] = ()
    namespaces: tuple[Glob, ...] = ()
    kinds: tuple[Glob, ...] = ()
    names: tuple[Glob, ...] = ()
    labels: dict[str, str] = Field(default_factory=dict)


class ExceptionSpec(_Model):
    """A waiver: rule ids + the objects it covers + who owns it, why, and until when."""

    name: str = Field(min_length=1)
    rules: tuple[Glob, ...] = Field(min_length=1)
    match: ExceptionMatch = ExceptionMatch()
    owner: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    expires: dt.date

    def expired(self, today: dt.date) -> bool:
        return today > self.expires


class SuppressionGate(_Model):
    """Where a gate honours in-manifest suppressions (`stockade.io/ignore-<RULE>` annotations): the
    objects' namespaces and the rules (globs; empty: none), and cluster-scoped objects."""

    namespaces: tuple[Glob, ...] = ()
    rules: tuple[Glob, ...] = ()
    cluster_scoped: bool = False

    def allows(self, rule_id: str, namespace: str | None) -> bool:
        if not self.rules or not glob_match(self.rules, rule_id):
            return False
        if namespace is None:
            return self.cluster_scoped
        return bool(self.namespaces) and glob_match(self.namespaces, namespace)


class SuppressionsConfig(_Model):
    """Which gates honour suppression annotations. Anyone who can write a manifest can write one, so
    by default only `scan` (where a reviewer reads the diff) honours them; the webhook and the audit
    honour them only where `admission` and `audit` allow."""

    scan: bool = True
    admission: SuppressionGate = SuppressionGate()
    audit: SuppressionGate = SuppressionGate()


class WorkloadKind(_Model):
    """A custom resource whose objects hold pods (``workloads:``), beside the built-in kinds."""

    api_version: str = Field(alias="apiVersion", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[a-z0-9]+$")
    kind: str = Field(pattern=r"^[A-Z][A-Za-z0-9]*$")
    plural: str | None = Field(None, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    namespaced: bool = True
    pod_templates: tuple[str, ...] = ()  # paths of corev1.PodTemplateSpec fields (metadata + spec)
    pod_specs: tuple[str, ...] = ()  # paths of corev1.PodSpec fields (the pods carry the object's labels)
    high_risk: bool = False  # its pods run untrusted code: they must run in a sandbox RuntimeClass

    @field_validator("pod_templates", "pod_specs")
    @classmethod
    def _paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            pod_path(text)  # ValueError names the path
        return value

    def info(self) -> KindInfo:
        group, version = self.api_version.rsplit("/", 1)
        pods = tuple(pod_path(p) for p in self.pod_templates) + tuple(
            pod_path(p, "spec") for p in self.pod_specs
        )
        if not pods:
            raise ValueError("declares no pod_templates or pod_specs")
        plural = self.plural or self.kind.lower() + "s"
        return KindInfo(group, version, plural, self.kind, self.namespaced, True, pods, self.high_risk)


class Config(_Model):
    """The whole stockade.yaml."""

    api_version: Literal["stockade.io/v1alpha1"] = Field("stockade.io/v1alpha1", alias="apiVersion")
    kind: Literal["Config"] = "Config"
    pss: PSSConfig = PSSConfig()
    scope: ScopeConfig = ScopeConfig()
    images: ImagesConfig = ImagesConfig()
    resources: ResourcesConfig = ResourcesConfig()
    gpu: GPUConfig = GPUConfig()
    sandbox: SandboxConfig = SandboxConfig()
    host_paths: HostPathConfig = HostPathConfig()
    egress: EgressConfig = EgressConfig()
    service_accounts: ServiceAccountsConfig = ServiceAccountsConfig()
    rbac: RBACConfig = RBACConfig()
    admission: AdmissionConfig = AdmissionConfig()
    storage: StorageConfig = StorageConfig()
    credentials: CredentialsConfig = CredentialsConfig()
    exposure: ExposureConfig = ExposureConfig()
    azure: AzureConfig = AzureConfig()
    workloads: tuple[WorkloadKind, ...] = ()
    rules: dict[str, RuleSetting] = Field(default_factory=dict)
    overrides: tuple[Override, ...] = ()
    exceptions: tuple[ExceptionSpec, ...] = ()
    suppressions: SuppressionsConfig = SuppressionsConfig()

    @field_validator("exceptions")
    @classmethod
    def _unique_names(cls, value: tuple[ExceptionSpec, ...]) -> tuple[ExceptionSpec, ...]:
        seen: set[str] = set()
        for exc in value:
            if exc.name in seen:
                raise ValueError(f"duplicate exception name {exc.name!r}")
            seen.add(exc.name)
        return value

    @field_validator("workloads")
    @classmethod
    def _workloads(cls, value: tuple[WorkloadKind, ...]) -> tuple[WorkloadKind, ...]:
        seen: set[tuple[str, str]] = set()
        for i, entry in enumerate(value):
            try:
                entry.info()
            except ValueError as exc:
                raise ValueError(f"[{i}] {entry.kind}: {exc}") from None
            key = (entry.api_version.rsplit("/", 1)[0], entry.kind)
            if key in seen:
                raise ValueError(f"[{i}] {entry.kind}: declared twice for group {key[0]}")
            seen.add(key)
        return value

    def workload_kinds(self) -> tuple[KindInfo, ...]:
        """The custom workload kinds this configuration declares (``workloads:``)."""
        return tuple(w.info() for w in self.workloads)

    def rule_data(self) -> dict[str, Any]:
        """What Rego sees as `data.stockade.config`: settings, never waivers or actions; and
        `disabled_rules`, the rules `rules:` switches off (a rule that reports for another when that
        one is off reads it: STK-RES-001/-002/-003 on a container with no resources)."""
        data = self.model_dump(
            mode="json",
            by_alias=True,
            exclude={
                "rules",
                "overrides",
                "exceptions",
                "suppressions",
                "api_version",
                "kind",
                "admission",
                "workloads",
            },
        )
        data["disabled_rules"] = sorted(rid for rid, setting in self.rules.items() if not setting.enabled)
        return data


class ConfigError(ValueError):
    """A stockade.yaml that cannot be used; the message is one line naming file, line and key."""


def load_config(path: str | Path | None) -> Config:
    """Read and validate stockade.yaml; `None` gives the defaults."""
    if path is None:
        return Config()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read config: {exc.strerror or exc}") from None
    return parse_config(text, str(p))


def parse_config(text: str, source: str = "stockade.yaml") -> Config:
    try:
        data, locator = load_with_locator(text)
    except YAMLSyntaxError as exc:
        where = f"{source}:{exc.line}" if exc.line else source
        raise ConfigError(f"{where}: {exc.message}") from None
    if data is None:
        return Config()
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}:1: config must be a mapping, got {type(data).__name__}")
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source, locator)) from None


def first_error(exc: ValidationError, root: str = "<root>") -> tuple[tuple[Any, ...], str, str]:
    """(location, dotted key or `root`, message) of a validation error's first problem: what a
    one-line error names (the config, an AdmissionReview, a JSON report)."""
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    return loc, ".".join(str(p) for p in loc) or root, err["msg"]


def _describe(exc: ValidationError, source: str, locator: NodeLocator | None) -> str:
    err = exc.errors()[0]
    loc, key, _ = first_error(exc)
    line = locator.line_of(loc) if locator is not None else None
    where = f"{source}:{line}" if line else source
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "value_error":  # our validators' own sentence, without pydantic's prefix
        msg = msg.removeprefix("Value error, ")
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {key}: {msg}{more}"


STARTER_CONFIG = """\
# stockade.yaml: the one configuration every gate (scan, webhook, audit) reads.
# Unknown keys are errors. Patterns are globs: text, *, ? and [abc], [a-z], [!abc] (kube-*, STK-POD-1*).
apiVersion: stockade.io/v1alpha1
kind: Config

# Pod Security Standards level for namespaces without a
# pod-security.kubernetes.io/enforce label: privileged | baseline | restricted.
pss:
  default_level: restricted

# Out of scope: system namespaces, and system:* bootstrap RBAC objects.
scope:
  excluded_namespaces: [kube-system, kube-public, kube-node-lease, stockade-system]
  # Roles and RoleBindings are not excluded by excluded_namespaces, only by this list.
  rbac_excluded_namespaces: []
  include_system_rbac: false

# Images: approved registries (host + path prefix). Empty = no registry checked (STK-IMG-001 is
# off, and the scan says so once); list yours to turn it on. Digest pinning (@sha256:...) per namespace.
images:
  allowed_registries: []
  #  - myregistry.azurecr.io/
  #  - mcr.microsoft.com/
  require_digest_namespaces: []
  # Release channels publishers move, reported like "latest" (case-insensitive globs), matched
  # against the whole tag and each of its words: "latest-gpu" and "nightly-py310" float
  floating_tags: [latest, nightly, main, master, edge, dev, stable, develop, development, canary,
                  snapshot, unstable, head, current]

# Requests and limits every container must declare.
resources:
  require_memory_limit: true
  require_cpu_request: true
  require_memory_request: true

# Accelerators: which extended resources are GPUs, and where GPU pods may run.
gpu:
  resources: [nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915]
  namespace_labels: {stockade.io/gpu: "true"}
  tolerations:
    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  node_selector: {}

# Sandboxed runtime classes (gVisor / Kata) for high-risk workloads. A workload is high-risk when
# one selector matches (every field given: namespace globs, namespace labels, labels of the workload
# or its pod template). Profiles: aks (Kata only, no GPUs in a sandbox) or baremetal (gVisor runsc
# with GPUs through nvproxy, or Kata). `clusters` picks a profile by cluster name (audit contexts;
# last match wins); `profile` applies to the rest, and to scans, which do not know the cluster.
sandbox:
  profile: baremetal
  clusters: []
  #  - {clusters: ["aks-*"], profile: aks}
  selectors:
    - namespace_labels: {stockade.io/sandbox: required}
    - pod_labels: {stockade.io/sandbox: required}
  # Class names (globs) that claim to be sandboxes: their handler must be a sandbox handler.
  class_patterns: ["*gvisor*", "*runsc*", "*kata*", "*sandbox*"]
  # Per profile: approved class names (exact), sandbox handlers (globs), the sandbox pool's labels
  # one of which a sandbox class's scheduling.nodeSelector must hold.
  aks:
    classes: [kata-vm-isolation, kata-mshv-vm-isolation]
    handlers: ["kata*"]
    node_selectors:
      - {kubernetes.azure.com/kata-vm-isolation: "true"}
      - {kubernetes.azure.com/kata-mshv-vm-isolation: "true"}
  baremetal:
    classes: [gvisor, runsc, kata, kata-qemu, kata-clh, kata-fc]
    handlers: [runsc, "kata*"]
    node_selectors: []       # empty: a sandbox class needs some scheduling.nodeSelector
    nvproxy:
      node_selector: {}      # the nvproxy-capable pool; empty: select a supported GPU model instead
      product_label: nvidia.com/gpu.product
      products: ["*-T4", "*-A10G", "*-A100", "*-A100-*", "*-L4", "*-H100", "*-H100-*"]

# hostPath targets never allowed, even where the Pod Security level allows hostPath.
host_paths:
  forbidden: [/, /proc, /etc, /dev/nvidia*, /var/lib/kubelet, /var/run/docker.sock,
              /run/docker.sock, /var/run/docker, /var/run/containerd, /run/containerd, /var/run/crio,
              /run/crio, /var/lib/docker, /var/lib/containerd, /var/run/cdi, /run/cdi]

# Egress is deny-by-default: every workload's pods must be selected by an egress NetworkPolicy,
# and policies may open only cluster DNS and what `allow` lists (CIDRs, namespaces, FQDNs),
# per source namespace and/or pod labels. 169.254.169.254 / 168.63.129.16 are always reported.
egress:
  cluster_dns: {namespace: kube-system, pod_labels: {k8s-app: kube-dns}}
  # cluster_dns: {..., addresses: [169.254.20.10, 10.0.0.10]}   # default [169.254.20.10] (NodeLocal
  #                                                   # DNSCache); a list you set replaces it
  allow: []
  #  - {namespaces: [ml-training], cidrs: [10.240.8.0/24]}
  #  - {namespaces: [notebooks], workload_labels: {app: jupyter}, to_namespaces: [artifact-mirror]}
  #  - {namespaces: [notebooks], fqdns: [pypi.org, "*.blob.core.windows.net"]}   # Cilium toFQDNs
  metadata_addresses: [169.254.169.254, 168.63.129.16]
  metadata_ports: [TCP/80, TCP/32526]  # reached only through rules that open one of these

# Workloads that call the Kubernetes API and may mount a ServiceAccount token.
service_accounts:
  api_clients: []
  #  - {namespaces: [argo], kinds: [Deployment], names: [workflow-controller]}
  # Audiences the API server accepts (its --api-audiences; on AKS add the cluster's https://<fqdn>):
  # a projected serviceAccountToken for one of them, or with no audience, is an API credential.
  api_audiences:
  - https://kubernetes.default.svc
  - https://kubernetes.default.svc.cluster.local
  - kubernetes.default.svc

# RBAC least privilege. Bindings to privileged_roles are reported unless every subject is a
# break-glass subject; escalation paths are followed up to max_path_length "can act as" steps.
rbac:
  break_glass_subjects: []
  #  - {kind: Group, name: platform-oncall}
  #  - {kind: ServiceAccount, namespace: argocd, name: argocd-application-controller}
  privileged_roles: [cluster-admin, admin, edit]
  max_path_length: 3
  max_paths_per_binding: 20

# The admission webhook: fail closed (deny) on internal errors and evaluation timeouts unless
# failure_mode is open; request bodies above max_request_bytes get HTTP 400. Objects with more
# JSON values, containers or pod specs than the max_* below are denied in either failure mode.
# Slow clients are closed after the header and body timeouts; per worker, at most max_connections
# connections (past them, idle ones are closed and new ones answered 503 Retry-After), max_inflight
# requests parsed and evaluated at once, and max_buffered_bytes of request bodies being read (past
# it the longest reader is dropped).
admission:
  failure_mode: closed
  max_request_bytes: 3145728
  evaluation_timeout_seconds: 2.0
  max_object_values: 100000
  max_containers: 128
  max_pod_specs: 64
  header_timeout_seconds: 5.0
  body_timeout_seconds: 10.0
  max_connections: 1024
  max_inflight: 4
  max_buffered_bytes: 50331648
  engine_process: true

# Private-link storage (Azure Blob / Files CSI drivers) and the Azure side of the fleet.
# approved_accounts: storage account names (globs) volumes may use; empty = none approved yet.
storage:
  csi_drivers: [blob.csi.azure.com, file.csi.azure.com]
  approved_accounts: []
  #  - stmlprod*
  forbidden_secret_keys: [azurestorageaccountkey, azurestorageaccountsastoken]
  required_subresources: [blob]

# Interfaces without authentication of their own that must not be exposed outside the cluster
# (LoadBalancer/NodePort Services, Ingresses without an authenticating annotation, Ray head Services).
# Setting sensitive_ports replaces the whole default list (Ray, Jupyter, TensorBoard, MLflow, Spark,
# Dask, Gradio, Streamlit, Ollama, Argo Workflows).
exposure:
  # sensitive_ports:
  #   - {what: Ray dashboard and Jobs API, port: 8265, names: [dashboard]}
  # sensitive_images:      # where no port tells: the images of the pods a Service selects
  #   - {what: Ray, images: ["rayproject/ray*", "*/rayproject/ray*"]}
  #   - {what: KubeRay API server, images: ["*/kuberay/apiserver*"], unless: ["*/kuberay/security-proxy*"]}
  ingress_auth_annotations:
  - nginx.ingress.kubernetes.io/auth-url
  - nginx.ingress.kubernetes.io/auth-type
  - nginx.ingress.kubernetes.io/auth-tls-verify-client
  - alb.ingress.kubernetes.io/auth-type
  - traefik.ingress.kubernetes.io/router.middlewares
  - haproxy-ingress.github.io/auth-url
  - haproxy-ingress.github.io/auth-type
  - konghq.com/plugins

# Plaintext credentials in manifests: env var names and ConfigMap keys (globs) never reported.
credentials:
  allowed_names: []
  #  - GRAFANA_ADMIN_PASSWORD

azure:
  gpu_vm_sizes: ["Standard_N*"]
  # cluster: aks-prod   # the AKS cluster the manifests run on, when the scanned templates hold several

# Per rule: turn it off, or change its action (deny | warn | audit) or severity.
rules: {}
#  STK-POD-011:
#    action: warn

# Change the action of matching rules in some namespaces or clusters (last match wins).
overrides: []
#  - rules: ["STK-POD-1*"]
#    namespaces: [notebooks]
#    action: warn

# Waivers. Each needs an owner, a reason and an expiry date; an expired waiver stops
# applying and is reported, and so is one that matched nothing.
exceptions: []
#  - name: dcgm-exporter-host-access
#    rules: [STK-POD-003, STK-POD-005]
#    match:
#      namespaces: [gpu-operator]
#      kinds: [DaemonSet]
#      names: [nvidia-dcgm-exporter]
#    owner: platform-gpu@example.com
#    reason: DCGM needs the NVIDIA device files to export GPU metrics.
#    expires: 2027-06-30

# In-manifest suppressions: an annotation on the object itself,
#   stockade.io/ignore-STK-POD-003: "DCGM reads the GPU devices; expires=2027-06-30"
# (a reason is required, the expiry optional). Whoever writes a manifest can write one, so
# `stockade scan` honours them (a reviewer sees them in the diff) but the webhook and the audit
# only in the namespaces and for the rules listed here (globs; empty: nowhere).
suppressions:
  scan: true
  admission: {namespaces: [], rules: [], cluster_scoped: false}
  audit: {namespaces: [], rules: [], cluster_scoped: false}
"""
