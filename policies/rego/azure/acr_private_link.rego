# METADATA
# title: Container registry without an approved private endpoint
# description: >-
#   The container registry must have at least one private endpoint connection in the Approved state, so that
#   clusters and pipelines reach it over Private Link. Connections come from input.facts.privateLink:
#   the resource's own privateEndpointConnections (live, Resource Graph: they carry the approval
#   state), else the private endpoints declared beside it in the same template or plan. REST
#   properties of Microsoft.ContainerRegistry/registries, api-version 2023-07-01.
# custom:
#   id: STK-AZ-021
#   severity: high
#   kinds: [Microsoft.ContainerRegistry/registries]
#   frameworks: [azure-policy-e8eef0a8-67cf-4eb4-9386-14b0e78733d4, private-link-acr]
#   remediation: >-
#     Create a private endpoint in the cluster VNet (az network private-endpoint create --group-id registry ... (Premium SKU)) and approve its connection; link the
#     privatelink DNS zone to that VNet.
package stockade.azure.acr_private_link

import data.stockade.lib.arm
import rego.v1

statuses := object.get(input, ["facts", "privateLink", "statuses"], [])

deny contains v if {
	not "Approved" in statuses
	v := {
		"msg": sprintf("container registry has no Approved private endpoint (%s)", [arm.endpoint_text(statuses)]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"groupId": "registry", "statuses": statuses},
	}
}
