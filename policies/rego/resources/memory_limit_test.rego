package stockade.resources.memory_limit_test

import data.stockade.resources.memory_limit
import rego.v1

cfg(on) := {"resources": {"require_memory_limit": on, "require_cpu_request": true, "require_memory_request": true}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}}

paths(spec, on) := {v.path | some v in memory_limit.deny with input as pod(spec) with data.stockade.config as cfg(on)}

test_limit_set_allowed if {
	paths({"containers": [{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}]}, true) == set()
	paths({"containers": [{"name": "a", "resources": {"limits": {"memory": 1073741824}}}]}, true) == set()
}

test_missing_limit_denied if {
	spec := {"containers": [
		{"name": "ok", "resources": {"limits": {"memory": "1Gi"}}},
		{"name": "none"},
		{"name": "cpu-only", "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}},
		{"name": "null-limits", "resources": {"limits": null}},
		{"name": "empty", "resources": {"limits": {"memory": ""}}},
	]}
	paths(spec, true) == {
		["spec", "containers", 1, "resources", "limits", "memory"],
		["spec", "containers", 2, "resources", "limits", "memory"],
		["spec", "containers", 3, "resources", "limits", "memory"],
		["spec", "containers", 4, "resources", "limits", "memory"],
	}
}

test_request_does_not_satisfy_limit if {
	paths({"containers": [{"name": "a", "resources": {"requests": {"memory": "1Gi"}}}]}, true) == {["spec", "containers", 0, "resources", "limits", "memory"]}
}

test_init_containers_checked_ephemeral_not if {
	spec := {"initContainers": [{"name": "i"}], "containers": [{"name": "a", "resources": {"limits": {"memory": "1Gi"}}}], "ephemeralContainers": [{"name": "e"}]}
	paths(spec, true) == {["spec", "initContainers", 0, "resources", "limits", "memory"]}
}

test_switch_off_allows if {
	paths({"containers": [{"name": "a"}]}, false) == set()
}

test_message_names_container if {
	some v in memory_limit.deny with input as pod({"containers": [{"name": "trainer"}]}) with data.stockade.config as cfg(true)
	v.msg == "container \"trainer\" has no memory limit"
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"containers": [{"name": "a"}]}, "metadata": {}, "path": ["spec", "jobTemplate", "spec", "template"]}}
	{v.path | some v in memory_limit.deny with input as inp with data.stockade.config as cfg(true)} == {["spec", "jobTemplate", "spec", "template", "spec", "containers", 0, "resources", "limits", "memory"]}
}
