# METADATA
# title: Workload identity pod on an AKS cluster without workload identity
# description: >-
#   Cross-layer (both the Azure layer and the manifests read): a pod labelled
#   azure.workload.identity/use "true" gets a federated token only when its AKS cluster publishes an
#   OIDC issuer (properties.oidcIssuerProfile.enabled) and runs the workload identity webhook
#   (properties.securityProfile.workloadIdentity.enabled). Without them the pod has no Azure identity:
#   the webhook injects nothing and Entra ID trusts no token of the cluster, and such workloads tend to
#   be "fixed" with account keys or client secrets. Nothing when only one layer was read.
# custom:
#   id: STK-AZ-036
#   severity: medium
#   kinds: ["@workloads"]
#   triggers: ['"azure"']
#   frameworks: [workload-identity, aks-baseline]
#   remediation: az aks update --enable-oidc-issuer --enable-workload-identity (then federate the identity with the new issuer URL).
package stockade.azure.xlayer_workload_identity

import data.stockade.lib.aks
import data.stockade.lib.pods
import rego.v1

label := "azure.workload.identity/use"

missing contains aks.shown("properties.oidcIssuerProfile.enabled", aks.cluster.oidcIssuer) if {
	aks.cluster.oidcIssuer != true
}

missing contains aks.shown("properties.securityProfile.workloadIdentity.enabled", aks.cluster.workloadIdentity) if {
	aks.cluster.workloadIdentity != true
}

deny contains v if {
	object.get(input.pod.metadata, ["labels", label], "") == "true"
	count(missing) > 0
	v := {
		"msg": sprintf(
			"the pod uses workload identity (%s: \"true\") but AKS cluster %s has %s: no federated token is projected, so the pod has no Azure identity",
			[label, aks.name, concat(", ", sort(missing))],
		),
		"path": pods.metadata_path(["labels", label]),
		"details": {"cluster": aks.name, "fields": sort(missing)},
	}
}
