# METADATA
# title: Azure storage volume outside the approved storage accounts
# description: >-
#   Training data and checkpoints may only live in the storage accounts the platform team approved
#   (storage.approved_accounts, shell-style globs; empty means none is approved yet, so every volume
#   is reported). A StorageClass of the Azure Blob or Azure Files CSI driver must name an approved
#   account in its storageAccount parameter (without one the driver creates or picks an account on
#   its own); a PersistentVolume of those drivers must point at an approved account, read from
#   volumeAttributes.storageAccount (any case), else from the account field of its volumeHandle
#   (resource-group#account#container-or-share#...), as the drivers do.
# custom:
#   id: STK-STO-002
#   severity: high
#   kinds: [StorageClass, PersistentVolume]
#   frameworks: [private-link-storage]
#   remediation: >-
#     Set the storageAccount parameter (StorageClass) or volumeAttributes.storageAccount
#     (PersistentVolume) to an approved account, or have the account approved in
#     storage.approved_accounts.
package stockade.storage.approved_accounts

import data.stockade.lib.azstorage
import rego.v1

sc_account := azstorage.param(object.get(input.object, "parameters", {}), "storageAccount")

attributes := object.get(input.object, ["spec", "csi", "volumeAttributes"], {})

pv_attribute := azstorage.param(attributes, "storageAccount")

# the account of a PV: the attribute, else the volume handle's second field
pv_account := {"value": pv_attribute.value, "path": ["spec", "csi", "volumeAttributes", pv_attribute.key]} if {
	pv_attribute.value != ""
} else := {"value": parts[1], "path": ["spec", "csi", "volumeHandle"]} if {
	parts := split(object.get(input.object, ["spec", "csi", "volumeHandle"], ""), "#")
	count(parts) > 1
	parts[1] != ""
}

deny contains v if {
	azstorage.storage_class
	not sc_account
	v := {
		"msg": sprintf("StorageClass of %s names no storageAccount: the driver creates or picks an unapproved account", [input.object.provisioner]),
		"path": ["parameters"],
		"details": {"provisioner": input.object.provisioner},
	}
}

deny contains v if {
	azstorage.storage_class
	is_object(sc_account) # first: regorus' VM binds an undefined sprintf argument as a value
	name := sprintf("%v", [sc_account.value])
	not azstorage.account_approved(name)
	v := {
		"msg": sprintf("StorageClass uses storage account %q, which is not approved (storage.approved_accounts)", [name]),
		"path": ["parameters", sc_account.key],
		"details": {"account": name},
	}
}

deny contains v if {
	azstorage.persistent_volume
	not pv_account
	v := {
		"msg": "PersistentVolume of an Azure storage driver does not name its storage account (volumeAttributes.storageAccount)",
		"path": ["spec", "csi"],
		"details": {"driver": input.object.spec.csi.driver},
	}
}

deny contains v if {
	azstorage.persistent_volume
	is_object(pv_account) # as above
	name := sprintf("%v", [pv_account.value])
	not azstorage.account_approved(name)
	v := {
		"msg": sprintf("PersistentVolume uses storage account %q, which is not approved (storage.approved_accounts)", [name]),
		"path": pv_account.path,
		"details": {"account": name, "driver": input.object.spec.csi.driver},
	}
}
