# METADATA
# title: Privileged containers
# description: >-
#   Pod Security Standards (baseline): privileged pods disable most security mechanisms.
#   securityContext.privileged must be unset or false on every container, init container and
#   ephemeral container.
# custom:
#   id: STK-POD-003
#   severity: critical
#   kinds: ["@workloads"]
#   triggers: ['"privileged"']
#   frameworks: [pss-baseline, CIS-5.2.2, NSA-CISA]
#   remediation: Remove securityContext.privileged or set it to false.
package stockade.pod.privileged

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	pods.baseline
	some entry in pods.containers
	entry.container.securityContext.privileged == true
	v := {
		"msg": sprintf("container %q is privileged", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "privileged"]),
	}
}
