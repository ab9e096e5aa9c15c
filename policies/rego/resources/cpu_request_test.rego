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
		{"name": "none"},
		{"name": "memory-only", "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}},
		{"name": "null", "resources": {"requests": {"cpu": null}}},
	]}
	paths(spec, true) == {
		["spec", "containers", 0, "resources", "requests", "cpu"],
		["spec", "containers", 1, "resources", "requests", "cpu"],
		["spec", "containers", 2, "resources", "requests", "cpu"],
	}
}

test_init_containers_checked_ephemeral_not if {
	spec := {"initContainers": [{"name": "i"}], "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}], "ephemeralContainers": [{"name": "e"}]}
	paths(spec, true) == {["spec", "initContainers", 0, "resources", "requests", "cpu"]}
}

test_switch_off_allows if {
	paths({"containers": [{"name": "a"}]}, false) == set()
}

test_message_names_container if {
	some v in cpu_request.deny with input as pod({"containers": [{"name": "trainer"}]}) with data.stockade.config as cfg(true)
	startswith(v.msg, "container \"trainer\" has no CPU request")
}
