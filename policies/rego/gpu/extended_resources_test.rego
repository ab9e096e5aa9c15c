package stockade.gpu.extended_resources_test

import data.stockade.gpu.extended_resources
import rego.v1

cfg := {"gpu": {"resources": ["nvidia.com/gpu", "example-gpu"]}}

pod(containers) := {"pod": {"spec": {"containers": containers}, "metadata": {}, "path": []}}

res(limits, requests) := [{"name": "c", "resources": {"limits": limits, "requests": requests}}]

paths(containers) := {v.path | some v in extended_resources.deny with input as pod(containers) with data.stockade.config as cfg}

test_equal_allowed if {
	paths(res({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 2})) == set()
	paths(res({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": 2})) == set()
	paths(res({"rdma/hca_shared_devices_a": "1"}, {"rdma/hca_shared_devices_a": "1"})) == set()
}

test_limit_only_allowed if {
	paths(res({"nvidia.com/gpu": 1}, {})) == set()
	paths([{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]) == set()
}

test_different_denied if {
	paths(res({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 1})) == {["spec", "containers", 0, "resources", "requests", "nvidia.com/gpu"]}
	some v in extended_resources.deny with input as pod(res({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 1})) with data.stockade.config as cfg
	v.msg == "container \"c\" requests 1 of extended resource \"nvidia.com/gpu\" but its limit is 2 (they must be equal)"
}

test_request_without_limit_denied if {
	paths(res({}, {"rdma/hca_shared_devices_a": 1})) == {["spec", "containers", 0, "resources", "requests", "rdma/hca_shared_devices_a"]}
	paths([{"name": "c", "resources": {"requests": {"amd.com/gpu": 1}}}]) == {["spec", "containers", 0, "resources", "requests", "amd.com/gpu"]}
	some v in extended_resources.deny with input as pod(res({}, {"rdma/hca_shared_devices_a": 1})) with data.stockade.config as cfg
	contains(v.msg, "without a limit")
}

test_native_resources_ignored if {
	paths(res({"cpu": "2", "memory": "2Gi"}, {"cpu": "1", "memory": "1Gi"})) == set()
	paths(res({"hugepages-2Mi": "2Gi"}, {"hugepages-2Mi": "1Gi"})) == set()
	paths(res({}, {"example.kubernetes.io/thing": 1})) == set()
	paths(res({}, {"requests.example.com/quota": 1})) == set()
}

test_configured_gpu_without_slash_checked if {
	paths(res({"example-gpu": 2}, {"example-gpu": 1})) == {["spec", "containers", 0, "resources", "requests", "example-gpu"]}
}

test_init_containers_checked if {
	inp := {"pod": {"spec": {"initContainers": [{"name": "i", "resources": {"requests": {"nvidia.com/gpu": 1}}}]}, "metadata": {}, "path": ["spec", "template"]}}
	{v.path | some v in extended_resources.deny with input as inp with data.stockade.config as cfg} == {["spec", "template", "spec", "initContainers", 0, "resources", "requests", "nvidia.com/gpu"]}
}

test_malformed_quantities_compare_as_written if {
	paths(res({"nvidia.com/gpu": "one"}, {"nvidia.com/gpu": "one"})) == set()
	paths(res({"nvidia.com/gpu": "one"}, {"nvidia.com/gpu": "two"})) == {["spec", "containers", 0, "resources", "requests", "nvidia.com/gpu"]}
}
