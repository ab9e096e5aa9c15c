package stockade.azure.storage_sync_public_test

import data.stockade.azure.storage_sync_public
import rego.v1

deny(props) := d if {
	d := storage_sync_public.deny with input as {"object": {"type": "Microsoft.StorageSync/storageSyncServices", "properties": props}}
}

test_public_sync_denied if {
	some v in deny({"incomingTrafficPolicy": "AllowAllTraffic"})
	v.path == ["properties", "incomingTrafficPolicy"]
	count(deny({})) == 1
}

test_private_sync_allowed if {
	count(deny({"incomingTrafficPolicy": "AllowVirtualNetworksOnly"})) == 0
}
