# METADATA
# title: AKS node pool without encryption at host
# description: >-
#   Every node pool must set enableEncryptionAtHost true, so that temp disks, OS and data disk caches
#   (where checkpoints, downloaded weights and swapped data land) are encrypted on the VM host too.
#   Unset means false. Checked on the cluster's agentPoolProfiles and on separate agentPools
#   resources. REST property of Microsoft.ContainerService/managedClusters (and
#   managedClusters/agentPools), api-version 2024-02-01.
# custom:
#   id: STK-AZ-031
#   severity: medium
#   kinds: [Microsoft.ContainerService/managedClusters, Microsoft.ContainerService/managedClusters/agentPools]
#   frameworks: [aks-baseline, azure-policy-41425d9f-d1a5-499a-9932-f8ed8453932c, MCSB-DP-4]
#   remediation: >-
#     Create a new node pool with --enable-encryption-at-host (the subscription needs the
#     EncryptionAtHost feature) and move the workloads; the setting cannot be changed in place.
package stockade.azure.aks_encryption_at_host

import data.stockade.lib.arm
import rego.v1

pools contains [pool, arm.path(["agentPoolProfiles", i])] if {
	input.object.type == "Microsoft.ContainerService/managedClusters"
	some i, pool in arm.prop(["agentPoolProfiles"], [])
}

pools contains [arm.props, ["properties"]] if input.object.type == "Microsoft.ContainerService/managedClusters/agentPools"

deny contains v if {
	some [pool, path] in pools
	object.get(pool, "enableEncryptionAtHost", false) != true
	name := object.get(pool, "name", object.get(input.object, "name", ""))
	v := {
		"msg": sprintf("node pool %s does not encrypt at host (enableEncryptionAtHost is not true)", [name]),
		"path": array.concat(path, ["enableEncryptionAtHost"]),
		"details": {"pool": name},
	}
}
