# METADATA
# title: Host field in probes and lifecycle hooks
# description: >-
#   Pod Security Standards (baseline, v1.34+), mirroring Pod Security Admission check
#   "hostProbesAndHostLifecycle" (check_hostProbesAndhostLifecycle.go, KEP-4940). The kubelet sends
#   probe and lifecycle-hook requests from the node, so a host field lets a pod make the node reach
#   arbitrary addresses (SSRF). httpGet.host and tcpSocket.host of livenessProbe, readinessProbe,
#   startupProbe and lifecycle.postStart / preStop must be unset or "" on every container, init
#   container and ephemeral container. No address is exempt (127.0.0.1 included).
# custom:
#   id: STK-POD-012
#   severity: medium
#   kinds: ["@workloads"]
#   triggers: ['"host"']
#   frameworks: [pss-baseline]
#   remediation: >-
#     Remove the host field so the kubelet probes the pod's own IP; use httpHeaders with a Host header
#     to select a virtual host.
package stockade.pod.probe_host

import data.stockade.lib.pods
import rego.v1

# Where a probe or lifecycle handler may name a host, relative to the container: every probe and
# lifecycle hook with each handler type that has a `host` field. A constant list, so the VM walks
# containers x 10 paths instead of building a set of (container, handler) objects first.
host_paths := [
	["livenessProbe", "httpGet", "host"],
	["livenessProbe", "tcpSocket", "host"],
	["readinessProbe", "httpGet", "host"],
	["readinessProbe", "tcpSocket", "host"],
	["startupProbe", "httpGet", "host"],
	["startupProbe", "tcpSocket", "host"],
	["lifecycle", "postStart", "httpGet", "host"],
	["lifecycle", "postStart", "tcpSocket", "host"],
	["lifecycle", "preStop", "httpGet", "host"],
	["lifecycle", "preStop", "tcpSocket", "host"],
]

deny contains v if {
	pods.baseline
	some entry in pods.containers
	some rel in host_paths
	host := object.get(entry.container, rel, null)
	host != null
	host != ""
	v := {
		"msg": sprintf("container %q sets %s to %v", [pods.container_name(entry.container), concat(".", rel), host]),
		"path": array.concat(entry.path, rel),
		"details": {"host": host},
	}
}
