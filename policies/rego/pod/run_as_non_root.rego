# METADATA
# title: Running as non-root
# description: >-
#   Pod Security Standards (restricted), mirroring Pod Security Admission check "runAsNonRoot"
#   (check_runAsNonRoot.go, policy version v1.35+). securityContext.runAsNonRoot must be true. A
#   container that leaves it unset inherits the pod's value, so pod-level true covers it; an explicit
#   container value overrides the pod's. Setting runAsNonRoot=false anywhere (pod, container, init
#   container, ephemeral container) is rejected, even at pod level when every container sets true.
#   Since v1.35 pods in a user namespace (spec.hostUsers false) are exempt.
# custom:
#   id: STK-POD-103
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [pss-restricted, CIS-5.2.7, NSA-CISA]
#   remediation: >-
#     Set spec.securityContext.runAsNonRoot to true (and remove runAsNonRoot=false from containers), or
#     run the pod in a user namespace (spec.hostUsers false).
package stockade.pod.run_as_non_root

import data.stockade.lib.pods
import rego.v1

pod_sc := input.pod.spec.securityContext

pod_non_root if pod_sc.runAsNonRoot == true

applies if {
	pods.restricted
	not pods.user_namespace
}

deny contains v if {
	applies
	pod_sc.runAsNonRoot == false
	v := {
		"msg": "pod must not set securityContext.runAsNonRoot=false",
		"path": pods.spec_path(["securityContext", "runAsNonRoot"]),
	}
}

deny contains v if {
	applies
	some entry in pods.containers
	entry.container.securityContext.runAsNonRoot == false
	v := {
		"msg": sprintf("container %q must not set securityContext.runAsNonRoot=false", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "runAsNonRoot"]),
	}
}

deny contains v if {
	applies
	not pod_non_root
	some entry in pods.containers
	not pods.is_set(object.get(entry.container, "securityContext", null), "runAsNonRoot")
	v := {
		"msg": sprintf("pod or container %q must set securityContext.runAsNonRoot=true", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["securityContext", "runAsNonRoot"]),
	}
}
