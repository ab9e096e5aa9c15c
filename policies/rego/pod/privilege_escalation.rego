# METADATA
# title: Privilege escalation
# description: >-
#   Pod Security Standards (restricted), mirroring Pod Security Admission check
#   "allowPrivilegeEscalation" (check_allowPrivilegeEscalation.go, policy version v1.25+).
#   securityContext.allowPrivilegeEscalation must be explicitly false on every container, init
#   container and ephemeral container (unset counts as allowed). Windows pods (spec.os.name windows)
#   are exempt since v1.25.
# custom:
#   id: STK-POD-102
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [pss-restricted, CIS-5.2.6, NSA-CISA]
#   remediation: Set securityContext.allowPrivilegeEscalation to false on every container.
package stockade.pod.privilege_escalation

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	pods.restricted
	not pods.windows
	some entry in pods.containers
	not entry.container.securityContext.allowPrivilegeEscalation == false
	v := {
		"msg": sprintf("container %q must set securityContext.allowPrivilegeEscalation=false%s", [pods.container_name(entry.container), current(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "allowPrivilegeEscalation"]),
	}
}

current(c) := sprintf(" (it is %v)", [c.securityContext.allowPrivilegeEscalation]) if {
	pods.is_set(c.securityContext, "allowPrivilegeEscalation")
} else := " (it is unset)"
