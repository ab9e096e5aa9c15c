# METADATA
# title: Secret holds an Azure storage account key or SAS token
# description: >-
#   A Secret with a data key named azurestorageaccountkey or azurestorageaccountsastoken (storage.
#   forbidden_secret_keys, compared case-insensitively) holds a credential for a whole storage account:
#   whoever can read the Secret, or mount it, can read and write the account. Use workload identity
#   instead. Only the key names are read (data, stringData, or the key names an audit keeps in
#   dataKeys); the findings name the key, never its value.
# custom:
#   id: STK-STO-004
#   severity: high
#   kinds: [Secret]
#   frameworks: [private-link-storage, workload-identity]
#   remediation: >-
#     Delete the Secret and rotate the storage account key (or revoke the SAS). Mount with workload
#     identity (storeAccountKey: "false" and the driver's clientID attribute), and disable shared key
#     access on the account.
package stockade.storage.account_key_secret

import rego.v1

forbidden := {lower(k) | some k in object.get(data.stockade.config, ["storage", "forbidden_secret_keys"], ["azurestorageaccountkey", "azurestorageaccountsastoken"])}

# (field, key) for every data key name, wherever the gate put it
held contains [field, key] if {
	some field in ["data", "stringData"]
	some key, _ in object.get(input.object, field, {})
}

held contains ["dataKeys", key] if {
	some key in object.get(input.object, "dataKeys", [])
}

deny contains v if {
	some [field, key] in held
	lower(key) in forbidden
	v := {
		"msg": sprintf("Secret holds a storage account credential under key %q", [key]),
		"path": path_of(field, key),
		"details": {"key": key},
	}
}

# an audit keeps the key names as a list: the finding points at the list
path_of("dataKeys", _) := ["dataKeys"]

path_of(field, key) := [field, key] if field != "dataKeys"
