# METADATA
# title: AppArmor profile
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "appArmorProfile"
#   (check_appArmorProfile.go). Overriding or disabling the default AppArmor profile is forbidden.
#   The securityContext.appArmorProfile.type of the pod and of every container, init container and
#   ephemeral container must be RuntimeDefault or Localhost when set (each level is checked on its
#   own: a valid container profile does not excuse an Unconfined pod profile). The deprecated
#   annotations container.apparmor.security.beta.kubernetes.io/* are still checked: their value must
#   be empty, runtime/default or localhost/<profile>.
# custom:
#   id: STK-POD-007
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"appArmorProfile"', 'apparmor']
#   frameworks: [pss-baseline, NSA-CISA]
#   remediation: >-
#     Set securityContext.appArmorProfile.type to RuntimeDefault or Localhost (or leave it unset), and
#     drop unconfined container.apparmor.security.beta.kubernetes.io/* annotations.
package stockade.pod.apparmor

import data.stockade.lib.pods
import rego.v1

allowed_types := {"RuntimeDefault", "Localhost"}

annotation_prefix := "container.apparmor.security.beta.kubernetes.io/"

profile_type(profile) := t if {
	t := profile.type
	t != null
} else := ""

allowed_annotation_value(value) if value == ""

allowed_annotation_value(value) if value == "runtime/default"

allowed_annotation_value(value) if startswith(value, "localhost/")

deny contains v if {
	pods.baseline
	pods.is_set(input.pod.spec.securityContext, "appArmorProfile")
	t := profile_type(input.pod.spec.securityContext.appArmorProfile)
	not t in allowed_types
	v := {
		"msg": sprintf("pod sets securityContext.appArmorProfile.type to %q", [t]),
		"path": pods.spec_path(["securityContext", "appArmorProfile", "type"]),
	}
}

deny contains v if {
	pods.baseline
	some entry in pods.containers
	pods.is_set(entry.container.securityContext, "appArmorProfile")
	t := profile_type(entry.container.securityContext.appArmorProfile)
	not t in allowed_types
	v := {
		"msg": sprintf("container %q sets securityContext.appArmorProfile.type to %q", [pods.container_name(entry.container), t]),
		"path": array.concat(entry.path, ["securityContext", "appArmorProfile", "type"]),
	}
}

deny contains v if {
	pods.baseline
	some key, value in input.pod.metadata.annotations
	startswith(key, annotation_prefix)
	not allowed_annotation_value(value)
	v := {
		"msg": sprintf("annotation %s sets AppArmor profile %v", [key, value]),
		"path": pods.metadata_path(["annotations", key]),
	}
}
