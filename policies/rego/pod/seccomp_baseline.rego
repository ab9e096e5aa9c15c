# METADATA
# title: Seccomp profile (baseline)
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "seccompProfile_baseline"
#   (check_seccompProfile_baseline.go, policy version v1.19+). Seccomp must not be disabled: when
#   securityContext.seccompProfile is set on the pod or on any container, init container or ephemeral
#   container, its type must be RuntimeDefault or Localhost (Unconfined is forbidden). Under
#   restricted, PSA replaces this check by seccompProfile_restricted (STK-POD-105), so this rule
#   applies at the baseline level only. The seccomp annotations only mattered for policy versions before v1.19.
# custom:
#   id: STK-POD-010
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [pss-baseline, CIS-5.7.2, NSA-CISA]
#   remediation: Set securityContext.seccompProfile.type to RuntimeDefault or Localhost, or leave it unset.
package stockade.pod.seccomp_baseline

import data.stockade.lib.pods
import rego.v1

allowed_types := {"RuntimeDefault", "Localhost"}

# Under restricted, PSA replaces this check by seccompProfile_restricted (STK-POD-105) (OverrideCheckIDs in the PSA
# registry): the restricted profile reports that check, not this one, for the same field.
applies if {
	pods.baseline
	not pods.restricted
}

profile_type(profile) := t if {
	t := profile.type
	t != null
} else := ""

deny contains v if {
	applies
	pods.is_set(input.pod.spec.securityContext, "seccompProfile")
	t := profile_type(input.pod.spec.securityContext.seccompProfile)
	not t in allowed_types
	v := {
		"msg": sprintf("pod sets securityContext.seccompProfile.type to %q", [t]),
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
		"msg": sprintf("container %q sets securityContext.seccompProfile.type to %q", [pods.container_name(entry.container), t]),
		"path": array.concat(entry.path, ["securityContext", "seccompProfile", "type"]),
	}
}
