# METADATA
# title: SELinux options
# description: >-
#   Pod Security Standards (baseline), mirroring Pod Security Admission check "seLinuxOptions"
#   (check_seLinuxOptions.go, policy version v1.31+). seLinuxOptions.type of the pod and of every
#   container, init container and ephemeral container must be empty, container_t, container_init_t,
#   container_kvm_t or container_engine_t (added in v1.31); seLinuxOptions.user and .role must be
#   empty. seLinuxOptions.level is not restricted.
# custom:
#   id: STK-POD-008
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"seLinuxOptions"']
#   frameworks: [pss-baseline, NSA-CISA]
#   remediation: >-
#     Remove seLinuxOptions.user and .role, and use one of the container SELinux types (or leave the
#     type unset so the runtime assigns container_t).
package stockade.pod.selinux

import data.stockade.lib.pods
import rego.v1

allowed_types := {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

# Every seLinuxOptions block of the pod: who set it and where it is.
options contains {"who": "pod", "opts": opts, "path": pods.spec_path(["securityContext", "seLinuxOptions"])} if {
	pods.is_set(input.pod.spec.securityContext, "seLinuxOptions")
	opts := input.pod.spec.securityContext.seLinuxOptions
}

options contains {"who": sprintf("container %q", [pods.container_name(entry.container)]), "opts": opts, "path": path} if {
	some entry in pods.containers
	pods.is_set(entry.container.securityContext, "seLinuxOptions")
	opts := entry.container.securityContext.seLinuxOptions
	path := array.concat(entry.path, ["securityContext", "seLinuxOptions"])
}

value(opts, key) := s if {
	s := opts[key]
	s != null
} else := ""

deny contains v if {
	pods.baseline
	some o in options
	t := value(o.opts, "type")
	not t in allowed_types
	v := {
		"msg": sprintf("%s sets forbidden seLinuxOptions.type %q", [o.who, t]),
		"path": array.concat(o.path, ["type"]),
	}
}

deny contains v if {
	pods.baseline
	some o in options
	some key in ["user", "role"]
	s := value(o.opts, key)
	s != ""
	v := {
		"msg": sprintf("%s sets seLinuxOptions.%s %q, which may not be set", [o.who, key, s]),
		"path": array.concat(o.path, [key]),
	}
}
