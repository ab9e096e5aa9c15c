package stockade.pod.run_as_user_test

import data.stockade.pod.run_as_user
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := run_as_user.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

ru(uid) := {"runAsUser": uid}

test_non_zero_and_unset_allowed if {
	spec := {"securityContext": ru(1000), "containers": [{"name": "a"}, {"name": "b", "securityContext": ru(65534)}]}
	paths(pod(spec)) == set()
}

test_pod_zero_denied if {
	paths(pod({"securityContext": ru(0), "containers": [{"name": "a"}]})) == {["spec", "securityContext", "runAsUser"]}
}

test_container_zero_denied_in_every_list if {
	spec := {
		"securityContext": ru(1000),
		"initContainers": [{"name": "i", "securityContext": ru(0)}],
		"containers": [{"name": "a", "securityContext": ru(0)}, {"name": "b"}],
		"ephemeralContainers": [{"name": "e", "securityContext": ru(0)}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "runAsUser"],
		["spec", "containers", 0, "securityContext", "runAsUser"],
		["spec", "ephemeralContainers", 0, "securityContext", "runAsUser"],
	}
}

test_message_names_container if {
	some v in deny(pod({"containers": [{"name": "root", "securityContext": ru(0)}]}))
	contains(v.msg, `"root"`)
}

test_user_namespace_exempt if {
	paths(pod({"hostUsers": false, "securityContext": ru(0), "containers": [{"name": "a", "securityContext": ru(0)}]})) == set()
}

test_baseline_namespace_allowed if {
	paths(at_level({"securityContext": ru(0), "containers": [{"name": "a"}]}, "baseline")) == set()
}
