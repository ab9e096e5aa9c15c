# METADATA
# title: Storage account SFTP endpoint with local users
# description: >-
#   isSftpEnabled true opens an SFTP endpoint authenticated by the account's local users (passwords or
#   SSH keys stored on the account): credentials that bypass Microsoft Entra ID, Azure RBAC and
#   workload identity, cannot be scoped by Conditional Access, and are not rotated by anyone. Read from
#   live accounts, ARM templates, Resource Graph exports and terraform plans (sftp_enabled).
# custom:
#   id: STK-AZ-008
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage, workload-identity]
#   remediation: >-
#     Disable SFTP (isSftpEnabled false) and local users (isLocalUserEnabled false); give workloads
#     access through workload identity and Azure RBAC on the data plane.
package stockade.azure.storage_sftp

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	arm.prop(["isSftpEnabled"], false) == true
	arm.prop(["isLocalUserEnabled"], true) != false
	v := {
		"msg": "storage account serves SFTP to local users (isSftpEnabled is true): passwords and SSH keys that bypass Entra ID",
		"path": arm.path(["isSftpEnabled"]),
		"details": {"isSftpEnabled": true},
	}
}

deny contains v if {
	arm.unknown(arm.prop(["isSftpEnabled"], false))
	arm.prop(["isLocalUserEnabled"], true) != false
	v := {
		"msg": sprintf("storage account may serve SFTP to local users: isSftpEnabled%s", [arm.why(["isSftpEnabled"])]),
		"path": arm.path(["isSftpEnabled"]),
		"details": {"isSftpEnabled": arm.prop(["isSftpEnabled"], null)},
	}
}
