"""Fuzzing the readers: random bytes and random YAML never escape as an exception.

Every input goes through what a scan does with a file (the decoder, the type check, the scan
pipeline with its facts and engine), and through the RBAC graph and egress reachability that
`stockade rbac` and `stockade egress reach` build. The only acceptable outcomes are resources,
:class:`InputError` items, skipped files and findings; anything else is a crash this test finds.
Bounded budget in the suite (``FUZZ_EXAMPLES``, default 150 per target; ``STOCKADE_FUZZ_EXAMPLES``
raises it for a longer campaign, recorded in docs/fuzzing.md).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stockade.policies.config.settings import Config
from stockade.policies.evaluate import Evaluator
from stockade.policies.facts.inventory import Inventory
from stockade.policies.facts.netpol.reach import Reachability
from stockade.policies.facts.rbac import RBACGraph
from stockade.policies.model import InputError, Resource
from stockade.scanner.scan import ScanOptions, scan
from stockade.scanner.sources.base import Skipped
from stockade.scanner.sources.files import parse_text

FUZZ_EXAMPLES = int(os.environ.get("STOCKADE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
_EVALUATOR: list[Evaluator] = []


def evaluator() -> Evaluator:
    if not _EVALUATOR:
        _EVALUATOR.append(Evaluator.default(Config()))
    return _EVALUATOR[0]


KINDS = [
    "Pod", "Deployment", "Job", "CronJob", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding",
    "NetworkPolicy", "Namespace", "ServiceAccount", "RayCluster", "JobSet", "Secret", "StorageClass",
    "CiliumNetworkPolicy", "GlobalNetworkPolicy", "RuntimeClass", "InferenceService", "List",
]  # fmt: skip
API = {
    "RayCluster": "ray.io/v1",
    "JobSet": "jobset.x-k8s.io/v1alpha2",
    "InferenceService": "serving.kserve.io/v1beta1",
}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12), st.sampled_from(["*", "", "0", "true", "nvidia.com/gpu", "/var/run", "0.0.0.0/0"]),
)  # fmt: skip
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from(
                    [
                        "spec", "metadata", "name", "namespace", "containers", "securityContext", "template",
                        "rules", "subjects", "roleRef", "verbs", "resources", "apiGroups", "egress",
                        "ingress",
                        "to", "ipBlock", "cidr", "podSelector", "labels", "annotations", "items", "kind",
                        "volumes", "hostPath", "path", "workerGroupSpecs", "headGroupSpec", "replicatedJobs",
                        "predictor", "ports", "privileged", "hostNetwork", "serviceAccountName", "except",
                    ]
                ),
                st.text(max_size=6),
            ),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=30,
)  # fmt: skip


@st.composite
def objects(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(KINDS))
    obj: dict[str, Any] = {"apiVersion": API.get(kind, "v1"), "kind": kind}
    for key in ("metadata", "spec", "rules", "subjects", "roleRef", "items", "data"):
        if draw(st.booleans()):
            obj[key] = draw(json_values)
    return obj


def _run_everything(items: list[Any]) -> None:
    resources = [i for i in items if isinstance(i, Resource)]
    for item in items:
        assert isinstance(item, Resource | InputError | Skipped), type(item)
    ev = evaluator()
    result = scan(resources, ev, ScanOptions(ev.config, workers=1), version="fuzz")
    for err in result.errors:
        assert isinstance(err, InputError)
    inventory = Inventory(complete=True)
    for r in resources:
        inventory.add(r.obj)
    RBACGraph.of(inventory)
    Reachability([r.obj for r in resources]).connlist()


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    _run_everything(list(parse_text(text, "fuzz.yaml")))
    _run_everything(list(parse_text(text, "fuzz.json", json_file=True)))


@FUZZ
@given(st.lists(objects(), min_size=1, max_size=4))
def test_random_objects_as_yaml_and_json(objs: list[dict[str, Any]]) -> None:
    import json

    import yaml

    text = yaml.safe_dump_all(objs)
    _run_everything(list(parse_text(text, "fuzz.yaml")))
    _run_everything(list(parse_text(json.dumps(objs), "fuzz.json", json_file=True)))


@FUZZ
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"#,?\n \t0123456789.~=<yYnN%@`")), max_size=120))
def test_random_yaml_syntax(text: str) -> None:
    _run_everything(list(parse_text("apiVersion: v1\nkind: Pod\n" + text, "fuzz.yaml")))
    _run_everything(list(parse_text(text, "fuzz.yaml")))


STRINGS = st.sampled_from(
    [
        "", "*", "a", "app", "web", "ml", "kube-system", "default", "get", "create", "pods", "secrets",
        "nodes/proxy", "pods/exec", "serviceaccounts/token", "rbac.authorization.k8s.io", "cluster-admin",
        "ServiceAccount", "User", "Group", "system:masters", "ClusterRole", "Role", "10.0.0.0/8",
        "0.0.0.0/0", "169.254.169.254/32", "::/0", "TCP", "UDP", "SCTP", "Egress", "Ingress", "In",
        "NotIn", "Exists", "DoesNotExist", "nvidia.com/gpu", "runsc", "gvisor", "/var/run/docker.sock",
        "/", "RuntimeDefault", "Unconfined", "Localhost", "SYS_ADMIN", "ALL", "NET_RAW", "1", "500m",
        "1Gi", "latest", "registry.example/app:latest", "app@sha256:" + "a" * 64, "Always", "Never",
    ]
)  # fmt: skip


def _from_type(kind: str, depth: int) -> st.SearchStrategy[Any]:
    if kind in ("str", "datetime", "date"):
        return STRINGS
    if kind == "int":
        return st.integers(-5, 70000)
    if kind == "float":
        return st.floats(-10, 10)
    if kind == "bool":
        return st.booleans()
    if kind == "object":
        return st.one_of(st.integers(0, 65535), STRINGS)
    if kind.startswith("List["):
        return st.lists(_from_type(kind[5:-1], depth + 1), max_size=3 if depth < 4 else 0)
    if kind.startswith("Dict[str, "):
        return st.dictionaries(STRINGS, _from_type(kind[10:-1], depth + 1), max_size=3)
    return _from_model(kind, depth)


def _from_model(name: str, depth: int) -> st.SearchStrategy[Any]:
    from stockade.policies.decoding.shape import _models

    fields = _models().get(name, {})
    if depth > 5 or not fields:
        return st.just({})
    keys = sorted(fields)
    return st.lists(st.sampled_from(keys), max_size=4, unique=True).flatmap(
        lambda chosen: st.fixed_dictionaries(
            {k: st.deferred(lambda k=k: _from_type(fields[k], depth + 1)) for k in chosen}
        )
    )


@st.composite
def typed_objects(draw: Any) -> dict[str, Any]:
    from stockade.policies.decoding.shape import _schema

    kinds = _schema()["kinds"]
    key = draw(st.sampled_from(sorted(kinds)))
    group, kind = key.rsplit("/", 1)
    obj = draw(_from_model(kinds[key], 0))
    obj.update(apiVersion=f"{group}/v1" if group else "v1", kind=kind)
    md = obj.setdefault("metadata", {})
    md["name"] = draw(st.sampled_from(["a", "b", "web"]))
    if draw(st.booleans()):
        md["namespace"] = draw(st.sampled_from(["ml", "default", "kube-system"]))
    return obj


@FUZZ
@given(st.lists(typed_objects(), min_size=1, max_size=6))
def test_well_typed_random_objects_reach_every_analyzer(objs: list[dict[str, Any]]) -> None:
    import yaml

    items = list(parse_text(yaml.safe_dump_all(objs), "fuzz.yaml"))
    assert all(not isinstance(i, InputError) for i in items), [
        str(i) for i in items if isinstance(i, InputError)
    ]
    _run_everything(items)
