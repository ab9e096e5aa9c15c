# METADATA
# title: Storage account accepts TLS versions older than 1.2
# description: >-
#   minimumTlsVersion must be TLS1_2 (or later). Unset means TLS1_0 for accounts created before the
#   platform default changed.
# custom:
#   id: STK-AZ-004
#   severity: medium
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage]
#   remediation: Set minimumTlsVersion to TLS1_2 on the storage account.
package stockade.azure.storage_tls

import data.stockade.lib.arm
import rego.v1

version := arm.prop(["minimumTlsVersion"], "TLS1_0")

deny contains v if {
	not version in {"TLS1_2", "TLS1_3"}
	v := {
		"msg": sprintf("storage account accepts %s (minimumTlsVersion must be TLS1_2)", [version]),
		"path": arm.path(["minimumTlsVersion"]),
		"details": {"minimumTlsVersion": version},
	}
}
