# METADATA
# title: Azure storage volume without a private endpoint
# description: >-
#   A StorageClass of the Azure Blob or Azure Files CSI driver (storage.csi_drivers) must set the
#   parameter networkEndpointType to privateEndpoint (key and value compared case-insensitively, as the
#   driver does), so that volumes reach their storage account over Private Link and the account can
#   refuse public network traffic. Without it the driver mounts through the account's public endpoint.
# custom:
#   id: STK-STO-001
#   severity: high
#   kinds: [StorageClass]
#   frameworks: [private-link-storage]
#   remediation: >-
#     Add `networkEndpointType: privateEndpoint` to the StorageClass parameters (StorageClasses are
#     immutable: create a new class and migrate the claims), and disable public network access on the
#     storage account.
package stockade.storage.private_endpoint

import data.stockade.lib.azstorage
import rego.v1

setting := azstorage.param(object.get(input.object, "parameters", {}), "networkEndpointType")

deny contains v if {
	azstorage.storage_class
	not setting
	v := {
		"msg": sprintf("StorageClass of %s does not set networkEndpointType: privateEndpoint", [input.object.provisioner]),
		"path": ["parameters"],
		"details": {"provisioner": input.object.provisioner},
	}
}

deny contains v if {
	azstorage.storage_class
	lower(sprintf("%v", [setting.value])) != "privateendpoint"
	v := {
		"msg": sprintf("StorageClass of %s sets %s: %v instead of privateEndpoint", [input.object.provisioner, setting.key, setting.value]),
		"path": ["parameters", setting.key],
		"details": {"provisioner": input.object.provisioner, "value": setting.value},
	}
}
