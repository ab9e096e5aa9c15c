package stockade.gpu.namespace_test

import data.stockade.gpu.namespace
import rego.v1

cfg := {"gpu": {"resources": ["nvidia.com/gpu", "amd.com/gpu"], "namespace_labels": {"stockade.io/gpu": "true", "team": "ml"}}}

gpu_pod := {"containers": [
	{"name": "cpu", "resources": {"limits": {"cpu": "1"}}},
	{"name": "trainer", "resources": {"limits": {"nvidia.com/gpu": 4}, "requests": {"nvidia.com/gpu": 4}}},
]}

inp(spec, ns) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "object": {"metadata": {"namespace": "ml"}}, "namespace": ns}

known(labels) := {"name": "ml", "labels": labels, "annotations": {}, "known": true}

deny(spec, ns) := d if {
	d := namespace.deny with input as inp(spec, ns) with data.stockade.config as cfg
}

test_labelled_namespace_allowed if {
	count(deny(gpu_pod, known({"stockade.io/gpu": "true", "team": "ml", "other": "x"}))) == 0
}

test_unlabelled_namespace_denied if {
	vs := deny(gpu_pod, known({}))
	count(vs) == 1
	some v in vs
	v.path == ["spec", "containers", 1, "resources", "limits", "nvidia.com/gpu"]
	v.msg == "container \"trainer\" uses nvidia.com/gpu but namespace \"ml\" is not labelled for GPUs (missing stockade.io/gpu=true, team=ml)"
}

test_partially_labelled_denied if {
	some v in deny(gpu_pod, known({"stockade.io/gpu": "true", "team": "web"}))
	contains(v.msg, "missing team=ml")
}

test_unknown_namespace_not_reported if {
	count(deny(gpu_pod, {"name": "ml", "labels": {}, "annotations": {}, "known": false})) == 0
	count(deny(gpu_pod, {"name": "ml", "labels": {}})) == 0
}

test_non_gpu_pod_allowed if {
	count(deny({"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}]}, known({}))) == 0
}

test_zero_gpu_is_not_a_gpu_pod if {
	count(deny({"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": 0}}}]}, known({}))) == 0
	count(deny({"containers": [{"name": "a", "resources": {"limits": {"nvidia.com/gpu": "0"}}}]}, known({}))) == 0
}

test_request_only_and_init_container_count if {
	spec := {"initContainers": [{"name": "warm", "resources": {"requests": {"amd.com/gpu": "1"}}}]}
	some v in deny(spec, known({}))
	v.path == ["spec", "initContainers", 0, "resources", "requests", "amd.com/gpu"]
}

test_one_violation_per_gpu_container if {
	spec := {"containers": [
		{"name": "a", "resources": {"limits": {"nvidia.com/gpu": 1, "amd.com/gpu": 1}}},
		{"name": "b", "resources": {"limits": {"nvidia.com/gpu": 1}}},
	]}
	{v.path | some v in deny(spec, known({}))} == {
		["spec", "containers", 0, "resources", "limits", "amd.com/gpu"],
		["spec", "containers", 1, "resources", "limits", "nvidia.com/gpu"],
	}
}

test_no_required_labels_allows if {
	count(namespace.deny) == 0 with input as inp(gpu_pod, known({})) with data.stockade.config as {"gpu": {"resources": ["nvidia.com/gpu"], "namespace_labels": {}}}
}
