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
	some v in memory_limit.deny with input as pod({"containers": [{"name": "trainer", "resources": {"requests": {"cpu": "1"}}}]}) with data.stockade.config as cfg(true)
	v.msg == "container \"trainer\" has no memory limit"
}

test_template_path_prefixed if {
	inp := {"pod": {"spec": {"containers": [{"name": "a"}]}, "metadata": {}, "path": ["spec", "jobTemplate", "spec", "template"]}}
	{v.path | some v in memory_limit.deny with input as inp with data.stockade.config as cfg(true)} == {["spec", "jobTemplate", "spec", "template", "spec", "containers", 0, "resources", "limits", "memory"]}
}

# A container with no CPU or memory quantity at all: one finding listing everything missing (issue 37).
test_bare_container_one_finding_listing_what_is_missing if {
	some v in memory_limit.deny with input as pod({"containers": [{"name": "bare"}]}) with data.stockade.config as cfg(true)
	v.msg == "container \"bare\" sets no CPU or memory resources: no memory limit, CPU request, memory request"
	v.path == ["spec", "containers", 0, "resources", "limits", "memory"]
	v.details.missing == ["resources.limits.memory", "resources.requests.cpu", "resources.requests.memory"]
	# the requests switched off: only what is still required
	only := {"resources": {"require_memory_limit": true, "require_cpu_request": false, "require_memory_request": true}}
	some w in memory_limit.deny with input as pod({"containers": [{"name": "bare"}]}) with data.stockade.config as only
	w.msg == "container \"bare\" sets no CPU or memory resources: no memory limit, memory request"
	none := {"resources": {"require_memory_limit": true, "require_cpu_request": true, "require_memory_request": true}, "disabled_rules": ["STK-RES-002", "STK-RES-003"]}
	some x in memory_limit.deny with input as pod({"containers": [{"name": "bare"}]}) with data.stockade.config as none
	x.msg == "container \"bare\" has no memory limit"
}

test_disabled_rule_reports_nothing if {
	off := object.union(cfg(true), {"disabled_rules": ["STK-RES-001"]})
	{v | some v in memory_limit.deny with input as pod({"containers": [{"name": "bare"}, {"name": "cpu", "resources": {"limits": {"cpu": "1"}}}]}) with data.stockade.config as off} == set()
}

# Pod-level resources (spec.resources, Kubernetes 1.34): a pod-level memory limit bounds every
# container that sets none; a bare container is then reported for what the pod does not set only.
test_a_pod_level_limit_covers_the_containers if {
	spec := {"resources": {"limits": {"memory": "2Gi"}}, "containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
	paths(spec, true) == set()
	bare := {"resources": {"limits": {"memory": "2Gi"}}, "containers": [{"name": "b"}]}
	paths(bare, true) == set()
	msgs := {v.msg | some v in data.stockade.resources.cpu_request.deny with input as pod(bare) with data.stockade.config as cfg(true)}
	msgs == {"container \"b\" sets no CPU or memory resources: no CPU request, memory request"}
}
