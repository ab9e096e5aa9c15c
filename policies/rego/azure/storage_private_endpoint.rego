# METADATA
# title: Storage sub-resource without an approved private endpoint
# description: >-
#   Every sub-resource of a storage account that is in use must have at least one private endpoint
#   connection in the Approved state, so that clusters reach it over Private Link. In use: the
#   configured storage.required_subresources (blob; file for FileStorage accounts), dfs when the
#   account has a hierarchical namespace, and any sub-resource an endpoint already targets. Endpoints
#   come from input.facts.storage (the private endpoints of the same subscription, export, template or
#   plan; the account's own connection list decides the approval state).
# custom:
#   id: STK-AZ-005
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage]
#   remediation: >-
#     Create a private endpoint for the sub-resource in the cluster VNet (az network private-endpoint
#     create --group-id blob ...) and approve its connection on the storage account.
package stockade.azure.storage_private_endpoint

import data.stockade.lib.arm
import rego.v1

endpoints := object.get(input.facts, ["storage", "privateEndpoints"], {})

deny contains v if {
	some group in arm.required_subresources
	statuses := object.get(endpoints, group, [])
	not "Approved" in statuses
	v := {
		"msg": sprintf("storage account has no Approved private endpoint for %s (%s)", [group, arm.endpoint_text(statuses)]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"subresource": group, "statuses": statuses},
	}
}
