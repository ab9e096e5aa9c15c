package stockade.pod.capabilities_baseline_test

import data.stockade.pod.capabilities_baseline
import rego.v1

# Evaluated at baseline: under restricted, capabilities_restricted (STK-POD-106) replaces this check.
cfg := {"pss": {"default_level": "baseline"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := capabilities_baseline.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

caps(add) := {"capabilities": {"add": add}}

test_no_capabilities_allowed if {
	paths(pod({"containers": [{"name": "a"}, {"name": "b", "securityContext": {"capabilities": {"drop": ["ALL"]}}}]})) == set()
}

test_default_set_allowed if {
	default_set := [
		"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
		"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
	]
	paths(at_level({"containers": [{"name": "a", "securityContext": caps(default_set)}]}, "baseline")) == set()
}

test_net_raw_denied if {
	some v in deny(pod({"containers": [{"name": "a", "securityContext": caps(["CHOWN", "NET_RAW"])}]}))
	v.path == ["spec", "containers", 0, "securityContext", "capabilities", "add", 1]
	v.details.capability == "NET_RAW"
	contains(v.msg, `"a"`)
}

test_one_violation_per_capability_and_container_list if {
	spec := {
		"initContainers": [{"name": "i", "securityContext": caps(["SYS_ADMIN"])}],
		"containers": [{"name": "a", "securityContext": caps(["NET_ADMIN", "SYS_PTRACE"])}],
		"ephemeralContainers": [{"name": "e", "securityContext": caps(["ALL"])}],
	}
	paths(pod(spec)) == {
		["spec", "initContainers", 0, "securityContext", "capabilities", "add", 0],
		["spec", "containers", 0, "securityContext", "capabilities", "add", 0],
		["spec", "containers", 0, "securityContext", "capabilities", "add", 1],
		["spec", "ephemeralContainers", 0, "securityContext", "capabilities", "add", 0],
	}
}

test_names_are_case_sensitive if {
	count(paths(pod({"containers": [{"name": "a", "securityContext": caps(["chown", "CAP_CHOWN"])}]}))) == 2
}

test_windows_pod_denied_at_baseline if {
	spec := {"os": {"name": "windows"}, "containers": [{"name": "a", "securityContext": caps(["SYS_ADMIN"])}]}
	count(paths(at_level(spec, "baseline"))) == 1
}

test_windows_pod_exempt_at_restricted if {
	spec := {"os": {"name": "windows"}, "containers": [{"name": "a", "securityContext": caps(["SYS_ADMIN"])}]}
	paths(at_level(spec, "restricted")) == set()
}

test_replaced_by_the_restricted_check_at_restricted if {
	spec := {"os": {"name": "linux"}, "containers": [{"name": "a", "securityContext": caps(["SYS_ADMIN"])}]}
	paths(at_level(spec, "restricted")) == set()
}

test_user_namespace_not_relaxed if {
	spec := {"hostUsers": false, "containers": [{"name": "a", "securityContext": caps(["SYS_ADMIN"])}]}
	count(paths(at_level(spec, "baseline"))) == 1
}

test_privileged_namespace_allowed if {
	paths(at_level({"containers": [{"name": "a", "securityContext": caps(["SYS_ADMIN"])}]}, "privileged")) == set()
}
