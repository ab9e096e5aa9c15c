package stockade.azure.storage_https_test

import data.stockade.azure.storage_https
import rego.v1

deny(props) := d if {
	d := storage_https.deny with input as {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": props}}
}

test_http_allowed_denied if {
	some v in deny({"supportsHttpsTrafficOnly": false})
	v.path == ["properties", "supportsHttpsTrafficOnly"]
}

test_https_only_or_unset_allowed if {
	count(deny({"supportsHttpsTrafficOnly": true})) == 0
	count(deny({})) == 0
}
