# METADATA
# title: AKS without Entra ID and Azure RBAC
# description: >-
#   Cluster access must be authenticated by Entra ID (managed aadProfile) and authorized by Azure RBAC
#   (aadProfile.enableAzureRBAC), with Kubernetes RBAC on (enableRBAC), so that access is granted and
#   revoked in one place and logged.
# custom:
#   id: STK-AZ-012
#   severity: high
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline]
#   remediation: az aks update --enable-aad --enable-azure-rbac
package stockade.azure.aks_entra_rbac

import data.stockade.lib.arm
import rego.v1

missing contains sprintf("Kubernetes RBAC (enableRBAC)%s", [arm.why(["enableRBAC"])]) if arm.prop(["enableRBAC"], true) != true

missing contains sprintf("Entra ID integration (aadProfile.managed)%s", [arm.why(["aadProfile", "managed"])]) if arm.prop(["aadProfile", "managed"], false) != true

missing contains sprintf("Azure RBAC (aadProfile.enableAzureRBAC)%s", [arm.why(["aadProfile", "enableAzureRBAC"])]) if arm.prop(["aadProfile", "enableAzureRBAC"], false) != true

deny contains v if {
	count(missing) > 0
	v := {
		"msg": sprintf("cluster access is not Entra ID + Azure RBAC: missing %s", [concat(", ", sort(missing))]),
		"path": arm.path(["aadProfile"]),
		"details": {"missing": sort(missing)},
	}
}
