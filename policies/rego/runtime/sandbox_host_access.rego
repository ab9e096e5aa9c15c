# METADATA
# title: Sandboxed pod with host access
# description: >-
#   A sandbox only isolates what stays inside it. Pods that are high-risk or run in a sandbox class
#   (approved, named like a sandbox, or whose handler is a sandbox runtime) must not share the host's
#   network, PID or IPC namespace (spec.hostNetwork, hostPID, hostIPC), run privileged containers
#   (securityContext.privileged in any container, init and ephemeral included), mount hostPath volumes
#   or bind host ports (ports[].hostPort other than 0). gVisor and Kata pass these through to the host,
#   so each one reopens the path to the host kernel, devices or files the sandbox exists to close. This
#   applies whatever the namespace's Pod Security level is.
# custom:
#   id: STK-RT-004
#   severity: critical
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, NIST-800-190, sandbox-best-practice]
#   remediation: >-
#     Remove hostNetwork, hostPID, hostIPC, privileged, hostPath volumes and hostPort from the sandboxed
#     workload; give it data through configMap, emptyDir, persistentVolumeClaim or CSI volumes and
#     expose it through a Service.
package stockade.runtime.sandbox_host_access

import data.stockade.lib.pods
import data.stockade.lib.sandbox
import rego.v1

host_namespace_fields := ["hostNetwork", "hostPID", "hostIPC"]

# [what, path]
host_access contains [sprintf("%s=true", [field]), pods.spec_path([field])] if {
	some field in host_namespace_fields
	input.pod.spec[field] == true
}

host_access contains [sprintf("privileged container %q", [pods.container_name(e.container)]), path] if {
	some e in pods.containers
	e.container.securityContext.privileged == true
	path := array.concat(e.path, ["securityContext", "privileged"])
}

host_access contains [sprintf("hostPath volume %q (%s)", [object.get(vol, "name", ""), path_text(vol)]), path] if {
	some i, vol in input.pod.spec.volumes
	is_object(vol.hostPath)
	path := pods.spec_path(["volumes", i, "hostPath"])
}

host_access contains [sprintf("hostPort %v in container %q", [port.hostPort, pods.container_name(e.container)]), path] if {
	some e in pods.containers
	some j, port in e.container.ports
	is_number(port.hostPort)
	port.hostPort != 0
	path := array.concat(e.path, ["ports", j, "hostPort"])
}

path_text(vol) := vol.hostPath.path if is_string(vol.hostPath.path)

else := "no path"

deny contains v if {
	sandbox.sandbox_pod
	some access in host_access
	v := {
		"msg": sprintf("pod (%s) has host access: %s", [sandbox.sandbox_reason, access[0]]),
		"path": access[1],
		"details": {"access": access[0]},
	}
}
