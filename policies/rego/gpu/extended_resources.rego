# METADATA
# title: Extended resource request differs from its limit
# description: >-
#   Extended resources (GPUs, RDMA devices, FPGAs: every resource name with a "/" outside the
#   kubernetes.io/ namespace, plus the names in gpu.resources) cannot be overcommitted: Kubernetes
#   requires an extended resource's request to equal its limit, and a request without a limit is invalid.
#   A manifest that breaks this is rejected by the API server long after review, so it is reported in CI.
#   A limit without a request is valid (the request defaults to the limit). Quantities compare by value
#   ("1" and 1 are equal). Checked on init and regular containers.
# custom:
#   id: STK-GPU-001
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [gpu-best-practice]
#   remediation: >-
#     Set the extended resource (e.g. nvidia.com/gpu, rdma/hca_shared_devices_a) only under
#     resources.limits, or set the same quantity under requests and limits.
package stockade.gpu.extended_resources

import data.stockade.lib.pods
import rego.v1

# Kubernetes' IsExtendedResourceName: not native (no "/", or a kubernetes.io/ prefixed name) and not a
# quota "requests." name.
extended(name) if {
	contains(name, "/")
	not contains(name, "kubernetes.io/")
	not startswith(name, "requests.")
}

extended(name) if name in pods.gpu_resource_names

# Each extended resource a container requests, with its limit (null when absent): the requests and
# limits maps are read once per container, not once per helper call. The native names every
# container asks for (cpu, memory) are passed over before any call.
requested contains [entry.path, pods.container_name(c), name, request, limit] if {
	some entry in pods.resource_containers
	c := entry.container
	some name, request in pods.resource_list(c, "requests")
	not name in native_names
	extended(name)
	request != null
	request != ""
	limit := object.get(pods.resource_list(c, "limits"), name, null)
}

# Never extended (no "/"), unless gpu.resources names one of them.
native_names := {"cpu", "memory", "ephemeral-storage"} - pods.gpu_resource_names

deny contains v if {
	some [path, container, name, request, limit] in requested
	unset(limit)
	v := {
		"msg": sprintf(
			"container %q requests %v of extended resource %q without a limit (it must set limits.%s)",
			[container, request, name, name],
		),
		"path": array.concat(path, ["resources", "requests", name]),
		"details": {"resource": name, "request": request},
	}
}

deny contains v if {
	some [path, container, name, request, limit] in requested
	not unset(limit)
	pods.different_quantity(request, limit)
	v := {
		"msg": sprintf(
			"container %q requests %v of extended resource %q but its limit is %v (they must be equal)",
			[container, request, name, limit],
		),
		"path": array.concat(path, ["resources", "requests", name]),
		"details": {"resource": name, "request": request, "limit": limit},
	}
}

unset(q) if q == null

unset(q) if q == ""
