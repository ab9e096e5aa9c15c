package stockade.pod.sysctls_test

import data.stockade.pod.sysctls
import rego.v1

cfg := {"pss": {"default_level": "restricted"}}

pod(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}, "namespace": {"labels": {}}}

at_level(spec, level) := object.union(pod(spec), {"namespace": {"labels": {"pod-security.kubernetes.io/enforce": level}}})

deny(inp) := d if {
	d := sysctls.deny with input as inp with data.stockade.config as cfg
}

paths(inp) := {v.path | some v in deny(inp)}

with_sysctls(names) := {"securityContext": {"sysctls": [{"name": n, "value": "1"} | some n in names]}, "containers": [{"name": "a"}]}

test_safe_sysctls_allowed if {
	safe := [
		"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
		"net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
		"net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat",
	]
	paths(at_level(with_sysctls(safe), "baseline")) == set()
}

test_no_sysctls_allowed if {
	paths(pod({"securityContext": {}, "containers": [{"name": "a"}]})) == set()
}

test_unsafe_sysctl_denied if {
	some v in deny(pod(with_sysctls(["net.ipv4.tcp_syncookies", "kernel.msgmax"])))
	v.path == ["spec", "securityContext", "sysctls", 1, "name"]
	v.details.sysctl == "kernel.msgmax"
}

test_one_violation_per_sysctl if {
	paths(pod(with_sysctls(["vm.swappiness", "net.core.somaxconn"]))) == {
		["spec", "securityContext", "sysctls", 0, "name"],
		["spec", "securityContext", "sysctls", 1, "name"],
	}
}

# PSA compares names exactly: the slash-separated spelling of a safe sysctl is not in the set.
test_slash_spelling_denied if {
	count(paths(pod(with_sysctls(["net/ipv4/tcp_syncookies"])))) == 1
}

test_privileged_namespace_allowed if {
	paths(at_level(with_sysctls(["kernel.msgmax"]), "privileged")) == set()
}
