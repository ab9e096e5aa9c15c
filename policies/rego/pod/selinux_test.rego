package stockade.pod.selinux_test

import data.stockade.pod.selinux
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := selinux.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

se(opts) := {"seLinuxOptions": opts}

test_allowed_types if {
	spec := {
		"securityContext": se({"level": "s0:c123,c456"}),
		"initContainers": [{"name": "i", "securityContext": se({"type": "container_init_t"})}],
		"containers": [
			{"name": "a", "securityContext": se({"type": "container_t"})},
			{"name": "b", "securityContext": se({"type": "container_kvm_t", "level": "s0"})},
			{"name": "c", "securityContext": se({"type": ""})},
			{"name": "d"},
		],
	}
	paths(pod(spec)) == set()
}

# container_engine_t was added to the allowed types in policy version v1.31.
test_container_engine_t_allowed if {
	spec := {"securityContext": se({"type": "container_engine_t"}), "containers": [{"name": "a", "securityContext": se({"type": "container_engine_t"})}]}
	paths(at_level(spec, "baseline")) == set()
}

test_pod_type_denied if {
	some v in deny(pod({"securityContext": se({"type": "spc_t"}), "containers": [{"name": "a"}]}))
	v.path == ["spec", "securityContext", "seLinuxOptions", "type"]
	contains(v.msg, "spc_t")
}

test_container_types_denied_in_every_list if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": se({"type": "unconfined_t"})}],
		"containers": [{"name": "a", "securityContext": se({"type": "spc_t"})}],
		"ephemeralContainers": [{"name": "e", "securityContext": se({"type": "foo_t"})}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "seLinuxOptions", "type"],
		["spec", "containers", 0, "securityContext", "seLinuxOptions", "type"],
		["spec", "ephemeralContainers", 0, "securityContext", "seLinuxOptions", "type"],
	}
}

test_user_and_role_denied if {
	spec := {
		"securityContext": se({"user": "system_u"}),
		"containers": [{"name": "a", "securityContext": se({"type": "container_t", "role": "object_r", "user": "u"})}],
	}
	paths(pod(spec)) == {
		["spec", "securityContext", "seLinuxOptions", "user"],
		["spec", "containers", 0, "securityContext", "seLinuxOptions", "role"],
		["spec", "containers", 0, "securityContext", "seLinuxOptions", "user"],
	}
}

test_empty_user_and_role_allowed if {
	paths(pod({"containers": [{"name": "a", "securityContext": se({"user": "", "role": ""})}]})) == set()
}

test_privileged_namespace_allowed if {
	paths(at_level({"securityContext": se({"type": "spc_t"}), "containers": [{"name": "a"}]}, "privileged")) == set()
}
