# METADATA
# title: Azure Machine Learning workspace reachable from public networks
# description: >-
#   A workspace that holds datasets, models and endpoints must have publicNetworkAccess Disabled, so
#   that only private endpoints reach it. Unset means Enabled (as the built-in policy counts it).
#   REST property of Microsoft.MachineLearningServices/workspaces, api-version 2024-04-01.
#   A project (kind Project) is reached through its hub: the hub is judged.
# custom:
#   id: STK-AZ-024
#   severity: high
#   kinds: [Microsoft.MachineLearningServices/workspaces]
#   frameworks: [azure-policy-438c38d2-3772-465a-a9cc-7a6666a275ce, private-link-ml, MCSB-NS-2]
#   remediation: >-
#     az ml workspace update --public-network-access Disabled, after creating a private endpoint
#     (group id amlworkspace) in the cluster VNet.
package stockade.azure.ml_public_network

import data.stockade.lib.arm
import rego.v1

access := arm.prop(["publicNetworkAccess"], "Enabled")

deny contains v if {
	not arm.hub_project
	lower(access) != "disabled"
	v := {
		"msg": sprintf("machine learning workspace allows public network access (publicNetworkAccess %s)", [access]),
		"path": arm.path(["publicNetworkAccess"]),
		"details": {"publicNetworkAccess": access},
	}
}
