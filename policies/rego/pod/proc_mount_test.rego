package stockade.pod.proc_mount_test

import data.stockade.pod.proc_mount
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := proc_mount.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

pm(value) := {"procMount": value}

test_default_allowed if {
	paths(pod({"containers": [{"name": "a", "securityContext": pm("Default")}, {"name": "b"}, {"name": "c", "securityContext": {}}]})) == set()
}

test_unmasked_denied_in_every_list if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": pm("Unmasked")}],
		"containers": [{"name": "a", "securityContext": pm("Default")}, {"name": "b", "securityContext": pm("Unmasked")}],
		"ephemeralContainers": [{"name": "e", "securityContext": pm("Unmasked")}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "procMount"],
		["spec", "containers", 1, "securityContext", "procMount"],
		["spec", "ephemeralContainers", 0, "securityContext", "procMount"],
	}
}

test_message_names_container_and_value if {
	some v in deny(pod({"containers": [{"name": "b", "securityContext": pm("Unmasked")}]}))
	contains(v.msg, `"b"`)
	contains(v.msg, "Unmasked")
}

test_baseline_denied if {
	count(paths(at_level({"containers": [{"name": "a", "securityContext": pm("Unmasked")}]}, "baseline"))) == 1
}

test_baseline_user_namespace_allowed if {
	spec := {"hostUsers": false, "containers": [{"name": "a", "securityContext": pm("Unmasked")}]}
	paths(at_level(spec, "baseline")) == set()
}

test_baseline_host_users_true_denied if {
	spec := {"hostUsers": true, "containers": [{"name": "a", "securityContext": pm("Unmasked")}]}
	count(paths(at_level(spec, "baseline"))) == 1
}

test_restricted_user_namespace_still_denied if {
	spec := {"hostUsers": false, "containers": [{"name": "a", "securityContext": pm("Unmasked")}]}
	count(paths(pod(spec))) == 1
}

test_privileged_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a", "securityContext": pm("Unmasked")}]}, "privileged")) == set()
}
