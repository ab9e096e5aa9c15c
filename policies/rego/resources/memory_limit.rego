# METADATA
# title: Memory limit missing
# description: >-
#   Every init and regular container must set resources.limits.memory (when resources.require_memory_limit
#   is true, the default). Without a limit a container can take the node's memory until the kernel's OOM
#   killer picks victims among other tenants' pods; on GPU nodes that is usually a training job. Ephemeral
#   containers cannot declare resources and are not checked. A LimitRange default in the namespace also
#   satisfies this at admission, but a manifest scan cannot see it: set the limit in the manifest.
# custom:
#   id: STK-RES-001
#   severity: medium
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, pod-best-practice]
#   remediation: Set resources.limits.memory on the container (e.g. to its peak working set plus headroom).
package stockade.resources.memory_limit

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	object.get(data.stockade.config, ["resources", "require_memory_limit"], true) == true
	some entry in pods.resource_containers
	not pods.resource_value(entry.container, "limits", "memory")
	v := {
		"msg": sprintf("container %q has no memory limit", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["resources", "limits", "memory"]),
	}
}
