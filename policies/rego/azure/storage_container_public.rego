# METADATA
# title: Blob container allows anonymous read access
# description: >-
#   A container whose publicAccess is Blob or Container serves its blobs (and, for Container, their
#   listing) to anyone on the internet without credentials, as soon as the account allows public
#   access (STK-AZ-002 reports the account setting, this rule the container that would be exposed).
#   Read from ARM templates (Microsoft.Storage/storageAccounts/blobServices/containers) and terraform
#   plans (azurerm_storage_container container_access_type); a live audit lists each account's
#   containers.
# custom:
#   id: STK-AZ-009
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts/blobServices/containers]
#   frameworks: [private-link-storage]
#   remediation: Set publicAccess to None (terraform container_access_type = "private").
package stockade.azure.storage_container_public

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	access := arm.prop(["publicAccess"], "None")
	lower(access) in {"blob", "container"}
	v := {
		"msg": sprintf("blob container allows anonymous read access (publicAccess %s)", [access]),
		"path": arm.path(["publicAccess"]),
		"details": {"publicAccess": access},
	}
}

deny contains v if {
	arm.unknown(arm.prop(["publicAccess"], "None"))
	v := {
		"msg": sprintf("blob container may allow anonymous read access: publicAccess%s", [arm.why(["publicAccess"])]),
		"path": arm.path(["publicAccess"]),
		"details": {"publicAccess": arm.prop(["publicAccess"], null)},
	}
}
