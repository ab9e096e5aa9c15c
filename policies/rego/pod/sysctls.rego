# METADATA
# title: Unsafe sysctls
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "sysctls"
#   (check_sysctls.go, policy version v1.37). spec.securityContext.sysctls[*].name must be one of the
#   safe, namespaced sysctls: kernel.shm_rmid_forced, net.ipv4.ip_local_port_range,
#   net.ipv4.tcp_syncookies, net.ipv4.ping_group_range, net.ipv4.ip_unprivileged_port_start,
#   net.ipv4.ip_local_reserved_ports (v1.27), net.ipv4.tcp_keepalive_time, net.ipv4.tcp_fin_timeout,
#   net.ipv4.tcp_keepalive_intvl, net.ipv4.tcp_keepalive_probes (v1.29), net.ipv4.tcp_rmem,
#   net.ipv4.tcp_wmem (v1.32), net.ipv4.tcp_slow_start_after_idle, net.ipv4.tcp_notsent_lowat (v1.37).
#   Names are compared exactly, as PSA does (the slash-separated spelling is not normalised).
# custom:
#   id: STK-POD-011
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"sysctls"']
#   frameworks: [pss-baseline, NSA-CISA]
#   remediation: >-
#     Remove sysctls outside the safe set; tune node-level kernel parameters on the node pool instead.
package stockade.pod.sysctls

import data.stockade.lib.pods
import rego.v1

allowed_sysctls := {
	"kernel.shm_rmid_forced",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl",
	"net.ipv4.tcp_keepalive_probes",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_slow_start_after_idle",
	"net.ipv4.tcp_notsent_lowat",
}

sysctl_name(s) := n if {
	n := s.name
	n != null
} else := ""

deny contains v if {
	pods.baseline
	some i, sysctl in input.pod.spec.securityContext.sysctls
	name := sysctl_name(sysctl)
	not name in allowed_sysctls
	v := {
		"msg": sprintf("pod sets forbidden sysctl %q", [name]),
		"path": pods.spec_path(["securityContext", "sysctls", i, "name"]),
		"details": {"sysctl": name},
	}
}
