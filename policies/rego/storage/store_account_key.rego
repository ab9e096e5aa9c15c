# METADATA
# title: Azure storage StorageClass stores the account key in a Secret
# description: >-
#   The Azure Blob and Azure Files CSI drivers store the storage account key in a Kubernetes Secret
#   unless the StorageClass sets storeAccountKey to "false" (the default is true). Anyone who can read
#   that Secret can read and write the whole account from anywhere its network rules allow. The
#   parameter key is compared case-insensitively, its value must be false.
# custom:
#   id: STK-STO-003
#   severity: high
#   kinds: [StorageClass]
#   frameworks: [private-link-storage, workload-identity]
#   remediation: >-
#     Set `storeAccountKey: "false"` in the StorageClass parameters and mount with workload identity
#     (the driver's clientID volume attribute), or managed identity, instead of account keys.
package stockade.storage.store_account_key

import data.stockade.lib.azstorage
import rego.v1

setting := azstorage.param(object.get(input.object, "parameters", {}), "storeAccountKey")

deny contains v if {
	azstorage.storage_class
	not setting
	v := {
		"msg": "StorageClass does not set storeAccountKey: \"false\" (the driver stores the account key in a Secret by default)",
		"path": ["parameters"],
		"details": {"provisioner": input.object.provisioner},
	}
}

deny contains v if {
	azstorage.storage_class
	lower(sprintf("%v", [setting.value])) != "false"
	v := {
		"msg": sprintf("StorageClass sets %s: %v (the account key is stored in a Secret)", [setting.key, setting.value]),
		"path": ["parameters", setting.key],
		"details": {"provisioner": input.object.provisioner},
	}
}
