package stockade.pod.capabilities_restricted_test

import data.stockade.pod.capabilities_restricted
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := capabilities_restricted.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

caps(drop, add) := {"capabilities": {"drop": drop, "add": add}}

test_drop_all_allowed if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": {"capabilities": {"drop": ["ALL"]}}}],
		"containers": [{"name": "a", "securityContext": caps(["ALL"], ["NET_BIND_SERVICE"])}],
		"ephemeralContainers": [{"name": "e", "securityContext": caps(["NET_RAW", "ALL"], [])}],
	}
	paths(pod(spec)) == set()
}

test_missing_drop_all_denied_in_every_list if {
	spec := {
		"initContainers": [{"name": "i"}],
		"containers": [{"name": "a", "securityContext": caps(["NET_RAW"], [])}, {"name": "b", "securityContext": {"capabilities": {}}}],
		"ephemeralContainers": [{"name": "e", "securityContext": {}}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "capabilities", "drop"],
		["spec", "containers", 0, "securityContext", "capabilities", "drop"],
		["spec", "containers", 1, "securityContext", "capabilities", "drop"],
		["spec", "ephemeralContainers", 0, "securityContext", "capabilities", "drop"],
	}
}

test_drop_all_is_case_sensitive if {
	count(paths(pod({"containers": [{"name": "a", "securityContext": caps(["all"], [])}]}))) == 1
}

test_adding_anything_but_net_bind_service_denied if {
	spec := {"containers": [{"name": "a", "securityContext": caps(["ALL"], ["NET_BIND_SERVICE", "CHOWN", "SYS_ADMIN"])}]}
	paths(pod(spec)) == {
		["spec", "containers", 0, "securityContext", "capabilities", "add", 1],
		["spec", "containers", 0, "securityContext", "capabilities", "add", 2],
	}
}

test_message_names_capability if {
	some v in deny(pod({"containers": [{"name": "a", "securityContext": caps(["ALL"], ["CHOWN"])}]}))
	v.details.capability == "CHOWN"
	contains(v.msg, `"a"`)
}

test_windows_exempt if {
	paths(pod({"os": {"name": "windows"}, "containers": [{"name": "a", "securityContext": caps([], ["SYS_ADMIN"])}]})) == set()
}

test_baseline_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a"}]}, "baseline")) == set()
}
