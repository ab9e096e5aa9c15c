# METADATA
# title: AKS run command enabled
# description: >-
#   apiServerAccessProfile.disableRunCommand must be true: az aks command invoke runs arbitrary
#   kubectl commands in the cluster through the ARM API, so anyone with the Azure role reaches even
#   a private API server from the internet. Unset means enabled. REST property of
#   Microsoft.ContainerService/managedClusters, api-version 2024-02-01.
# custom:
#   id: STK-AZ-033
#   severity: medium
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline, azure-policy-89f2d532-c53c-4f8f-9afa-4927b1114a0d, MCSB-PA-7]
#   remediation: az aks command update --disable-run-command (or az aks update --disable-run-command).
package stockade.azure.aks_run_command

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["apiServerAccessProfile", "disableRunCommand"], false) != true
	v := {
		"msg": "run command (az aks command invoke) is enabled (apiServerAccessProfile.disableRunCommand is not true)",
		"path": arm.path(["apiServerAccessProfile", "disableRunCommand"]),
		"details": {},
	}
}
