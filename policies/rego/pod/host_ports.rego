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
#   triggers: ['"hostPort"', '"hostNetwork"']
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

# The API server defaults hostPort to containerPort for every port of a hostNetwork Pod (containers
# and init containers; SetDefaults_Pod, pkg/apis/core/v1/defaults.go). Since Kubernetes 1.28 this no
# longer happens to pod templates (feature gate DefaultHostNetworkHostPortsInPodTemplates, off), so
# only bare Pods are affected. Admission sees the defaulted Pod, so a scan of the manifest must decide
# as if it were defaulted, or the two gates would disagree.
deny contains v if {
	pods.baseline
	input.pod.path == []
	input.pod.spec.hostNetwork == true
	some field in ["initContainers", "containers"]
	some c, container in input.pod.spec[field]
	some i, port in container.ports
	object.get(port, "hostPort", 0) in {0, null}
	object.get(port, "containerPort", 0) != 0
	v := {
		"msg": sprintf(
			"container %q: hostNetwork Pod gets hostPort %v (the API server defaults hostPort to containerPort)",
			[pods.container_name(container), port.containerPort],
		),
		"path": pods.spec_path([field, c, "ports", i]),
		"details": {"hostPort": port.containerPort, "defaulted": true},
	}
}
