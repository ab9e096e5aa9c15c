# METADATA
# title: High-risk workload without a sandbox runtime class
# description: >-
#   Workloads that run untrusted code (third-party model evaluation, agent sandboxes, user-submitted
#   code) must not share the host kernel: they are selected by sandbox.selectors (namespace name globs,
#   namespace labels, labels of the workload or its pod template; by default the label
#   stockade.io/sandbox=required on the namespace or the workload), and must set
#   spec.runtimeClassName to a class the cluster's profile approves (sandbox.aks.classes: Kata
#   kata-vm-isolation / kata-mshv-vm-isolation; sandbox.baremetal.classes: gVisor and Kata). The
#   profile is that of the last sandbox.clusters entry matching the cluster, else
#   sandbox.profile (always in a scan). Whether the class exists and really is a sandbox is checked by
#   STK-RT-002 and STK-RT-003. A namespace selector needs the namespace's labels: in a scan they are
#   known only when the Namespace object is part of the scanned set.
# custom:
#   id: STK-RT-001
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, NIST-800-190, sandbox-best-practice]
#   remediation: >-
#     Set spec.runtimeClassName (in the pod template) to an approved sandbox class: gvisor (runsc) or a
#     Kata class on bare metal, kata-vm-isolation on AKS.
package stockade.runtime.sandbox_required

import data.stockade.lib.pods
import data.stockade.lib.sandbox
import rego.v1

# A helper rule, not `not sandbox.approved(sandbox.pod_class)`: with no runtimeClassName the argument
# is undefined, and OPA and regorus disagree on negating a call with an undefined argument (OPA: the
# expression is undefined; regorus: the negation holds). Here both agree: no class is not approved.
approved_class if sandbox.approved(sandbox.pod_class)

deny contains v if {
	sandbox.high_risk
	not approved_class
	v := {
		"msg": sprintf("high-risk workload (%s) %s; the %s profile approves: %s", [
			sandbox.high_risk_reason,
			problem,
			sandbox.profile_name,
			sandbox.approved_list,
		]),
		"path": pods.spec_path(["runtimeClassName"]),
		"details": {
			"profile": sandbox.profile_name,
			"runtimeClassName": object.get(input.pod.spec, "runtimeClassName", null),
			"approved": object.get(sandbox.profile, "classes", []),
		},
	}
}

problem := sprintf("runs in RuntimeClass %q, which is not an approved sandbox class", [sandbox.pod_class]) if {
	sandbox.pod_class
} else := "sets no runtimeClassName, so it runs on the host kernel"
