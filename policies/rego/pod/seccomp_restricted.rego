# METADATA
# title: Seccomp profile required
# description: >-
#   Pod Security Standards (restricted), mirroring Pod Security Admission check
#   "seccompProfile_restricted" (check_seccompProfile_restricted.go, policy version v1.25+). Every
#   container, init container and ephemeral container must run with seccompProfile.type RuntimeDefault
#   or Localhost: set on the container, or inherited from a valid pod-level profile. An explicit
#   invalid value (Unconfined) is rejected wherever it is set, even when the other level is valid.
#   Windows pods (spec.os.name windows) are exempt since v1.25.
# custom:
#   id: STK-POD-105
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [pss-restricted, CIS-5.7.2, NSA-CISA]
#   remediation: Set spec.securityContext.seccompProfile.type to RuntimeDefault (or Localhost with a profile).
package stockade.pod.seccomp_restricted

import data.stockade.lib.pods
import rego.v1

allowed_types := {"RuntimeDefault", "Localhost"}

profile_type(profile) := t if {
	t := profile.type
	t != null
} else := ""

applies if {
	pods.restricted
	not pods.windows
}

pod_profile_set if pods.is_set(input.pod.spec.securityContext, "seccompProfile")

pod_profile_valid if {
	pod_profile_set
	profile_type(input.pod.spec.securityContext.seccompProfile) in allowed_types
}

deny contains v if {
	applies
	pod_profile_set
	not pod_profile_valid
	v := {
		"msg": sprintf("pod must not set securityContext.seccompProfile.type to %q", [profile_type(input.pod.spec.securityContext.seccompProfile)]),
		"path": pods.spec_path(["securityContext", "seccompProfile", "type"]),
	}
}

deny contains v if {
	applies
	some entry in pods.containers
	pods.is_set(entry.container.securityContext, "seccompProfile")
	t := profile_type(entry.container.securityContext.seccompProfile)
	not t in allowed_types
	v := {
		"msg": sprintf("container %q must not set securityContext.seccompProfile.type to %q", [pods.container_name(entry.container), t]),
		"path": array.concat(entry.path, ["securityContext", "seccompProfile", "type"]),
	}
}

deny contains v if {
	applies
	not pod_profile_valid
	some entry in pods.containers
	not pods.is_set(object.get(entry.container, "securityContext", null), "seccompProfile")
	v := {
		"msg": sprintf("pod or container %q must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "seccompProfile", "type"]),
	}
}
