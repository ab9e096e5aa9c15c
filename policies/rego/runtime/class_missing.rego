# METADATA
# title: Sandbox RuntimeClass does not exist
# description: >-
#   A workload that is high-risk or names a sandbox class (approved by the profile, or named like one,
#   sandbox.class_patterns) must name a RuntimeClass that exists in the cluster; otherwise its pods are
#   rejected (bare Pods) or never created (controllers), and a later class of that name decides how they
#   are isolated. Existence comes from input.facts.runtimeClass: the webhook's cache and the audit know
#   the cluster's classes; a scan reports a class as missing only when told the manifests are the whole
#   cluster, never merely because the class is not in the scanned files.
# custom:
#   id: STK-RT-002
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, sandbox-best-practice]
#   remediation: >-
#     Use a RuntimeClass the cluster has (kubectl get runtimeclass), or install it: on AKS add a node
#     pool with --workload-runtime KataVmIsolation; on bare metal install gVisor (runsc) and its class.
package stockade.runtime.class_missing

import data.stockade.lib.pods
import data.stockade.lib.sandbox
import rego.v1

relevant if sandbox.high_risk

relevant if sandbox.claims_sandbox(sandbox.pod_class)

deny contains v if {
	sandbox.rc.exists == false
	sandbox.rc.name == sandbox.pod_class
	relevant
	v := {
		"msg": sprintf("RuntimeClass %q does not exist in the cluster (%s)", [sandbox.pod_class, sandbox.sandbox_reason]),
		"path": pods.spec_path(["runtimeClassName"]),
		"details": {"runtimeClassName": sandbox.pod_class, "profile": sandbox.profile_name},
	}
}
