package stockade.azure.aks_encryption_at_host_test

import data.stockade.azure.aks_encryption_at_host as rule
import rego.v1

aks(pools) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "name": "aks", "properties": {"agentPoolProfiles": pools}}}

test_all_pools_encrypted_allowed if {
	count(rule.deny) == 0 with input as aks([{"name": "system", "enableEncryptionAtHost": true}, {"name": "gpu", "enableEncryptionAtHost": true}])
}

test_one_pool_unset_denied if {
	some v in rule.deny with input as aks([{"name": "system", "enableEncryptionAtHost": true}, {"name": "gpu"}])
	v.path == ["properties", "agentPoolProfiles", 1, "enableEncryptionAtHost"]
	v.details.pool == "gpu"
}

test_separate_pool if {
	pool := {"type": "Microsoft.ContainerService/managedClusters/agentPools", "name": "aks/gpu", "properties": {"enableEncryptionAtHost": false}}
	some v in rule.deny with input as {"object": pool}
	v.path == ["properties", "enableEncryptionAtHost"]
	v.details.pool == "aks/gpu"
	ok := json.patch(pool, [{"op": "replace", "path": "/properties/enableEncryptionAtHost", "value": true}])
	count(rule.deny) == 0 with input as {"object": ok}
}
