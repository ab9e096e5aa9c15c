# METADATA
# title: Running as root user
# description: >-
#   Pod Security Standards (restricted), mirroring Pod Security Admission check "runAsUser"
#   (check_runAsUser.go, policy version v1.35+). securityContext.runAsUser must not be 0 on the pod or
#   on any container, init container or ephemeral container (unset is allowed). Since v1.35 pods in a
#   user namespace (spec.hostUsers false) are exempt.
# custom:
#   id: STK-POD-104
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [pss-restricted, CIS-5.2.7, NSA-CISA]
#   remediation: Set runAsUser to a non-zero UID (or leave it unset and build the image with a non-root USER).
package stockade.pod.run_as_user

import data.stockade.lib.pods
import rego.v1

applies if {
	pods.restricted
	not pods.user_namespace
}

deny contains v if {
	applies
	input.pod.spec.securityContext.runAsUser == 0
	v := {
		"msg": "pod must not set securityContext.runAsUser=0",
		"path": pods.spec_path(["securityContext", "runAsUser"]),
	}
}

deny contains v if {
	applies
	some entry in pods.containers
	entry.container.securityContext.runAsUser == 0
	v := {
		"msg": sprintf("container %q must not set securityContext.runAsUser=0", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "runAsUser"]),
	}
}
