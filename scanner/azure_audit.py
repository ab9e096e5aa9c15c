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
- **Bare metal is not applicable.** An audited context that matches no AKS cluster of the listed
  subscriptions gets ``extras["azure"] = "not applicable: …"`` in its cluster stats and a line on
  stderr; its Azure checks are neither passed nor failed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from stockade.policies.engines.base import RuleEvaluationError
from stockade.policies.evaluate import Evaluator, InventoryFacts
from stockade.policies.facts import inventory_of
from stockade.policies.facts.azure import MANAGED_CLUSTER
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
    """List and evaluate each subscription, appending findings, gaps and errors to `result`."""
    if not subscriptions:
        return
    try:
        credential = credential if credential is not None else make_credential(auth)
        check_credential(credential, auth)
    except AzureAuthError as exc:
        result.errors.append(InputError("azure", str(exc)))
        for sub in subscriptions:
            result.gaps.append(
                CoverageGap(
                    f"azure/{sub}", "Azure checks skipped: no credential (see the error above)"
                )
            )
        return
    servers = context_servers(kubeconfig, contexts) if contexts else {}
    # Every subscription is listed before any is evaluated: in a hub-and-spoke landing zone the
    # private DNS zones, firewalls and some endpoints live in the hub subscription, and the facts of a
    # spoke's storage accounts and clusters need them.
    resources: list[dict[str, Any]] = []
    complete = True
    for sub in subscriptions:
        with AzureReader(sub, credential, **client_options) as reader:
            snap = reader.snapshot()
        result.gaps.extend(snap.gaps)
        complete = complete and not snap.gaps
        resources.extend(snap.resources)
        notify(f"azure: subscription {sub}: {len(snap.resources)} resources listed in {snap.lists} lists")
    aks = [r for r in resources if r.get("type") == MANAGED_CLUSTER]
    matches = match_clusters(aks, servers)
    matched_contexts = set(matches.values())
    notify(f"azure: {len(aks)} AKS cluster(s), {len(matches)} matched to an audited context")
    _evaluate(result, evaluator, resources, matches, complete=complete)
    for stats in result.clusters:
        if stats.name in contexts and stats.reachable:
            if stats.name in matched_contexts:
                stats.extras["azure"] = AZURE_AUDITED
            else:
                stats.extras["azure"] = NOT_APPLICABLE
                notify(f"azure: {stats.name}: {NOT_APPLICABLE}")
    result.exceptions = evaluator.exceptions.statuses()


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
