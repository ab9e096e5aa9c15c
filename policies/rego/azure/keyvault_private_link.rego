# METADATA
# title: Key Vault without an approved private endpoint
# description: >-
#   The key vault must have at least one private endpoint connection in the Approved state, so that
#   clusters and pipelines reach it over Private Link. Connections come from input.facts.privateLink:
#   the resource's own privateEndpointConnections (live, Resource Graph: they carry the approval
#   state), else the private endpoints declared beside it in the same template or plan. REST
#   properties of Microsoft.KeyVault/vaults, api-version 2023-07-01.
# custom:
#   id: STK-AZ-019
#   severity: high
#   kinds: [Microsoft.KeyVault/vaults]
#   frameworks: [azure-policy-a6abeaec-4d90-4a02-805f-6b26c4d3fbe9, private-link-keyvault]
#   remediation: >-
#     Create a private endpoint in the cluster VNet (az network private-endpoint create --group-id vault ...) and approve its connection; link the
#     privatelink DNS zone to that VNet.
package stockade.azure.keyvault_private_link

import data.stockade.lib.arm
import rego.v1

statuses := object.get(input, ["facts", "privateLink", "statuses"], [])

deny contains v if {
	not "Approved" in statuses
	v := {
		"msg": sprintf("key vault has no Approved private endpoint (%s)", [arm.endpoint_text(statuses)]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"groupId": "vault", "statuses": statuses},
	}
}
