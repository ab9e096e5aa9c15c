# METADATA
# title: GPU node pool with public IPs
# description: >-
#   GPU nodes hold model weights and training data and must not have public IPs
#   (enableNodePublicIP). GPU pools are those whose vmSize matches azure.gpu_vm_sizes (globs, default
#   Standard_N*). Checked on the cluster's agentPoolProfiles and on separate agentPools resources.
# custom:
#   id: STK-AZ-016
#   severity: high
#   kinds: [Microsoft.ContainerService/managedClusters, Microsoft.ContainerService/managedClusters/agentPools]
#   frameworks: [aks-baseline]
#   remediation: Recreate the node pool without --enable-node-public-ip (the setting cannot be changed in place).
package stockade.azure.aks_gpu_public_ip

import data.stockade.lib.arm
import rego.v1

sizes := object.get(data.stockade.config, ["azure", "gpu_vm_sizes"], ["Standard_N*"])

gpu(size) if {
	some pattern in sizes
	glob.match(lower(pattern), [], lower(size))
}

# (pool, path of the pool) for both shapes
pools contains [pool, arm.path(["agentPoolProfiles", i])] if {
	input.object.type == "Microsoft.ContainerService/managedClusters"
	some i, pool in arm.prop(["agentPoolProfiles"], [])
}

pools contains [arm.props, ["properties"]] if input.object.type == "Microsoft.ContainerService/managedClusters/agentPools"

deny contains v if {
	some [pool, path] in pools
	object.get(pool, "enableNodePublicIP", false) == true
	size := object.get(pool, "vmSize", "")
	gpu(size)
	name := object.get(pool, "name", object.get(input.object, "name", ""))
	v := {
		"msg": sprintf("GPU node pool %s (%s) gives its nodes public IPs", [name, size]),
		"path": array.concat(path, ["enableNodePublicIP"]),
		"details": {"pool": name, "vmSize": size},
	}
}

# a pool whose public IP setting or size is set by an expression stockade cannot evaluate: the worst case
deny contains v if {
	some [pool, path] in pools
	ip := object.get(pool, "enableNodePublicIP", false)
	size := object.get(pool, "vmSize", "")
	unsure(ip, size)
	name := object.get(pool, "name", object.get(input.object, "name", ""))
	v := {
		"msg": sprintf("node pool %s may be a GPU pool with public node IPs: enableNodePublicIP %v, vmSize %v", [name, ip, size]),
		"path": array.concat(path, ["enableNodePublicIP"]),
		"details": {"pool": name, "vmSize": size},
	}
}

unsure(ip, size) if {
	arm.unknown(ip)
	arm.unknown(size)
}

unsure(ip, size) if {
	arm.unknown(ip)
	gpu(size)
}

unsure(ip, size) if {
	ip == true
	arm.unknown(size)
}
