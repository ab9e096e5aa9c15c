# METADATA
# title: Host namespaces
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "hostNamespaces"
#   (check_hostNamespaces.go). Sharing the host's network, PID or IPC namespace must be disallowed:
#   spec.hostNetwork, spec.hostPID and spec.hostIPC must be unset or false.
# custom:
#   id: STK-POD-002
#   severity: critical
#   kinds: ["@workloads"]
#   triggers: ['"hostNetwork"', '"hostPID"', '"hostIPC"']
#   frameworks: [pss-baseline, CIS-5.2.3, CIS-5.2.4, CIS-5.2.5, NSA-CISA]
#   remediation: Remove spec.hostNetwork, spec.hostPID and spec.hostIPC or set them to false.
package stockade.pod.host_namespaces

import data.stockade.lib.pods
import rego.v1

host_namespace_fields := ["hostNetwork", "hostPID", "hostIPC"]

deny contains v if {
	pods.baseline
	some field in host_namespace_fields
	input.pod.spec[field] == true
	v := {
		"msg": sprintf("pod sets %s=true", [field]),
		"path": pods.spec_path([field]),
	}
}
