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
		{"name": "none"},
		{"name": "cpu-only", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}},
		{"name": "null-requests", "resources": {"requests": null}},
	]}
	paths(spec, true) == {
		["spec", "containers", 0, "resources", "requests", "memory"],
		["spec", "containers", 1, "resources", "requests", "memory"],
		["spec", "containers", 2, "resources", "requests", "memory"],
	}
}

test_init_containers_checked_ephemeral_not if {
	spec := {"initContainers": [{"name": "i"}], "containers": [{"name": "a", "resources": {"requests": {"memory": "1Gi"}}}], "ephemeralContainers": [{"name": "e"}]}
	paths(spec, true) == {["spec", "initContainers", 0, "resources", "requests", "memory"]}
}

test_switch_off_allows if {
	paths({"containers": [{"name": "a"}]}, false) == set()
}

test_message_names_container if {
	some v in memory_request.deny with input as pod({"containers": [{"name": "trainer"}]}) with data.stockade.config as cfg(true)
	startswith(v.msg, "container \"trainer\" has no memory request")
}
