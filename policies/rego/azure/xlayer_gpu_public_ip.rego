# METADATA
# title: GPU workload schedulable on an AKS GPU pool with public node IPs
# description: >-
#   Cross-layer (both the Azure layer and the manifests read): a pod that uses GPUs (gpu.resources)
#   runs on a GPU node pool of its AKS cluster (vmSize matching azure.gpu_vm_sizes). When such a pool
#   gives its nodes public IPs (enableNodePublicIP), the workload, its model weights and its data sit
#   on an Internet-addressable node; STK-AZ-016 reports the pool, this rule names the workloads it
#   exposes. A pod that selects its pool (nodeSelector agentpool or kubernetes.azure.com/agentpool)
#   is judged against that pool only. Nothing when only one layer was read.
# custom:
#   id: STK-AZ-038
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"azure"']
#   frameworks: [gpu-best-practice, aks-baseline]
#   remediation: >-
#     Schedule GPU pods onto a GPU pool without public node IPs (nodeSelector agentpool: <pool>), and
#     recreate the public pool without --enable-node-public-ip.
package stockade.azure.xlayer_gpu_public_ip

import data.stockade.lib.aks
import data.stockade.lib.arm
import data.stockade.lib.pods
import rego.v1

sizes := object.get(data.stockade.config, ["azure", "gpu_vm_sizes"], ["Standard_N*"])

gpu_size(size) if {
	is_string(size)
	some pattern in sizes
	glob.match(lower(pattern), [], lower(size))
}

gpu_size(size) if arm.unknown(size)

selector := object.get(input.pod.spec, "nodeSelector", {})

chosen := {lower(selector[k]) | some k in ["agentpool", "kubernetes.azure.com/agentpool"]; is_string(selector[k])}

candidate(pool) if count(chosen) == 0

candidate(pool) if lower(object.get(pool, "name", "")) in chosen

exposed := sort([sprintf("%s (%s, %s)", [object.get(pool, "name", ""), object.get(pool, "vmSize", ""), aks.shown(sprintf("%s.enableNodePublicIP", [pool.field]), pool.enableNodePublicIP)]) |
	some pool in aks.cluster.nodePools
	candidate(pool)
	gpu_size(object.get(pool, "vmSize", null))
	aks.true_or_unknown(object.get(pool, "enableNodePublicIP", false))
])

first_gpu := min({[pods.container_name(g.container), g.resource, g.path] | some g in pods.gpu_containers})

deny contains v if {
	pods.gpu_pod
	count(exposed) > 0
	v := {
		"msg": sprintf(
			"the pod uses GPUs (container %q: %s) and can run on GPU node pool %s of AKS cluster %s, whose nodes have public IPs",
			[first_gpu[0], first_gpu[1], concat(", ", exposed), aks.name],
		),
		"path": first_gpu[2],
		"details": {"cluster": aks.name, "nodePools": exposed},
	}
}
