# METADATA
# title: /proc mount type
# description: >-
#   Pod Security Standards (baseline and restricted), mirroring Pod Security Admission checks
#   "procMount" (check_procMount_baseline.go) and "procMount_restricted"
#   (check_procMount_restricted.go). The default /proc masks must be kept: securityContext.procMount
#   of every container, init container and ephemeral container must be unset or Default. Since policy
#   version v1.35, baseline allows any value for pods in a user namespace (spec.hostUsers false);
#   restricted does not.
# custom:
#   id: STK-POD-009
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"procMount"']
#   frameworks: [pss-baseline, pss-restricted, NSA-CISA]
#   remediation: Remove securityContext.procMount or set it to Default.
package stockade.pod.proc_mount

import data.stockade.lib.pods
import rego.v1

applies if {
	pods.baseline
	not pods.user_namespace
}

applies if pods.restricted

deny contains v if {
	applies
	some entry in pods.containers
	pods.is_set(entry.container.securityContext, "procMount")
	entry.container.securityContext.procMount != "Default"
	v := {
		"msg": sprintf("container %q sets securityContext.procMount to %v", [pods.container_name(entry.container), entry.container.securityContext.procMount]),
		"path": array.concat(entry.path, ["securityContext", "procMount"]),
	}
}
