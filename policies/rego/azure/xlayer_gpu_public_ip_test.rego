package stockade.azure.xlayer_gpu_public_ip_test

import data.stockade.azure.xlayer_gpu_public_ip as rule
import rego.v1

pool(name, size, public) := {"name": name, "vmSize": size, "enableNodePublicIP": public, "field": sprintf("properties.agentPoolProfiles[%s]", [name])}

cluster(pools) := {"name": "aks-prod", "nodePools": pools}

gpu_spec(extra) := object.union({"containers": [{"name": "train", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}, extra)

pod(spec, c) := {
	"object": {"kind": "Pod", "metadata": {"name": "p"}, "spec": spec},
	"pod": {"metadata": {}, "spec": spec, "path": [], "specPath": ["spec"], "metadataPath": ["metadata"]},
	"facts": {"azure": {"cluster": c}},
}

cfg := {"gpu": {"resources": ["nvidia.com/gpu"]}, "azure": {"gpu_vm_sizes": ["Standard_N*"]}}

public_gpu := pool("gpu", "Standard_NC24ads_A100_v4", true)

private_gpu := pool("gpu2", "Standard_ND96asr_v4", false)

test_gpu_pod_on_public_gpu_pool if {
	some v in rule.deny with input as pod(gpu_spec({}), cluster([public_gpu, private_gpu])) with data.stockade.config as cfg
	contains(v.msg, "container \"train\": nvidia.com/gpu")
	contains(v.msg, "gpu (Standard_NC24ads_A100_v4, properties.agentPoolProfiles[gpu].enableNodePublicIP: true)")
	v.path == ["spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"]
	v.details.nodePools == ["gpu (Standard_NC24ads_A100_v4, properties.agentPoolProfiles[gpu].enableNodePublicIP: true)"]
}

test_pod_pinned_to_a_private_pool_passes if {
	spec := gpu_spec({"nodeSelector": {"agentpool": "gpu2"}})
	count(rule.deny) == 0 with input as pod(spec, cluster([public_gpu, private_gpu])) with data.stockade.config as cfg
	spec2 := gpu_spec({"nodeSelector": {"kubernetes.azure.com/agentpool": "GPU"}})
	count(rule.deny) == 1 with input as pod(spec2, cluster([public_gpu, private_gpu])) with data.stockade.config as cfg
}

test_no_public_gpu_pool_or_no_gpu_passes if {
	count(rule.deny) == 0 with input as pod(gpu_spec({}), cluster([private_gpu, pool("cpu", "Standard_D4s_v5", true)])) with data.stockade.config as cfg
	count(rule.deny) == 0 with input as pod({"containers": [{"name": "c", "image": "x"}]}, cluster([public_gpu])) with data.stockade.config as cfg
}

test_unknown_public_ip_is_the_worst_case if {
	marker := "[unknown: set by an expression stockade cannot evaluate: parameters('ip'): no value in x]"
	some v in rule.deny with input as pod(gpu_spec({}), cluster([pool("gpu", "Standard_NC6s_v3", marker)])) with data.stockade.config as cfg
	contains(v.msg, "enableNodePublicIP: set by an expression stockade cannot evaluate")
}

test_only_one_layer_says_nothing if {
	inp := json.patch(pod(gpu_spec({}), cluster([public_gpu])), [{"op": "replace", "path": "/facts", "value": {}}])
	count(rule.deny) == 0 with input as inp with data.stockade.config as cfg
}
