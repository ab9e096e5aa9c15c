package stockade.storage.account_key_secret_test

import data.stockade.storage.account_key_secret
import rego.v1

deny(obj) := d if {
	d := account_key_secret.deny with input as {"object": object.union({"kind": "Secret"}, obj)}
}

test_other_keys_allowed if {
	count(deny({"data": {"azurestorageaccountname": "c3Q=", "token": "eA=="}})) == 0
	count(deny({})) == 0
}

test_account_key_denied_by_name_only if {
	some v in deny({"data": {"azurestorageaccountname": "c3Q=", "azurestorageaccountkey": "c2VjcmV0"}})
	v.path == ["data", "azurestorageaccountkey"]
	v.details == {"key": "azurestorageaccountkey"}
	not contains(v.msg, "c2VjcmV0")
}

test_sas_token_in_string_data_denied if {
	some v in deny({"stringData": {"AzureStorageAccountSasToken": "sv=2022&sig=abc"}})
	v.path == ["stringData", "AzureStorageAccountSasToken"]
	not contains(v.msg, "sig=abc")
}

test_audit_key_names_denied if {
	some v in deny({"dataKeys": ["azurestorageaccountkey", "other"]})
	v.path == ["dataKeys"]
	v.details.key == "azurestorageaccountkey"
}

test_configured_names if {
	count(deny({"data": {"azurestorageaccountkey": "x"}})) == 0 with data.stockade.config.storage.forbidden_secret_keys as ["mykey"]
	count(deny({"data": {"MYKEY": "x"}})) == 1 with data.stockade.config.storage.forbidden_secret_keys as ["mykey"]
}
