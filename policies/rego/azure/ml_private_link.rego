# METADATA
# title: Azure Machine Learning workspace without an approved private endpoint
# description: >-
#   The machine learning workspace must have at least one private endpoint connection in the Approved state, so that
#   clusters and pipelines reach it over Private Link. Connections come from input.facts.privateLink:
#   the resource's own privateEndpointConnections (live, Resource Graph: they carry the approval
#   state), else the private endpoints declared beside it in the same template or plan. REST
#   properties of Microsoft.MachineLearningServices/workspaces, api-version 2024-04-01.
#   A project (kind Project) is reached through its hub: the hub is judged.
# custom:
#   id: STK-AZ-026
#   severity: high
#   kinds: [Microsoft.MachineLearningServices/workspaces]
#   frameworks: [azure-policy-45e05259-1eb5-4f70-9574-baf73e9d219b, private-link-ml]
#   remediation: >-
#     Create a private endpoint in the cluster VNet (az network private-endpoint create --group-id amlworkspace ...) and approve its connection; link the
#     privatelink DNS zone to that VNet.
package stockade.azure.ml_private_link

import data.stockade.lib.arm
import rego.v1

statuses := object.get(input, ["facts", "privateLink", "statuses"], [])

deny contains v if {
	not arm.hub_project
	not "Approved" in statuses
	v := {
		"msg": sprintf("machine learning workspace has no Approved private endpoint (%s)", [arm.endpoint_text(statuses)]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"groupId": "amlworkspace", "statuses": statuses},
	}
}
