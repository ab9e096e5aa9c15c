package stockade.storage.store_account_key_test

import data.stockade.storage.store_account_key
import rego.v1

sc(params) := {"kind": "StorageClass", "provisioner": "file.csi.azure.com", "parameters": params}

deny(obj) := d if {
	d := store_account_key.deny with input as {"object": obj}
}

test_false_allowed if {
	count(deny(sc({"storeAccountKey": "false"}))) == 0
	count(deny(sc({"StoreAccountKey": "False"}))) == 0
	count(deny(sc({"storeaccountkey": false}))) == 0
}

test_unset_denied if {
	some v in deny(sc({}))
	v.path == ["parameters"]
	contains(v.msg, "by default")
}

test_true_denied if {
	some v in deny(sc({"storeAccountKey": "true"}))
	v.path == ["parameters", "storeAccountKey"]
}

test_other_provisioner_ignored if {
	count(deny({"kind": "StorageClass", "provisioner": "disk.csi.azure.com", "parameters": {}})) == 0
}
