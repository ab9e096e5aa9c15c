"""The analyzer registry (`stockade.policies.facts.ANALYZERS`): an analyzer is imported and run only for
objects it reads, and skipping it never changes `input.facts`.

Each entry's kinds are its module's own constants, and over a corpus holding every kind an analyzer
reads (the example manifests, the upstream shapes, and one object of each remaining kind), the facts
of every object and pod spec equal the facts of all analyzers run on it, in a scan's incomplete
inventory and in a cluster's complete one. The import side (a one-file scan of a Deployment loads no
RBAC graph nor network-policy model) is tests/cli/test_layout.py's.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from stockade.policies.facts import ANALYZERS, Inventory, facts_for, inventory_of
from stockade.policies.kinds.workloads import DEFAULT_WORKLOADS, pod_template

REPO = Path(__file__).resolve().parents[2]
FACTS = REPO / "policies" / "facts"

#: one object of each kind an analyzer with `kinds` reads that the example files may lack
EXTRA = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: ray, namespace: ml}
spec:
  headGroupSpec:
    serviceType: LoadBalancer
    template:
      metadata: {labels: {app: ray}}
      spec: {containers: [{name: head, image: rayproject/ray:2.9.0}]}
---
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: job, namespace: ml}
spec:
  rayClusterSpec:
    headGroupSpec:
      headService: {spec: {type: NodePort}}
      template: {spec: {containers: [{name: head, image: rayproject/ray:2.9.0}]}}
---
apiVersion: v1
kind: Service
metadata: {name: dash, namespace: ml}
spec: {type: LoadBalancer, selector: {app: ray}, ports: [{port: 8265}]}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: deny, namespace: ml}
spec: {endpointSelector: {matchLabels: {app: ray}}, egress: [{toEndpoints: [{}]}]}
---
apiVersion: projectcalico.org/v3
kind: NetworkPolicy
metadata: {name: calico, namespace: ml}
spec: {selector: app == 'ray', types: [Egress], egress: [{action: Allow}]}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny, namespace: ml}
spec: {podSelector: {}, policyTypes: [Egress]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: edit, namespace: ml}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{kind: ServiceAccount, name: default, namespace: ml}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  selector: {matchLabels: {app: ray}}
  template:
    metadata: {labels: {app: ray}}
    spec:
      containers:
        - name: web
          image: nginx:latest
          env: [{name: DB_PASSWORD, value: hunter2hunter2}]
"""


def _documents(text: str) -> list[dict[str, Any]]:
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    out: list[dict[str, Any]] = []
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "List":
            out += [i for i in doc.get("items") or () if isinstance(i, dict)]
        elif isinstance(doc, dict) and isinstance(doc.get("kind"), str):
            out.append(doc)
    return out


def _corpus() -> list[dict[str, Any]]:
    objects = _documents(EXTRA)
    for folder in (REPO / "examples" / "manifests", REPO / "tests" / "policies" / "data" / "upstream_shapes"):
        for path in sorted(folder.rglob("*.yaml")):
            objects += _documents(path.read_text(encoding="utf-8"))
    return objects


def _every_analyzer(obj: Mapping[str, Any], inventory: Inventory, pod: Any) -> dict[str, Any]:
    """`input.facts` as it was before the registry skipped analyzers: every one of them, in order."""
    if pod is None:
        pod = pod_template(obj)
    out: dict[str, Any] = {}
    for entry in ANALYZERS:
        module = importlib.import_module(f"stockade.policies.facts.{entry.module}")
        out.update(module.facts(obj, inventory, pod))
    return out


def test_the_registry_lists_every_analyzer_module() -> None:
    modules = {p.stem for p in FACTS.glob("*.py") if "\ndef facts(" in p.read_text(encoding="utf-8")}
    assert {entry.module for entry in ANALYZERS} == modules


def test_each_entry_reads_its_modules_own_kinds() -> None:
    from stockade.policies.facts import egress, exposure, netpol_use, rbac
    from stockade.policies.facts.netpol import cilium, topology

    entries = {entry.module: entry for entry in ANALYZERS}
    assert entries["rbac"].kinds == frozenset(rbac.BINDING_KINDS)
    assert entries["rbac"].inventory_kinds == rbac.BINDING_KINDS
    assert entries["exposure"].kinds == frozenset({"Service", *exposure.RAY_CLUSTER_SPECS})
    assert entries["netpol_use"].kinds == frozenset({"NetworkPolicy", *cilium.KINDS})
    assert netpol_use.DEFAULT_NAMESPACE == egress.DEFAULT_NAMESPACE == topology.DEFAULT_NAMESPACE


@pytest.mark.parametrize("complete", [False, True])
def test_skipping_an_analyzer_changes_no_fact(complete: bool) -> None:
    objects = _corpus()
    inventory = inventory_of(objects, complete=complete)
    bare = Inventory(complete=complete)  # the webhook's view of an object before its cache holds any
    read: set[str] = set()
    compared = 0
    for obj in objects:
        for pod in [None, *DEFAULT_WORKLOADS.pods(obj)]:
            for inv in (inventory, bare):
                assert facts_for(obj, inv, pod) == _every_analyzer(obj, inv, pod), (obj.get("kind"), pod)
                compared += 1
                read.update(e.module for e in ANALYZERS if e.kinds is not None and e.reads(obj, inv))
    # every analyzer that is sometimes skipped ran on the corpus: the comparison covered its facts
    assert read == {e.module for e in ANALYZERS if e.kinds is not None}
    assert compared > 300


def test_an_analyzer_runs_for_the_kinds_it_reads() -> None:
    """A RoleBinding's RBAC facts, a LoadBalancer Service's exposure and a Deployment's RBAC facts once
    the inventory holds a binding: the registry does not skip them."""
    objects = _documents(EXTRA)
    by_kind = {o["kind"]: o for o in objects if o["apiVersion"] != "projectcalico.org/v3"}
    inventory = inventory_of(objects)
    assert "rbac" in facts_for(by_kind["RoleBinding"], inventory)
    assert "exposure" in facts_for(by_kind["Service"], inventory)
    assert "exposure" in facts_for(by_kind["RayCluster"], inventory)
    assert "rbac" in facts_for(by_kind["Deployment"], inventory)
    assert "rbac" not in facts_for(by_kind["Deployment"], inventory_of([by_kind["Deployment"]]))
    assert facts_for(by_kind["Deployment"], inventory)["egress"]["isolated"] is True
    complete = inventory_of(objects, complete=True)
    assert "networkPolicy" in facts_for(by_kind["CiliumNetworkPolicy"], complete)
    assert "networkPolicy" in facts_for(by_kind["NetworkPolicy"], complete)


def test_the_analyzers_of_a_kind_follow_the_inventory_as_it_changes() -> None:
    """Which analyzers read a kind is decided once per kind and inventory state (facts._plan): a
    binding added to the inventory a Deployment was judged in brings the RBAC facts in at once."""
    objects = _documents(EXTRA)
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    binding = next(o for o in objects if o["kind"] == "RoleBinding")
    inventory = inventory_of([deployment])
    assert "rbac" not in facts_for(deployment, inventory)
    inventory.add(binding)
    assert "rbac" in facts_for(deployment, inventory)
    assert facts_for(deployment, inventory) == _every_analyzer(deployment, inventory, None)
    # a kind that is not a name (a list: not even hashable) is read by the analyzers of any object;
    # those of named kinds have nothing to say of it
    odd = {**deployment, "kind": ["Deployment"]}
    assert facts_for(odd, inventory) == _every_analyzer(odd, inventory, None)
