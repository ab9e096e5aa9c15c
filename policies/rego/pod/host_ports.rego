# METADATA
# title: Host ports
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "hostPorts"
#   (check_hostPorts.go). HostPorts must be forbidden: ports[*].hostPort must be unset or 0 on every
#   container, init container and ephemeral container. PSA has no allowlist or port-range exception.
# custom:
#   id: STK-POD-006
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [pss-baseline, CIS-5.2.13, NSA-CISA]
#   remediation: Remove ports[*].hostPort (expose the workload through a Service instead).
package stockade.pod.host_ports

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	pods.baseline
	some entry in pods.containers
	some i, port in entry.container.ports
	port.hostPort != null
	port.hostPort != 0
	v := {
		"msg": sprintf("container %q uses hostPort %v", [pods.container_name(entry.container), port.hostPort]),
		"path": array.concat(entry.path, ["ports", i, "hostPort"]),
		"details": {"hostPort": port.hostPort},
	}
}
