# METADATA
# title: AKS without OIDC issuer and workload identity
# description: >-
#   Pods get Azure credentials through workload identity only when the cluster publishes an OIDC
#   issuer (oidcIssuerProfile.enabled) and runs the workload identity webhook
#   (securityProfile.workloadIdentity.enabled); without them teams fall back to account keys and
#   client secrets in Kubernetes Secrets.
# custom:
#   id: STK-AZ-013
#   severity: medium
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [workload-identity, aks-baseline]
#   remediation: az aks update --enable-oidc-issuer --enable-workload-identity
package stockade.azure.aks_workload_identity

import data.stockade.lib.arm
import rego.v1

missing contains sprintf("OIDC issuer (oidcIssuerProfile.enabled)%s", [arm.why(["oidcIssuerProfile", "enabled"])]) if arm.prop(["oidcIssuerProfile", "enabled"], false) != true

missing contains sprintf("workload identity (securityProfile.workloadIdentity.enabled)%s", [arm.why(["securityProfile", "workloadIdentity", "enabled"])]) if {
	arm.prop(["securityProfile", "workloadIdentity", "enabled"], false) != true
}

deny contains v if {
	count(missing) > 0
	v := {
		"msg": sprintf("workload identity is not available: missing %s", [concat(", ", sort(missing))]),
		"path": arm.path(["securityProfile"]),
		"details": {"missing": sort(missing)},
	}
}
