# METADATA
# title: Storage account allows anonymous blob access
# description: >-
#   allowBlobPublicAccess must be false: otherwise any container can be made readable by anyone
#   with its URL. An unset value counts as allowed (the default of accounts created before 2023).
# custom:
#   id: STK-AZ-002
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage]
#   remediation: Set allowBlobPublicAccess to false on the storage account.
package stockade.azure.storage_blob_public_access

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["allowBlobPublicAccess"], true) != false
	v := {
		"msg": sprintf("storage account allows anonymous (public) blob access: allowBlobPublicAccess is not false%s", [arm.why(["allowBlobPublicAccess"])]),
		"path": arm.path(["allowBlobPublicAccess"]),
		"details": {"allowBlobPublicAccess": arm.prop(["allowBlobPublicAccess"], null)},
	}
}
