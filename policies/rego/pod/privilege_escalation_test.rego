package stockade.pod.privilege_escalation_test

import data.stockade.pod.privilege_escalation
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := privilege_escalation.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

ape(value) := {"allowPrivilegeEscalation": value}

test_false_allowed if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": ape(false)}],
		"containers": [{"name": "a", "securityContext": ape(false)}],
		"ephemeralContainers": [{"name": "e", "securityContext": ape(false)}],
	}
	paths(pod(spec)) == set()
}

test_unset_and_true_denied_in_every_list if {
	spec := {
		"initContainers": [{"name": "i"}],
		"containers": [{"name": "a", "securityContext": ape(true)}, {"name": "b", "securityContext": {}}, {"name": "c", "securityContext": ape(false)}],
		"ephemeralContainers": [{"name": "e", "securityContext": ape(null)}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "allowPrivilegeEscalation"],
		["spec", "containers", 0, "securityContext", "allowPrivilegeEscalation"],
		["spec", "containers", 1, "securityContext", "allowPrivilegeEscalation"],
		["spec", "ephemeralContainers", 0, "securityContext", "allowPrivilegeEscalation"],
	}
}

test_message_says_why if {
	some v in deny(pod({"containers": [{"name": "a", "securityContext": ape(true)}]}))
	contains(v.msg, `"a"`)
	contains(v.msg, "true")
}

test_windows_exempt if {
	paths(pod({"os": {"name": "windows"}, "containers": [{"name": "a"}]})) == set()
}

test_linux_os_denied if {
	count(paths(pod({"os": {"name": "linux"}, "containers": [{"name": "a"}]}))) == 1
}

test_baseline_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a", "securityContext": ape(true)}]}, "baseline")) == set()
}
