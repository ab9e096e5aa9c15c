# METADATA
# title: Storage account accepts plain HTTP
# description: >-
#   supportsHttpsTrafficOnly false lets clients reach the account over unencrypted HTTP: SAS tokens,
#   shared keys in the Authorization header and the data itself cross the network in clear. Unset
#   means true (the default of every API version since 2019-04-01). Read from live accounts, ARM
#   templates, Resource Graph exports and terraform plans (https_traffic_only_enabled, formerly
#   enable_https_traffic_only).
# custom:
#   id: STK-AZ-007
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage, MCSB-DP-3]
#   remediation: Set supportsHttpsTrafficOnly to true (terraform https_traffic_only_enabled = true).
package stockade.azure.storage_https

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["supportsHttpsTrafficOnly"], true) == false
	v := {
		"msg": "storage account accepts unencrypted HTTP (supportsHttpsTrafficOnly is false)",
		"path": arm.path(["supportsHttpsTrafficOnly"]),
		"details": {"supportsHttpsTrafficOnly": false},
	}
}

deny contains v if {
	arm.unknown(arm.prop(["supportsHttpsTrafficOnly"], true))
	v := {
		"msg": sprintf("storage account may accept unencrypted HTTP: supportsHttpsTrafficOnly%s", [arm.why(["supportsHttpsTrafficOnly"])]),
		"path": arm.path(["supportsHttpsTrafficOnly"]),
		"details": {"supportsHttpsTrafficOnly": arm.prop(["supportsHttpsTrafficOnly"], null)},
	}
}
