# METADATA
# title: AKS cluster without Defender for Containers
# description: >-
#   securityProfile.defender.securityMonitoring.enabled must be true: the Defender sensor reports
#   runtime threats on nodes and workloads (cryptominers on GPU nodes, exfiltration of model weights).
#   REST property of Microsoft.ContainerService/managedClusters, api-version 2024-02-01.
# custom:
#   id: STK-AZ-030
#   severity: medium
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline, azure-policy-a1840de2-8088-4ea8-b153-b4c723e9cb01, MCSB-LT-1]
#   remediation: az aks update --enable-defender (with a Log Analytics workspace for its data).
package stockade.azure.aks_defender

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["securityProfile", "defender", "securityMonitoring", "enabled"], false) != true
	v := {
		"msg": "Defender for Containers is not enabled (securityProfile.defender.securityMonitoring.enabled is not true)",
		"path": arm.path(["securityProfile", "defender"]),
		"details": {},
	}
}
