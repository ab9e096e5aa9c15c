"""The Azure stage of `stockade audit --azure-subscription SUB`: cloud findings beside cluster findings.

After the clusters are audited, each subscription's storage accounts and AKS clusters (with the
private endpoints, DNS zones, routes and firewalls their facts need) are listed
(:mod:`stockade.scanner.sources.azure`) and evaluated by the same :class:`Evaluator` as the
clusters, so rule settings, overrides and exceptions apply alike. The findings and gaps are appended
to the audit's :class:`Result`.

- **One report for cluster and cloud.** Each AKS cluster is matched to the kubeconfig context whose
  API server is the cluster's ``fqdn``, ``privateFQDN`` or ``azurePortalFQDN``; its findings carry
  that context as their cluster, so they sit next to the context's in-cluster findings (a cluster
  with no audited context keeps its ARM name). Storage accounts belong to no cluster.
- **Never a silent pass.** Without a credential nothing is listed: one actionable message (an input
  error, so the command exits 2) and one coverage gap per subscription saying the Azure checks were
  skipped. A list that is forbidden is a gap too.
- **Both layers joined.** The CLI lists Azure (:func:`list_azure`) before the clusters are evaluated,
  and each matched context's inventory gets its managed cluster (:meth:`AzureListing.cluster_layer`):
  the cross-layer rules (STK-AZ-035..038) judge the context's NetworkPolicies, workload identity
  pods, sandboxed and GPU workloads against it. Then :func:`evaluate_azure` evaluates the Azure
  resources themselves.
- **Bare metal is not applicable.** An audited context that matches no AKS cluster of the listed
  subscriptions gets ``extras["azure"] = "not applicable: …"`` in its cluster stats and a line on
  stderr; its Azure checks are neither passed nor failed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.facts.azure import AGENT_POOL, MANAGED_CLUSTER
from stockade.policies.model import InputError, Operation, Origin, Resource
from stockade.scanner.result import AZURE_AUDITED, CoverageGap, Result
from stockade.scanner.sources.azure import (
    AuthMode,
    AzureAuthError,
    AzureReader,
    check_credential,
    make_credential,
)

NOT_APPLICABLE = (
    "not applicable: no AKS cluster of the audited subscriptions serves this context's API server"
)


def context_servers(kubeconfig: Path | None, contexts: Sequence[str]) -> dict[str, str]:
    """The API server host of each context (lower case), from the kubeconfig file(s)."""
    paths = (
        [str(kubeconfig)]
        if kubeconfig
        else (os.environ.get("KUBECONFIG") or "~/.kube/config").split(os.pathsep)
    )
    clusters: dict[str, str] = {}
    context_cluster: dict[str, str] = {}
    for name in paths:
        path = Path(name).expanduser()
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            continue
        for entry in doc.get("clusters") or []:
            server = str((entry.get("cluster") or {}).get("server") or "")
            clusters.setdefault(str(entry.get("name")), (urlsplit(server).hostname or "").lower())
        for entry in doc.get("contexts") or []:
            context_cluster.setdefault(
                str(entry.get("name")), str((entry.get("context") or {}).get("cluster"))
            )
    return {c: clusters.get(context_cluster.get(c, ""), "") for c in contexts}


def match_clusters(clusters: Sequence[Mapping[str, Any]], servers: Mapping[str, str]) -> dict[str, str]:
    """AKS cluster id (lower case) -> the context whose API server host is one of the cluster's FQDNs."""
    by_host: dict[str, str] = {}
    for context, host in servers.items():
        if host:
            by_host.setdefault(host, context)
    out: dict[str, str] = {}
    for cluster in clusters:
        props = cluster.get("properties") or {}
        for key in ("fqdn", "privateFQDN", "azurePortalFQDN"):
            host = str(props.get(key) or "").lower()
            if host and host in by_host:
                out[str(cluster.get("id") or "").lower()] = by_host[host]
                break
    return out


@dataclass(slots=True)
class AzureListing:
    """What `--azure-subscription` listed, before anything is evaluated: the resources, whether every
    list answered, the gaps and errors, and which AKS cluster serves which audited context."""

    resources: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = True
    gaps: list[CoverageGap] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    #: AKS cluster id (lower case) -> the context whose API server it serves
    matches: dict[str, str] = field(default_factory=dict)

    def cluster_layer(self, context: str) -> list[dict[str, Any]]:
        """The Azure objects a context's inventory gets for the cross-layer rules (STK-AZ-035..038):
        the AKS cluster serving its API server, with its separately listed node pools; none for a
        context no cluster serves (bare metal)."""
        ids = {rid for rid, ctx in self.matches.items() if ctx == context}
        return [
            r
            for r in self.resources
            if r.get("type") in (MANAGED_CLUSTER, AGENT_POOL)
            and any(
                str(r.get("id") or "").lower() == rid or str(r.get("id") or "").lower().startswith(rid + "/")
                for rid in ids
            )
        ]


def list_azure(
    subscriptions: Sequence[str],
    *,
    auth: AuthMode = "cli",
    contexts: Sequence[str] = (),
    kubeconfig: Path | None = None,
    credential: Any = None,
    notify: Callable[[str], None] = lambda _: None,
    **client_options: Any,
) -> AzureListing:
    """List every subscription (before the clusters are evaluated, so that each AKS context's
    inventory holds its managed cluster) and match the AKS clusters to the audited contexts."""
    listing = AzureListing()
    if not subscriptions:
        return listing
    try:
        credential = credential if credential is not None else make_credential(auth)
        check_credential(credential, auth)
    except AzureAuthError as exc:
        listing.errors.append(InputError("azure", str(exc)))
        for sub in subscriptions:
            listing.gaps.append(
                CoverageGap(f"azure/{sub}", "Azure checks skipped: no credential (see the error above)")
            )
        listing.complete = False
        return listing
    servers = context_servers(kubeconfig, contexts) if contexts else {}
    # Every subscription is listed before any is evaluated: in a hub-and-spoke landing zone the
    # private DNS zones, firewalls and some endpoints live in the hub subscription, and the facts of a
    # spoke's storage accounts and clusters need them.
    for sub in subscriptions:
        with AzureReader(sub, credential, **client_options) as reader:
            snap = reader.snapshot()
        listing.gaps.extend(snap.gaps)
        listing.complete = listing.complete and not snap.gaps
        listing.resources.extend(snap.resources)
        notify(f"azure: subscription {sub}: {len(snap.resources)} resources listed in {snap.lists} lists")
    aks = [r for r in listing.resources if r.get("type") == MANAGED_CLUSTER]
    listing.matches = match_clusters(aks, servers)
    notify(f"azure: {len(aks)} AKS cluster(s), {len(listing.matches)} matched to an audited context")
    return listing


def evaluate_azure(
    result: Result,
    evaluator: Evaluator,
    listing: AzureListing,
    *,
    contexts: Sequence[str] = (),
    notify: Callable[[str], None] = lambda _: None,
) -> None:
    """Evaluate what `list_azure` listed, appending findings, gaps and errors to `result`."""
    result.errors.extend(listing.errors)
    result.gaps.extend(listing.gaps)
    if listing.errors:
        return
    _evaluate(result, evaluator, listing.resources, listing.matches, complete=listing.complete)
    matched_contexts = set(listing.matches.values())
    for stats in result.clusters:
        if stats.name in contexts and stats.reachable:
            if stats.name in matched_contexts:
                stats.extras["azure"] = AZURE_AUDITED
            else:
                stats.extras["azure"] = NOT_APPLICABLE
                notify(f"azure: {stats.name}: {NOT_APPLICABLE}")
    result.exceptions = evaluator.exceptions.statuses()


def run_azure_stage(
    result: Result,
    evaluator: Evaluator,
    subscriptions: Sequence[str],
    *,
    auth: AuthMode = "cli",
    contexts: Sequence[str] = (),
    kubeconfig: Path | None = None,
    credential: Any = None,
    notify: Callable[[str], None] = lambda _: None,
    **client_options: Any,
) -> None:
    """List and evaluate each subscription (:func:`list_azure`, then :func:`evaluate_azure`)."""
    if not subscriptions:
        return
    listing = list_azure(
        subscriptions,
        auth=auth,
        contexts=contexts,
        kubeconfig=kubeconfig,
        credential=credential,
        notify=notify,
        **client_options,
    )
    evaluate_azure(result, evaluator, listing, contexts=contexts, notify=notify)


def _evaluate(
    result: Result,
    evaluator: Evaluator,
    resources: list[dict[str, Any]],
    matches: Mapping[str, str],
    *,
    complete: bool,
) -> None:
    source = InventoryFacts(inventory_of(resources, complete=complete))
    wanted = {kind for rule in evaluator.rules.values() for kind in rule.kinds}
    for obj in resources:
        rid = str(obj.get("id") or "")
        resource = Resource(obj, Origin(azure_id=rid, cluster=matches.get(rid.lower())))
        if resource.kind not in wanted:
            continue  # read for the facts only (endpoints, zones, routes, firewalls)
        try:
            violations = evaluator.violations(resource, operation=Operation.AUDIT, source=source)
        except RuleEvaluationError as exc:
            result.errors.append(InputError(rid, str(exc)))
            continue
        result.findings.extend(evaluator.decide(resource, violations))
        result.resources += 1
