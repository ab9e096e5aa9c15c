# METADATA
# title: Sandboxed runtime class with no Kata node pool on its AKS cluster
# description: >-
#   Cross-layer (both the Azure layer and the manifests read): on AKS a sandboxed pod (Pod Sandboxing,
#   Kata) runs only on a node pool whose workloadRuntime is KataVmIsolation or KataMshvVmIsolation;
#   AKS has no gVisor. A workload naming a sandbox runtime class (the aks profile's classes,
#   sandbox.class_patterns, or a class whose handler is a sandbox handler) on a cluster with no such
#   pool never starts, and the usual fix under pressure is to drop runtimeClassName: the sandbox the
#   runtime rules require is not there. A pool whose workloadRuntime is set by an expression stockade
#   cannot evaluate counts as a Kata pool (nothing is claimed that is not known). Nothing when only one
#   layer was read.
# custom:
#   id: STK-AZ-037
#   severity: medium
#   kinds: ["@workloads"]
#   triggers: ['"azure"']
#   frameworks: [sandbox-best-practice, aks-baseline]
#   remediation: >-
#     az aks nodepool add --workload-runtime KataVmIsolation --os-sku AzureLinux (a VM size with nested
#     virtualisation), or run the workload on a cluster that has one.
package stockade.azure.xlayer_sandbox_pool

import data.stockade.lib.aks
import data.stockade.lib.arm
import data.stockade.lib.pods
import data.stockade.lib.sandbox
import rego.v1

aks_classes := object.get(data.stockade.config, ["sandbox", "aks", "classes"], ["kata-vm-isolation", "kata-mshv-vm-isolation"])

handler := input.facts.runtimeClass.handler if is_string(input.facts.runtimeClass.handler)

sandbox_class if sandbox.pod_class in aks_classes

sandbox_class if sandbox.claims_sandbox(sandbox.pod_class)

sandbox_class if {
	sandbox.pod_class
	some pattern in ["kata*", "runsc"]
	glob.match(pattern, null, handler)
}

kata_pool if {
	some pool in aks.cluster.nodePools
	startswith(lower(object.get(pool, "workloadRuntime", "")), "kata")
}

kata_pool if {
	some pool in aks.cluster.nodePools
	arm.unknown(object.get(pool, "workloadRuntime", ""))
}

runtimes := [sprintf("%s (%s.workloadRuntime: %v)", [object.get(pool, "name", ""), pool.field, object.get(pool, "workloadRuntime", null)]) |
	some pool in aks.cluster.nodePools
]

deny contains v if {
	aks.cluster
	sandbox_class
	not kata_pool
	v := {
		"msg": sprintf(
			"runtimeClassName %s is a sandbox, but no node pool of AKS cluster %s has workloadRuntime KataVmIsolation or KataMshvVmIsolation (%s): the sandboxed pods cannot be scheduled",
			[sandbox.pod_class, aks.name, concat(", ", runtimes)],
		),
		"path": pods.spec_path(["runtimeClassName"]),
		"details": {"cluster": aks.name, "runtimeClass": sandbox.pod_class, "nodePools": runtimes},
	}
}
