package stockade.azure.aks_kms_test

import data.stockade.azure.aks_kms as rule
import rego.v1

aks(kms) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "name": "aks", "properties": {"securityProfile": {"azureKeyVaultKms": kms}}}}

test_private_kms_allowed if {
	count(rule.deny) == 0 with input as aks({"enabled": true, "keyIdentifier": "https://kv.vault.azure.net/keys/etcd/1", "keyVaultNetworkAccess": "Private", "keyVaultResourceId": "/x"})
}

test_unset_denied if {
	some v in rule.deny with input as {"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": {}}}
	v.path == ["properties", "securityProfile", "azureKeyVaultKms"]
}

test_public_key_vault_denied if {
	some v in rule.deny with input as aks({"enabled": true, "keyIdentifier": "https://kv.vault.azure.net/keys/etcd/1"})
	v.details.keyVaultNetworkAccess == "Public"
	v.path == ["properties", "securityProfile", "azureKeyVaultKms", "keyVaultNetworkAccess"]
}
