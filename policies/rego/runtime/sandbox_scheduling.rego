# METADATA
# title: Sandbox RuntimeClass not pinned to the sandbox node pool
# description: >-
#   A sandbox RuntimeClass (its handler is a sandbox runtime of the profile, or it is approved or named
#   like a sandbox) must send its pods to the nodes that have that runtime, and only there: its
#   scheduling.nodeSelector (which Kubernetes merges into every pod of the class) must hold every label
#   of one of sandbox.<profile>.node_selectors (AKS: kubernetes.azure.com/kata-vm-isolation=true or
#   kubernetes.azure.com/kata-mshv-vm-isolation=true, the labels of Kata node pools), or, when the
#   profile lists none (bare metal by default), be non-empty. Without it the pods land on any node,
#   where the handler is missing (they fail to start) or where they share nodes with trusted workloads.
# custom:
#   id: STK-RT-005
#   severity: medium
#   kinds: ["RuntimeClass"]
#   frameworks: [NSA-CISA, sandbox-best-practice]
#   remediation: >-
#     Add scheduling.nodeSelector with the sandbox pool's labels to the RuntimeClass (and
#     scheduling.tolerations for the pool's taint), or list your pool's labels in
#     sandbox.<profile>.node_selectors.
package stockade.runtime.sandbox_scheduling

import data.stockade.lib.sandbox
import rego.v1

pools := object.get(sandbox.profile, "node_selectors", [])

node_selector := s if {
	s := input.object.scheduling.nodeSelector
	is_object(s)
} else := {}

sandbox_class if sandbox.claims_sandbox(input.object.metadata.name)

sandbox_class if sandbox.sandbox_handler(input.object.handler)

pinned if {
	count(pools) == 0
	count(node_selector) > 0
}

pinned if {
	some pool in pools
	every key, value in pool {
		node_selector[key] == value
	}
}

wanted := "a non-empty scheduling.nodeSelector" if {
	count(pools) == 0
} else := concat(" or ", [concat(",", [sprintf("%s=%s", [k, v]) | some k, v in pool]) | some pool in pools])

deny contains v if {
	sandbox_class
	not pinned
	v := {
		"msg": sprintf("sandbox RuntimeClass %q does not pin its pods to the sandbox node pool: the %s profile needs %s", [
			input.object.metadata.name,
			sandbox.profile_name,
			wanted,
		]),
		"path": ["scheduling", "nodeSelector"],
		"details": {"profile": sandbox.profile_name, "node_selectors": pools},
	}
}
