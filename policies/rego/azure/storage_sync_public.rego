# METADATA
# title: Azure File Sync service accepts traffic from the internet
# description: >-
#   A Storage Sync Service whose incomingTrafficPolicy is AllowAllTraffic (the default) accepts its
#   servers' sync traffic on a public endpoint; with AllowVirtualNetworksOnly it is reachable only
#   through its private endpoint, as private-linked storage should be. Read from ARM templates,
#   Resource Graph exports, terraform plans (azurerm_storage_sync incoming_traffic_policy) and the
#   live audit.
# custom:
#   id: STK-AZ-017
#   severity: medium
#   kinds: [Microsoft.StorageSync/storageSyncServices]
#   frameworks: [private-link-storage]
#   remediation: >-
#     Set incomingTrafficPolicy to AllowVirtualNetworksOnly and give the service a private endpoint
#     (terraform incoming_traffic_policy = "AllowVirtualNetworksOnly").
package stockade.azure.storage_sync_public

import data.stockade.lib.arm
import rego.v1

deny contains v if {
	policy := arm.prop(["incomingTrafficPolicy"], "AllowAllTraffic")
	lower(policy) != "allowvirtualnetworksonly"
	v := {
		"msg": sprintf("Storage Sync Service accepts sync traffic from the internet (incomingTrafficPolicy %s)", [policy]),
		"path": arm.path(["incomingTrafficPolicy"]),
		"details": {"incomingTrafficPolicy": policy},
	}
}
