package stockade.azure.aks_gpu_public_ip_test

import data.stockade.azure.aks_gpu_public_ip as rule
import rego.v1

aks(pools) := {"object": {"type": "Microsoft.ContainerService/managedClusters", "properties": {"agentPoolProfiles": pools}}}

test_private_gpu_pool_allowed if {
	count(rule.deny) == 0 with input as aks([{"name": "gpu", "vmSize": "Standard_ND96asr_v4", "enableNodePublicIP": false}])
	count(rule.deny) == 0 with input as aks([{"name": "sys", "vmSize": "Standard_D4s_v5", "enableNodePublicIP": true}])
}

test_public_gpu_pool_denied if {
	denied := rule.deny with input as aks([{"name": "sys", "vmSize": "Standard_D4s_v5"}, {"name": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "enableNodePublicIP": true}])
	some v in denied
	v.path == ["properties", "agentPoolProfiles", 1, "enableNodePublicIP"]
}

test_agent_pool_resource_denied if {
	i := {"object": {"type": "Microsoft.ContainerService/managedClusters/agentPools", "name": "gpu", "properties": {"vmSize": "standard_nd40rs_v2", "enableNodePublicIP": true}}}
	denied := rule.deny with input as i
	some v in denied
	v.path == ["properties", "enableNodePublicIP"]
}
