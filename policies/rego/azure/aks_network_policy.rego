# METADATA
# title: AKS without a network policy engine
# description: >-
#   NetworkPolicies (and with them every egress allowlist stockade checks) are only enforced when the
#   cluster runs a network policy engine: networkProfile.networkPolicy azure, calico or cilium.
# custom:
#   id: STK-AZ-014
#   severity: high
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline]
#   remediation: az aks update --network-policy cilium (or azure / calico).
package stockade.azure.aks_network_policy

import data.stockade.lib.arm
import rego.v1

engine := arm.prop(["networkProfile", "networkPolicy"], "none")

# an empty value (what a Bicep conditional writes for "none") is shown as "", not as nothing
shown := engine if engine != ""

shown := `""` if engine == ""

deny contains v if {
	not lower(engine) in {"azure", "calico", "cilium"}
	v := {
		"msg": sprintf("no network policy engine (networkProfile.networkPolicy: %s): NetworkPolicies are not enforced", [shown]),
		"path": arm.path(["networkProfile", "networkPolicy"]),
		"details": {"networkPolicy": engine},
	}
}
