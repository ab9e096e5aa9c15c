# Helpers for the Azure Blob / Azure Files CSI drivers' StorageClasses and PersistentVolumes.
#
# The drivers read StorageClass parameters and PV volumeAttributes case-insensitively
# (`networkEndpointType`, `NetworkEndpointType` and `networkendpointtype` are one key), so rules look
# keys up through `param` rather than by exact name.
package stockade.lib.azstorage

import rego.v1

# The configured CSI drivers whose volumes are Azure storage.
drivers := object.get(data.stockade.config, ["storage", "csi_drivers"], ["blob.csi.azure.com", "file.csi.azure.com"])

# The approved storage account names (shell-style globs); empty: none approved yet.
approved := object.get(data.stockade.config, ["storage", "approved_accounts"], [])

# The keys of `obj` that spell `name` in any case, sorted (several spellings: the first wins, as
# the driver's map iteration would pick one; sorting makes the choice deterministic).
keys_of(obj, name) := sort([k | some k, _ in obj; lower(k) == lower(name)])

# The value of a case-insensitive key, with the key as written: {"key": k, "value": v}.
param(obj, name) := {"key": ks[0], "value": obj[ks[0]]} if {
	is_object(obj)
	ks := keys_of(obj, name)
	count(ks) > 0
}

# The object is a StorageClass of one of the drivers.
storage_class if {
	input.object.kind == "StorageClass"
	input.object.provisioner in drivers
}

# The object is a PersistentVolume of one of the drivers.
persistent_volume if {
	input.object.kind == "PersistentVolume"
	input.object.spec.csi.driver in drivers
}

account_approved(name) if {
	some pattern in approved
	glob.match(pattern, [], name)
}
