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
#   frameworks: [pss-baseline]
#   remediation: >-
#     Remove the host field so the kubelet probes the pod's own IP; use httpHeaders with a Host header
#     to select a virtual host.
package stockade.pod.probe_host

import data.stockade.lib.pods
import rego.v1

probes := ["livenessProbe", "readinessProbe", "startupProbe"]

hooks := ["postStart", "preStop"]

handlers := ["httpGet", "tcpSocket"]

# Every probe and lifecycle handler of every container: where it is, relative to the container.
handler_paths contains {"entry": entry, "rel": [probe, handler]} if {
	some entry in pods.containers
	some probe in probes
	some handler in handlers
	pods.is_set(entry.container[probe], handler)
}

handler_paths contains {"entry": entry, "rel": ["lifecycle", hook, handler]} if {
	some entry in pods.containers
	some hook in hooks
	some handler in handlers
	pods.is_set(entry.container.lifecycle[hook], handler)
}

deny contains v if {
	pods.baseline
	some h in handler_paths
	rel := array.concat(h.rel, ["host"])
	host := object.get(h.entry.container, rel, null)
	host != null
	host != ""
	v := {
		"msg": sprintf("container %q sets %s to %v", [pods.container_name(h.entry.container), concat(".", rel), host]),
		"path": array.concat(h.entry.path, rel),
		"details": {"host": host},
	}
}
