# METADATA
# title: NetworkPolicy selects no pod
# description: >-
#   A NetworkPolicy whose podSelector matches no pod of its namespace protects nothing: a typo in a
#   label or a renamed app leaves the pods its author meant to isolate open, while the policy's
#   presence suggests otherwise. Decided where the inventory is complete (an audit, a synced webhook:
#   input.facts.networkPolicy.selectsPods) from the labels of the pods every workload and Pod of the
#   namespace runs; a scan does not see every workload and does not decide. A policy with an empty
#   podSelector (the namespace's default) selects every pod, present or future, and is never reported.
#   A warning by default: a policy applied before its workload selects nothing yet.
# custom:
#   id: STK-NET-010
#   severity: low
#   action: warn
#   kinds: [NetworkPolicy]
#   frameworks: [egress]
#   remediation: >-
#     Fix the podSelector to the labels the workload's pods carry (kubectl get pods --show-labels), or
#     delete the policy.
package stockade.egress.dangling_policy

import rego.v1

deny contains v if {
	input.facts.networkPolicy.selectsPods == false
	v := {
		"msg": sprintf("NetworkPolicy %q selects no pod in namespace %q: it isolates nothing", [object.get(input.object.metadata, "name", ""), object.get(input.object.metadata, "namespace", "default")]),
		"path": ["spec", "podSelector"],
		"details": {},
	}
}
