# METADATA
# title: Memory request missing
# description: >-
#   Every init and regular container must request memory (when resources.require_memory_request is true,
#   the default), so the scheduler does not overcommit the node and the container is not the first evicted
#   under memory pressure. The effective request counts, as Kubernetes defaults it on a Pod: a container
#   that sets resources.limits.memory but no request gets the limit as its request (SetDefaults_Pod), so
#   the limit satisfies this rule. Deciding on the manifest as written would report a Pod in a scan that
#   the admission webhook and the cluster audit (which see the defaulted Pod) pass. Polaris
#   memoryRequestsMissing and Kubescape C-0269 ask for an explicit request and differ here.
# custom:
#   id: STK-RES-003
#   severity: low
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, pod-best-practice]
#   remediation: Set resources.requests.memory on the container to its typical working set.
package stockade.resources.memory_request

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	object.get(data.stockade.config, ["resources", "require_memory_request"], true) == true
	some entry in pods.resource_containers
	not pods.resource_value(entry.container, "requests", "memory")
	not pods.resource_value(entry.container, "limits", "memory")
	v := {
		"msg": sprintf("container %q has no memory request (and no memory limit it would default to)", [pods.container_name(entry.container)]),
		"path": array.concat(entry.path, ["resources", "requests", "memory"]),
	}
}
