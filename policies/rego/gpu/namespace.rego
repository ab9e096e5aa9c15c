# METADATA
# title: GPU workload outside a GPU namespace
# description: >-
#   Pods that use a GPU (any init or regular container with a non-zero request or limit of a resource in
#   gpu.resources) may run only in namespaces that carry every label in gpu.namespace_labels, so GPU
#   capacity (and the quotas, priority classes and node access that come with it) is granted per
#   namespace on purpose. Decided only when the namespace's labels are known (the Namespace object was
#   scanned, or the admission webhook and the audit read it); a scan that did not see the Namespace
#   reports nothing. One violation per GPU container.
# custom:
#   id: STK-GPU-002
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [gpu-best-practice]
#   remediation: >-
#     Run the workload in a namespace approved for GPUs, or have the platform team label the namespace
#     (e.g. stockade.io/gpu=true) after approving it.
package stockade.gpu.namespace

import data.stockade.lib.pods
import rego.v1

required := object.get(data.stockade.config, ["gpu", "namespace_labels"], {})

missing contains sprintf("%s=%s", [key, value]) if {
	some key, value in required
	object.get(input.namespace, ["labels", key], null) != value
}

deny contains v if {
	input.namespace.known == true
	count(missing) > 0
	some gpu in pods.gpu_containers
	v := {
		"msg": sprintf(
			"container %q uses %s but namespace %q is not labelled for GPUs (missing %s)",
			[pods.container_name(gpu.container), gpu.resource, pods.object_namespace, concat(", ", missing)],
		),
		"path": gpu.path,
		"details": {"namespace": pods.object_namespace, "missing_labels": missing},
	}
}
