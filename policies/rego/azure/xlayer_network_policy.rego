# METADATA
# title: Network policy not enforced by its AKS cluster
# description: >-
#   Cross-layer (both the Azure layer and the manifests read): a NetworkPolicy is enforced only when
#   its AKS cluster runs a network policy engine (properties.networkProfile.networkPolicy azure, calico
#   or cilium); Cilium's policies only with cilium, Calico's only with calico. On any other cluster
#   the policy's egress allowlists and default denies are accepted by the API server and enforced by
#   nothing, so every egress rule stockade checks passes on paper only. One finding per policy object;
#   nothing when only one layer was read (STK-AZ-014 judges the cluster alone).
# custom:
#   id: STK-AZ-035
#   severity: high
#   kinds: [NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy, GlobalNetworkPolicy]
#   frameworks: [aks-baseline]
#   remediation: >-
#     Enable the engine the policies are written for: az aks update --network-policy cilium (or azure /
#     calico); Cilium policies need --network-dataplane cilium, Calico's --network-policy calico.
package stockade.azure.xlayer_network_policy

import data.stockade.lib.aks
import rego.v1

engine := aks.cluster.networkPolicy

calico if startswith(object.get(input.object, "apiVersion", ""), "projectcalico.org/")

calico if startswith(object.get(input.object, "apiVersion", ""), "crd.projectcalico.org/")

# [what the policy is, the engines that enforce it]
flavour := ["Calico policy", {"calico"}] if {
	calico
} else := ["Cilium policy", {"cilium"}] if {
	startswith(input.object.kind, "Cilium")
} else := ["NetworkPolicy", {"azure", "calico", "cilium"}]

enforced if lower(engine) in flavour[1]

spec := object.get(input.object, "spec", {})

# the directions a networking.k8s.io NetworkPolicy constrains (policyTypes, else as the API server defaults them)
directions := concat(" and ", sort(spec.policyTypes)) if {
	is_array(spec.policyTypes)
	count(spec.policyTypes) > 0
} else := "Ingress and Egress" if {
	object.get(spec, "egress", null) != null
} else := "Ingress"

what := sprintf("its %s rules are", [directions]) if {
	flavour[0] == "NetworkPolicy"
} else := "its rules are"

# where the finding points: what the policy constrains (policyTypes), else its spec
path := ["spec", "policyTypes"] if is_array(spec.policyTypes) else := ["spec"]

deny contains v if {
	aks.cluster
	not enforced
	v := {
		"msg": sprintf(
			"%s %s is not enforced: AKS cluster %s has %s, so %s enforced by nothing (egress allowlists and default denies included); needs %s",
			[
				flavour[0], object.get(input.object.metadata, "name", ""), aks.name,
				aks.shown("properties.networkProfile.networkPolicy", engine), what,
				concat(" or ", sort(flavour[1])),
			],
		),
		"path": path,
		"details": {"cluster": aks.name, "networkPolicy": engine, "field": "properties.networkProfile.networkPolicy"},
	}
}
