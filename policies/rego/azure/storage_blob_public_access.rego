# METADATA
# title: Storage account allows anonymous blob access
# description: >-
#   allowBlobPublicAccess must be false: otherwise any container can be made readable by anyone
#   with its URL. An unset value counts as allowed, except in a template that creates the account with
#   API version 2023-01-01 or later, which Resource Manager creates with anonymous access disallowed
#   (the REST reference: "the default interpretation is false"); older API versions, and a live
#   account that reports no value, allow it.
# custom:
#   id: STK-AZ-002
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage]
#   remediation: Set allowBlobPublicAccess to false on the storage account.
package stockade.azure.storage_blob_public_access

import data.stockade.lib.arm
import rego.v1

api := object.get(input.object, "apiVersion", null)

# the template's API version is 2023-01-01 or later (a date, optionally "-preview")
disallowed_by_default if {
	is_string(api)
	regex.match(`^\d{4}-\d{2}-\d{2}`, api)
	api >= "2023-01-01"
}

value := arm.prop(["allowBlobPublicAccess"], null)

why := "is true" if value == true

why := sprintf("is not set (accounts created with API version %s, before 2023-01-01, allow it)", [api]) if {
	value == null
	is_string(api)
}

why := "is not set (an account created before 2023 allows it)" if {
	value == null
	not is_string(api)
}

why := sprintf("is not false%s", [arm.why(["allowBlobPublicAccess"])]) if {
	value != null
	value != true
}

deny contains v if {
	value != false
	not unset_and_disallowed
	v := {
		"msg": sprintf("storage account allows anonymous (public) blob access: allowBlobPublicAccess %s", [why]),
		"path": arm.path(["allowBlobPublicAccess"]),
		"details": {"allowBlobPublicAccess": value},
	}
}

unset_and_disallowed if {
	value == null
	disallowed_by_default
}
