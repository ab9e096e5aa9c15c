package stockade.azure.storage_data_role_scope_test

import data.stockade.azure.storage_data_role_scope as rule
import rego.v1

contributor := "/subscriptions/s/providers/Microsoft.Authorization/roleDefinitions/ba92f5b4-2d11-453d-a403-e96b0029c9fe"

ra(props, top) := {"object": object.union({
	"type": "Microsoft.Authorization/roleAssignments",
	"name": "ra",
	"properties": object.union({"roleDefinitionId": contributor, "principalId": "p-1"}, props),
}, top)}

test_subscription_and_resource_group_scopes if {
	some v in rule.deny with input as ra({"scope": "/subscriptions/s"}, {})
	v.msg == "Storage Blob Data Contributor is granted at a subscription (/subscriptions/s), so principal p-1 reaches the data of every storage account in it; grant it on the account or a container"
	v.path == ["properties", "scope"]
	some w in rule.deny with input as ra({"scope": "/subscriptions/s/resourceGroups/rg-ml"}, {})
	contains(w.msg, "at a resource group (/subscriptions/s/resourceGroups/rg-ml)")
	count(rule.deny) == 1 with input as ra({"scope": "/providers/Microsoft.Management/managementGroups/mg"}, {})
}

test_account_and_container_scopes_pass if {
	count(rule.deny) == 0 with input as ra({"scope": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/st"}, {})
	count(rule.deny) == 0 with input as ra({"scope": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/st/blobServices/default/containers/c"}, {})
	count(rule.deny) == 0 with input as ra({}, {"scope": "Microsoft.Storage/storageAccounts/st"})
}

test_template_without_scope_is_its_deployment_scope if {
	some v in rule.deny with input as ra({}, {})
	contains(v.msg, "granted at the scope of its deployment")
}

test_other_roles_pass if {
	reader := "/providers/Microsoft.Authorization/roleDefinitions/acdd72a7-3385-48ef-bd42-f606fba81ae7"
	count(rule.deny) == 0 with input as ra({"scope": "/subscriptions/s", "roleDefinitionId": reader}, {})
}

test_terraform_role_name if {
	count(rule.deny) == 1 with input as ra({"scope": "/subscriptions/s", "roleDefinitionId": null, "roleDefinitionName": "Storage Blob Data Owner"}, {})
}
