package stockade.resources.cpu_request_test

import data.stockade.resources.cpu_request
import rego.v1

cfg(on) := {"resources": {"require_memory_limit": true, "require_cpu_request": on, "require_memory_request": true}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}}

paths(spec, on) := {v.path | some v in cpu_request.deny with input as pod(spec) with data.stockade.config as cfg(on)}

test_request_set_allowed if {
	paths({"containers": [{"name": "a", "resources": {"requests": {"cpu": "250m"}}}]}, true) == set()
	paths({"containers": [{"name": "a", "resources": {"requests": {"cpu": 1}}}]}, true) == set()
}

# Kubernetes defaults a Pod's missing request to its limit (SetDefaults_Pod).
test_limit_satisfies_request if {
	paths({"containers": [{"name": "a", "resources": {"limits": {"cpu": "500m"}}}]}, true) == set()
	paths({"containers": [{"name": "a", "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "1Gi"}}}]}, true) == set()
}

test_missing_request_denied if {
	spec := {"containers": [
		{"name": "none-of-it", "resources": {"limits": {"memory": "1Gi"}}},
		{"name": "memory-only", "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}},
		{"name": "null", "resources": {"requests": {"cpu": null}, "limits": {"memory": "1Gi"}}},
	]}
	paths(spec, true) == {
		["spec", "containers", 0, "resources", "requests", "cpu"],
		["spec", "containers", 1, "resources", "requests", "cpu"],
		["spec", "containers", 2, "resources", "requests", "cpu"],
	}
}

test_init_containers_checked_ephemeral_not if {
	spec := {"initContainers": [{"name": "i", "resources": {"limits": {"memory": "1Gi"}}}], "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}], "ephemeralContainers": [{"name": "e"}]}
	paths(spec, true) == {["spec", "initContainers", 0, "resources", "requests", "cpu"]}
}

test_switch_off_allows if {
	paths({"containers": [{"name": "a"}]}, false) == set()
}

test_message_names_container if {
	some v in cpu_request.deny with input as pod({"containers": [{"name": "trainer", "resources": {"limits": {"memory": "1Gi"}}}]}) with data.stockade.config as cfg(true)
	startswith(v.msg, "container \"trainer\" has no CPU request")
}

# A container with no CPU or memory quantity at all is reported once (issue 37): by STK-RES-001 while
# it is on, else by the next rule that is on, which then lists everything missing.
bare_paths(config) := {v.path | some v in cpu_request.deny with input as pod({"containers": [{"name": "bare"}]}) with data.stockade.config as config}

test_bare_container_left_to_memory_limit if {
	bare_paths(cfg(true)) == set()
	# only a GPU: still no CPU or memory quantity
	paths({"containers": [{"name": "g", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}, true) == set()
}

test_bare_container_reported_when_memory_limit_off if {
	off := object.union(cfg(true), {"disabled_rules": ["STK-RES-001"]})
	bare_paths(off) == {["spec", "containers", 0, "resources", "requests", "cpu"]}
	switched := {"resources": {"require_memory_limit": false, "require_cpu_request": true, "require_memory_request": true}}
	bare_paths(switched) == {["spec", "containers", 0, "resources", "requests", "cpu"]}
}

test_bare_container_lists_what_is_missing if {
	config := {"resources": {"require_memory_limit": false, "require_cpu_request": true, "require_memory_request": true}}
	some v in cpu_request.deny with input as pod({"containers": [{"name": "bare"}]}) with data.stockade.config as config
	v.msg == "container \"bare\" sets no CPU or memory resources: no CPU request, memory request"
	v.details.missing == ["resources.requests.cpu", "resources.requests.memory"]
}
