# METADATA
# title: Azure AI services / Azure OpenAI account without an approved private endpoint
# description: >-
#   The Azure AI services account must have at least one private endpoint connection in the Approved state, so that
#   clusters and pipelines reach it over Private Link. Connections come from input.facts.privateLink:
#   the resource's own privateEndpointConnections (live, Resource Graph: they carry the approval
#   state), else the private endpoints declared beside it in the same template or plan. REST
#   properties of Microsoft.CognitiveServices/accounts, api-version 2023-05-01.
# custom:
#   id: STK-AZ-029
#   severity: high
#   kinds: [Microsoft.CognitiveServices/accounts]
#   frameworks: [azure-policy-d6759c02-b87f-42b7-892e-71b3f471d782, private-link-ai]
#   remediation: >-
#     Create a private endpoint in the cluster VNet (az network private-endpoint create --group-id account ...) and approve its connection; link the
#     privatelink DNS zone to that VNet.
package stockade.azure.ai_private_link

import data.stockade.lib.arm
import rego.v1

statuses := object.get(input, ["facts", "privateLink", "statuses"], [])

deny contains v if {
	not "Approved" in statuses
	v := {
		"msg": sprintf("Azure AI services account has no Approved private endpoint (%s)", [arm.endpoint_text(statuses)]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"groupId": "account", "statuses": statuses},
	}
}
