# METADATA
# title: Storage account sets a minimum TLS version older than 1.2
# description: >-
#   minimumTlsVersion, where set, must be TLS1_2 (or later). Since 3 February 2026 Azure Storage refuses
#   TLS 1.0 and 1.1 on every account whatever this setting says, so an unset value is not reported; a
#   TLS1_0 or TLS1_1 still written in a template or kept on an account misstates it to the audits that
#   read the setting (Azure Policy's minimum TLS version built-in, CIS Azure 4.15).
# custom:
#   id: STK-AZ-004
#   severity: low
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage]
#   remediation: Set minimumTlsVersion to TLS1_2 on the storage account.
package stockade.azure.storage_tls

import data.stockade.lib.arm
import rego.v1

version := arm.prop(["minimumTlsVersion"], null)

shown := trim_prefix(arm.why(["minimumTlsVersion"]), " ") if arm.unknown(version)

shown := version if not arm.unknown(version)

deny contains v if {
	version != null
	not version in {"TLS1_2", "TLS1_3"}
	v := {
		"msg": sprintf(
			"storage account sets minimumTlsVersion %s, not TLS1_2: Azure Storage has refused TLS 1.0 and 1.1 since 3 February 2026, but the audits that read this setting (Azure Policy, CIS) report the account",
			[shown],
		),
		"path": arm.path(["minimumTlsVersion"]),
		"details": {"minimumTlsVersion": version},
	}
}
