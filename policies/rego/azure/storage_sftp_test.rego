package stockade.azure.storage_sftp_test

import data.stockade.azure.storage_sftp
import rego.v1

deny(props) := d if {
	d := storage_sftp.deny with input as {"object": {"type": "Microsoft.Storage/storageAccounts", "properties": props}}
}

test_sftp_denied if {
	some v in deny({"isSftpEnabled": true, "isHnsEnabled": true})
	v.path == ["properties", "isSftpEnabled"]
	count(deny({"isSftpEnabled": true, "isLocalUserEnabled": true})) == 1
}

test_sftp_off_or_without_local_users_allowed if {
	count(deny({})) == 0
	count(deny({"isSftpEnabled": false})) == 0
	# SFTP needs local users: with them disabled nobody can sign in
	count(deny({"isSftpEnabled": true, "isLocalUserEnabled": false})) == 0
}
