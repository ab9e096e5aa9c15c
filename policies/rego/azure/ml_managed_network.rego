# METADATA
# title: Azure Machine Learning workspace without approved-outbound-only managed network
# description: >-
#   The workspace's managed virtual network must isolate its computes and online endpoints with
#   managedNetwork.isolationMode AllowOnlyApprovedOutbound: with Disabled (unset) the computes use
#   no managed network, with AllowInternetOutbound they can send training data and weights anywhere.
#   REST property of Microsoft.MachineLearningServices/workspaces, api-version 2024-04-01.
#   A project (kind Project) is reached through its hub: the hub is judged.
# custom:
#   id: STK-AZ-025
#   severity: high
#   kinds: [Microsoft.MachineLearningServices/workspaces]
#   frameworks: [azure-policy-6ddb1705-c8cf-450e-aa4b-19ad6703c440, MCSB-NS-1]
#   remediation: >-
#     az ml workspace update --managed-network allow_only_approved_outbound (then add the outbound
#     rules the jobs need; the mode cannot be relaxed afterwards).
package stockade.azure.ml_managed_network

import data.stockade.lib.arm
import rego.v1

mode := arm.prop(["managedNetwork", "isolationMode"], "Disabled")

deny contains v if {
	not arm.hub_project
	lower(mode) != "allowonlyapprovedoutbound"
	v := {
		"msg": sprintf("machine learning workspace's managed network is not limited to approved outbound (isolationMode %s)", [mode]),
		"path": arm.path(["managedNetwork", "isolationMode"]),
		"details": {"isolationMode": mode},
	}
}
