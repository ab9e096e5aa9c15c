"""Field types against Kubernetes' own (stockade.policies.decoding.shape): the fast path for string maps and
lists must find exactly what the field-by-field check finds."""

from __future__ import annotations

from typing import Any

import pytest

from stockade.policies.decoding.shape import problems


def pod(container: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    md = {"name": "p", **metadata}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {"containers": [container]}}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (pod({"name": "c", "image": "i", "args": ["a", "b"]}), []),
        (pod({"name": "c", "image": "i", "args": {"a": "b"}}), [(("spec", "containers", 0, "args"), "list")]),
        (
            pod({"name": "c", "image": "i", "args": ["a", {"b": 1}]}),
            [(("spec", "containers", 0, "args", 1), "string")],
        ),
        (pod({"name": "c", "image": "i", "args": ["a", 2]}), []),  # numbers pass as strings outside metadata
        (pod({"name": "c", "image": "i"}, labels={"a": "b"}), []),
        (pod({"name": "c", "image": "i"}, labels={"a": 1}), [(("metadata", "labels", "a"), "string")]),
        (pod({"name": "c", "image": "i"}, labels=["a"]), [(("metadata", "labels"), "object")]),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "m"},
                "data": {f"k{i}": "v" for i in range(50_000)},
            },
            [],
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "m"},
                "data": {"a": "x", "b": ["y"]},
            },
            [(("data", "b"), "string")],
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": ["x"]},
            [(("data",), "object")],
        ),
    ],
)
def test_string_maps_and_lists(obj: dict[str, Any], expected: list[tuple[tuple[Any, ...], str]]) -> None:
    found = problems(obj)
    assert [path for path, _ in found] == [path for path, _ in expected]
    for (_, what), (_, word) in zip(found, expected, strict=True):
        assert word in what


def test_a_decoded_built_in_kind_is_not_walked_and_a_namesake_custom_resource_is() -> None:
    """An admission review's object was decoded by the API server into its Go types: a built-in kind
    (by group and kind) cannot hold a field of the wrong type. A custom resource that shares a
    built-in kind's name, or a custom workload, is stored as written, and is walked."""
    bad = {"name": "c", "image": "i", "securityContext": {"privileged": "true"}}
    privileged = ("spec", "containers", 0, "securityContext", "privileged")
    assert [p for p, _ in problems(pod(bad))] == [privileged]  # a manifest in a file: walked
    assert problems(pod(bad), decoded=True) == []
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [bad]}}},
    }
    assert problems(deployment) and problems(deployment, decoded=True) == []
    namesake = {**pod(bad), "apiVersion": "example.com/v1"}
    assert [p for p, _ in problems(namesake, decoded=True)] == [privileged]
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "r"},
        "spec": {"headGroupSpec": {"template": {"spec": {"containers": [bad]}}}},
    }
    assert [p for p, _ in problems(ray, decoded=True)] == [("spec", "headGroupSpec", "template", *privileged)]
    calico = {"apiVersion": "crd.projectcalico.org/v1", "kind": "NetworkPolicy", "metadata": {"name": 1}}
    assert problems(calico, decoded=True)  # Calico's NetworkPolicy, not networking.k8s.io's
