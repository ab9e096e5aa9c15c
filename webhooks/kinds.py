"""Where each kind lives in the Kubernetes API: group, version, plural and scope.

The ValidatingWebhookConfiguration's rules name resources (`apps/v1 deployments`), while the
library's METADATA names kinds (`Deployment`); `install` needs the same mapping to build request paths.
Discovery would answer it from a live cluster, but `stockade webhook manifests` must render offline
and identically everywhere (CI, the committed kustomize base), so the mapping is a table: the
library's kinds (`stockade.policies.kinds.api`, which the inventory cache watches from; not repeated
here), plus the other built-in kinds a rule may name and the CRDs the deployment itself uses
(cert-manager). A rule naming a kind missing here is an error at render time, and a test checks that
every bundled rule's kinds are mapped, and that no kind is in both tables.
"""

from __future__ import annotations

from stockade.admission.inventory import WATCHABLE, WatchedKind

#: Kinds a rule may name, or the deployment uses, that the library's own table
#: (:data:`stockade.policies.kinds.api.KINDS`, which the inventory watches from) does not list.
EXTRA_RESOURCES: tuple[WatchedKind, ...] = (
    WatchedKind("", "v1", "endpoints", "Endpoints", True),
    WatchedKind("", "v1", "limitranges", "LimitRange", True),
    WatchedKind("", "v1", "resourcequotas", "ResourceQuota", True),
    WatchedKind("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True),
    WatchedKind("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True),
    WatchedKind("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
    WatchedKind("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True),
    WatchedKind("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    WatchedKind("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    WatchedKind("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False),
    WatchedKind("cert-manager.io", "v1", "certificates", "Certificate", True),
    WatchedKind("cert-manager.io", "v1", "issuers", "Issuer", True),
    WatchedKind("cert-manager.io", "v1", "clusterissuers", "ClusterIssuer", False),
)

#: kind -> (group, version, plural, kind, namespaced); one entry per kind name.
API_RESOURCES: dict[str, WatchedKind] = {**{k.kind: k for k in EXTRA_RESOURCES}, **WATCHABLE}


class UnknownKind(KeyError):
    """A kind with no entry in :data:`API_RESOURCES`."""

    def __str__(self) -> str:
        return f"kind {self.args[0]} has no API resource mapping (add it to stockade.webhooks.kinds)"


def resource_of(kind: str) -> WatchedKind:
    try:
        return API_RESOURCES[kind]
    except KeyError:
        raise UnknownKind(kind) from None


def resource_of_object(obj: dict[str, object]) -> WatchedKind:
    """The resource of a rendered object, checked against its apiVersion (a table/renderer mismatch
    would otherwise send the object to the wrong path)."""
    resource = resource_of(str(obj.get("kind")))
    if resource.api_version != obj.get("apiVersion"):
        raise ValueError(f"{obj.get('kind')} is {resource.api_version}, not {obj.get('apiVersion')}")
    return resource
