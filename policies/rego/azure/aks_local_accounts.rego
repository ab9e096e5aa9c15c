# METADATA
# title: AKS local accounts enabled
# description: >-
#   disableLocalAccounts must be true: the static clusterAdmin credential bypasses Entra ID, cannot be
#   tied to a person, and is only revoked by rotating the cluster certificates.
# custom:
#   id: STK-AZ-011
#   severity: high
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline]
#   remediation: az aks update --disable-local-accounts (Entra ID integration must be enabled first).
package stockade.azure.aks_local_accounts

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["disableLocalAccounts"], false) != true
	v := {
		"msg": sprintf("local accounts are enabled (disableLocalAccounts is not true)%s", [arm.why(["disableLocalAccounts"])]),
		"path": arm.path(["disableLocalAccounts"]),
		"details": {},
	}
}
