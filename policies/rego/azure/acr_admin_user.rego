# METADATA
# title: Container registry admin user enabled
# description: >-
#   adminUserEnabled must not be true: the admin user is one shared username and password with push
#   and pull on every repository, not tied to a person or workload, and survives role changes. Pull
#   with the cluster's managed identity (AcrPull) instead. Unset means false. REST property of
#   Microsoft.ContainerRegistry/registries, api-version 2023-07-01.
# custom:
#   id: STK-AZ-022
#   severity: high
#   kinds: [Microsoft.ContainerRegistry/registries]
#   frameworks: [azure-policy-dc921057-6b28-4fbe-9b83-f7bec05db6c2, MCSB-IM-1]
#   remediation: az acr update --admin-enabled false (attach the registry to AKS with az aks update --attach-acr first).
package stockade.azure.acr_admin_user

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["adminUserEnabled"], false) == true
	v := {
		"msg": "container registry has its admin user enabled (adminUserEnabled true)",
		"path": arm.path(["adminUserEnabled"]),
		"details": {},
	}
}

# A value known only at deployment is the worst case, and says so.
deny contains v if {
	arm.unknown(arm.prop(["adminUserEnabled"], false))
	v := {
		"msg": sprintf("container registry's admin user may be enabled: adminUserEnabled%s", [arm.why(["adminUserEnabled"])]),
		"path": arm.path(["adminUserEnabled"]),
		"details": {},
	}
}
