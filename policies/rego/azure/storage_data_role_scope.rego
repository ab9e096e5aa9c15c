# METADATA
# title: Storage data-plane role granted above the storage account
# description: >-
#   Storage Blob Data Owner, Contributor and Reader (and the File, Queue and Table data roles) read or
#   write the data itself: training sets, checkpoints, model weights. Granted at a management group,
#   subscription or resource group scope they reach every storage account in it, today's and
#   tomorrow's, and private endpoints do not help: the identity is inside. Such roles belong on the
#   storage account or one container (properties.scope). A template's assignment without scope is
#   granted at the scope its deployment targets (a resource group or a subscription). The role is
#   recognised by its built-in role id (roleDefinitionId) or, from terraform, its name.
# custom:
#   id: STK-AZ-041
#   severity: high
#   kinds: [Microsoft.Authorization/roleAssignments]
#   frameworks: [private-link-storage, workload-identity]
#   remediation: >-
#     Assign the role on the storage account or container (az role assignment create --scope
#     /subscriptions/…/storageAccounts/ACCOUNT/blobServices/default/containers/NAME) and delete the
#     broad assignment.
package stockade.azure.storage_data_role_scope

import data.stockade.lib.arm
import rego.v1

# built-in role ids (the last segment of roleDefinitionId) -> names
roles := {
	"b7e6dc6d-f1e8-4753-8033-0f276bb0955b": "Storage Blob Data Owner",
	"ba92f5b4-2d11-453d-a403-e96b0029c9fe": "Storage Blob Data Contributor",
	"2a2b9908-6ea1-4ae2-8e65-a410df84e7d1": "Storage Blob Data Reader",
	"69566ab7-960f-475b-8e7c-b3118f30c6bd": "Storage File Data Privileged Contributor",
	"b8eda974-7b85-4f76-af95-65846b26df6d": "Storage File Data Privileged Reader",
	"0c867c2a-1d8c-454a-a3db-ab2ea1bdc8bb": "Storage File Data SMB Share Contributor",
	"974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor",
	"0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": "Storage Table Data Contributor",
}

role_id := lower(regex.replace(arm.prop(["roleDefinitionId"], ""), `^.*/`, "")) if is_string(arm.prop(["roleDefinitionId"], ""))

role := roles[role_id]

role := name if {
	name := arm.prop(["roleDefinitionName"], "")
	name in {n | some n in roles}
}

# properties.scope (live, terraform), else the template's scope property, else the deployment's
scope := arm.prop(["scope"], object.get(input.object, "scope", null))

ls := lower(scope) if is_string(scope)

broad := sprintf("the scope of its deployment (a resource group or subscription: no scope is set)", []) if {
	scope == null
} else := sprintf("%s (%s)", [kind, scope]) if {
	not arm.unknown(scope)
	kind := scope_kind
} else := sprintf("a scope %s", [trim_suffix(trim_prefix(scope, "[unknown: "), "]")]) if {
	arm.unknown(scope)
}

scope_kind := "a management group" if {
	contains(ls, "/providers/microsoft.management/managementgroups/")
} else := "the tenant root" if {
	ls == "/"
} else := "a resource group" if {
	regex.match(`^/subscriptions/[^/]+/resourcegroups/[^/]+/?$`, ls)
} else := "a subscription" if {
	regex.match(`^/subscriptions/[^/]+/?$`, ls)
}

deny contains v if {
	role
	broad
	v := {
		"msg": sprintf(
			"%s is granted at %s, so principal %v reaches the data of every storage account in it; grant it on the account or a container",
			[role, broad, arm.prop(["principalId"], "?")],
		),
		"path": arm.path(["scope"]),
		"details": {"role": role, "scope": scope, "principalId": arm.prop(["principalId"], null)},
	}
}
