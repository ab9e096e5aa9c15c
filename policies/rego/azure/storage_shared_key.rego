# METADATA
# title: Storage account accepts shared key (account key and SAS) authorization
# description: >-
#   allowSharedKeyAccess must be false so that only Entra ID (workload or managed identity) can reach
#   the data: account keys and the SAS tokens signed with them cannot be scoped to a workload, expire
#   only on rotation, and work from anywhere the network allows. An unset value (null) means shared
#   key access is allowed.
# custom:
#   id: STK-AZ-003
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage, workload-identity, MCSB-IM-1]
#   remediation: >-
#     Move every client to Entra ID authorization, then set allowSharedKeyAccess to false.
package stockade.azure.storage_shared_key

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["allowSharedKeyAccess"], true) != false
	v := {
		"msg": sprintf("storage account accepts shared key authorization: allowSharedKeyAccess is not false (null means allowed)%s", [arm.why(["allowSharedKeyAccess"])]),
		"path": arm.path(["allowSharedKeyAccess"]),
		"details": {"allowSharedKeyAccess": arm.prop(["allowSharedKeyAccess"], null)},
	}
}
