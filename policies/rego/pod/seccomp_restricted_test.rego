package stockade.pod.seccomp_restricted_test

import data.stockade.pod.seccomp_restricted
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := seccomp_restricted.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

sc(type) := {"seccompProfile": {"type": type}}

test_pod_level_covers_containers if {
	spec := {"securityContext": sc("RuntimeDefault"), "initContainers": [{"name": "i"}], "containers": [{"name": "a"}], "ephemeralContainers": [{"name": "e"}]}
	paths(pod(spec)) == set()
}

test_container_level_everywhere_allowed if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": sc("Localhost")}],
		"containers": [{"name": "a", "securityContext": sc("RuntimeDefault")}],
		"ephemeralContainers": [{"name": "e", "securityContext": sc("RuntimeDefault")}],
	}
	paths(pod(spec)) == set()
}

test_unset_denied_per_container if {
	spec := {"initContainers": [{"name": "i"}], "containers": [{"name": "a", "securityContext": sc("RuntimeDefault")}, {"name": "b"}], "ephemeralContainers": [{"name": "e"}]}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "seccompProfile", "type"],
		["spec", "containers", 1, "securityContext", "seccompProfile", "type"],
		["spec", "ephemeralContainers", 0, "securityContext", "seccompProfile", "type"],
	}
}

test_container_unconfined_denied_despite_valid_pod if {
	spec := {"securityContext": sc("RuntimeDefault"), "containers": [{"name": "a", "securityContext": sc("Unconfined")}]}
	some v in deny(pod(spec))
	v.path == ["spec", "containers", 0, "securityContext", "seccompProfile", "type"]
	contains(v.msg, "Unconfined")
}

test_pod_unconfined_denied_and_does_not_cover_containers if {
	spec := {"securityContext": sc("Unconfined"), "containers": [{"name": "a"}, {"name": "b", "securityContext": sc("RuntimeDefault")}]}
	paths(pod(spec)) == {
		["spec", "securityContext", "seccompProfile", "type"],
		["spec", "containers", 0, "securityContext", "seccompProfile", "type"],
	}
}

test_windows_exempt if {
	paths(pod({"os": {"name": "windows"}, "containers": [{"name": "a"}]})) == set()
}

test_baseline_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a"}]}, "baseline")) == set()
}
