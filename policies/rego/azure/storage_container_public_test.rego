package stockade.azure.storage_container_public_test

import data.stockade.azure.storage_container_public
import rego.v1

deny(props) := d if {
	d := storage_container_public.deny with input as {"object": {"type": "Microsoft.Storage/storageAccounts/blobServices/containers", "properties": props}}
}

test_public_containers_denied if {
	some v in deny({"publicAccess": "Container"})
	v.path == ["properties", "publicAccess"]
	count(deny({"publicAccess": "Blob"})) == 1
}

test_private_containers_allowed if {
	count(deny({"publicAccess": "None"})) == 0
	count(deny({})) == 0
}
