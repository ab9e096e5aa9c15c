# METADATA
# title: Memory limit missing
# description: >-
#   Every init and regular container must set resources.limits.memory (when resources.require_memory_limit
#   is true, the default). Without a limit a container can take the node's memory until the kernel's OOM
#   killer picks victims among other tenants' pods; on GPU nodes that is usually a training job. Ephemeral
#   containers cannot declare resources and are not checked. A LimitRange default in the namespace also
#   satisfies this at admission, but a manifest scan cannot see it: set the limit in the manifest. A
#   container that sets no CPU or memory quantity at all gets one finding from this rule listing
#   everything missing (the memory limit, and the CPU and memory requests of STK-RES-002/-003 when they
#   are on), not three; with this rule off (config rules or require_memory_limit: false) STK-RES-002,
#   else STK-RES-003, reports it instead. A pod-level memory limit (spec.resources, Kubernetes 1.34's
#   pod-level resources) bounds the containers that set none: none is then asked for one (and so for
#   the CPU and memory requests with STK-RES-002/-003).
# custom:
#   id: STK-RES-001
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, pod-best-practice]
#   remediation: Set resources.limits.memory on the container (e.g. to its peak working set plus headroom).
package stockade.resources.memory_limit

import data.stockade.lib.pods
import data.stockade.lib.resources
import rego.v1

deny contains v if {
	resources.on("STK-RES-001")
	some entry in pods.resource_containers
	not pods.resource_value(entry.container, "limits", "memory")
	not resources.bare(entry.container)
	v := {"msg": msg(entry), "path": array.concat(entry.path, ["resources", "limits", "memory"])}
}

# a container with no CPU or memory resources at all: one finding for everything missing
deny contains v if {
	resources.owner == "STK-RES-001"
	resources.several
	some entry in pods.resource_containers
	resources.bare(entry.container)
	v := resources.bare_finding(entry)
}

deny contains v if {
	resources.owner == "STK-RES-001"
	not resources.several
	some entry in pods.resource_containers
	resources.bare(entry.container)
	v := {"msg": msg(entry), "path": array.concat(entry.path, ["resources", "limits", "memory"])}
}

msg(entry) := sprintf("container %q has no memory limit", [pods.container_name(entry.container)])
