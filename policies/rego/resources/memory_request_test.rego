package stockade.resources.memory_request_test

import data.stockade.resources.memory_request
import rego.v1

cfg(on) := {"resources": {"require_memory_limit": true, "require_cpu_request": true, "require_memory_request": on}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}}

paths(spec, on) := {v.path | some v in memory_request.deny with input as pod(spec) with data.stockade.config as cfg(on)}

test_request_set_allowed if {
	paths({"containers": [{"name": "a", "resources": {"requests": {"memory": "512Mi"}}}]}, true) == set()
}

# Kubernetes defaults a Pod's missing request to its limit (SetDefaults_Pod).
test_limit_satisfies_request if {
	paths({"containers": [{"name": "a", "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "1"}}}]}, true) == set()
}

test_missing_request_denied if {
	spec := {"containers": [
		{"name": "none-of-it", "resources": {"requests": {"cpu": "1"}}},
		{"name": "cpu-only", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}},
		{"name": "null-requests", "resources": {"requests": null, "limits": {"cpu": "1"}}},
	]}
	paths(spec, true) == {
		["spec", "containers", 0, "resources", "requests", "memory"],
		["spec", "containers", 1, "resources", "requests", "memory"],
		["spec", "containers", 2, "resources", "requests", "memory"],
	}
}

test_init_containers_checked_ephemeral_not if {
	spec := {"initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1"}}}], "containers": [{"name": "a", "resources": {"requests": {"memory": "1Gi"}}}], "ephemeralContainers": [{"name": "e"}]}
	paths(spec, true) == {["spec", "initContainers", 0, "resources", "requests", "memory"]}
}

test_switch_off_allows if {
	paths({"containers": [{"name": "a"}]}, false) == set()
}

test_message_names_container if {
	some v in memory_request.deny with input as pod({"containers": [{"name": "trainer", "resources": {"requests": {"cpu": "1"}}}]}) with data.stockade.config as cfg(true)
	startswith(v.msg, "container \"trainer\" has no memory request")
}

# A container with no CPU or memory quantity at all is reported once (issue 37): by STK-RES-001 while
# it is on, else by the next rule that is on, which then lists everything missing.
bare_paths(config) := {v.path | some v in memory_request.deny with input as pod({"containers": [{"name": "bare"}]}) with data.stockade.config as config}

test_bare_container_left_to_memory_limit if {
	bare_paths(cfg(true)) == set()
	# only a GPU: still no CPU or memory quantity
	paths({"containers": [{"name": "g", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}, true) == set()
}

test_bare_container_reported_when_memory_limit_and_cpu_request_off if {
	off := object.union(cfg(true), {"disabled_rules": ["STK-RES-001", "STK-RES-002"]})
	bare_paths(off) == {["spec", "containers", 0, "resources", "requests", "memory"]}
	switched := {"resources": {"require_memory_limit": false, "require_cpu_request": false, "require_memory_request": true}}
	bare_paths(switched) == {["spec", "containers", 0, "resources", "requests", "memory"]}
}

test_bare_container_left_to_cpu_request if {
	config := {"resources": {"require_memory_limit": false, "require_cpu_request": true, "require_memory_request": true}}
	bare_paths(config) == set()
	# the only rule on: its own message
	alone := {"resources": {"require_memory_limit": true, "require_cpu_request": false, "require_memory_request": true}, "disabled_rules": ["STK-RES-001"]}
	some v in memory_request.deny with input as pod({"containers": [{"name": "bare"}]}) with data.stockade.config as alone
	v.msg == "container \"bare\" has no memory request (and no memory limit it would default to)"
}
