# METADATA
# title: Capabilities (restricted)
# description: >-
#   Pod Security Standards (restricted), mirroring Pod Security Admission check
#   "capabilities_restricted" (check_capabilities_restricted.go, policy version v1.25+). Every
#   container, init container and ephemeral container must drop ALL capabilities
#   (securityContext.capabilities.drop contains "ALL") and may add only NET_BIND_SERVICE. Windows pods
#   (spec.os.name windows) are exempt since v1.25.
# custom:
#   id: STK-POD-106
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [pss-restricted, CIS-5.2.8, CIS-5.2.9, CIS-5.2.10, NSA-CISA]
#   remediation: >-
#     Set securityContext.capabilities.drop to ["ALL"] on every container and add back at most
#     NET_BIND_SERVICE.
package stockade.pod.capabilities_restricted

import data.stockade.lib.pods
import rego.v1

applies if {
	pods.restricted
	not pods.windows
}

drops_all(c) if "ALL" in c.securityContext.capabilities.drop

deny contains v if {
	applies
	some entry in pods.containers
	not drops_all(entry.container)
	v := {
		"msg": sprintf("container %q must set securityContext.capabilities.drop=[\"ALL\"]", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "capabilities", "drop"]),
	}
}

deny contains v if {
	applies
	some entry in pods.containers
	some i, cap in entry.container.securityContext.capabilities.add
	cap != "NET_BIND_SERVICE"
	v := {
		"msg": sprintf("container %q must not add capability %v (only NET_BIND_SERVICE may be added)", [pods.container_name(entry.container), cap]),
		"path": array.concat(entry.path, ["securityContext", "capabilities", "add", i]),
		"details": {"capability": cap},
	}
}
