# METADATA
# title: Memory request missing
# description: >-
#   Every init and regular container must request memory (when resources.require_memory_request is true,
#   the default), so the scheduler does not overcommit the node and the container is not the first evicted
#   under memory pressure. The effective request counts, as Kubernetes defaults it on a Pod: a container
#   that sets resources.limits.memory but no request gets the limit as its request (SetDefaults_Pod), so
#   the limit satisfies this rule. Deciding on the manifest as written would report a Pod in a scan that
#   the admission webhook and the cluster audit (which see the defaulted Pod) pass. Polaris
#   memoryRequestsMissing and Kubescape C-0269 ask for an explicit request and differ here. A container
#   that sets no CPU or memory quantity at all is reported once, by STK-RES-001 or STK-RES-002 when
#   one of them is on (its finding lists the memory request), else by this rule.
# custom:
#   id: STK-RES-003
#   severity: low
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, pod-best-practice]
#   remediation: Set resources.requests.memory on the container to its typical working set.
package stockade.resources.memory_request

import data.stockade.lib.pods
import data.stockade.lib.resources
import rego.v1

deny contains v if {
	resources.on("STK-RES-003")
	some entry in pods.resource_containers
	not pods.resource_value(entry.container, "requests", "memory")
	not pods.resource_value(entry.container, "limits", "memory")
	not resources.bare(entry.container)
	v := {"msg": msg(entry), "path": array.concat(entry.path, ["resources", "requests", "memory"])}
}

# a container with no CPU or memory resources at all: reported once, by the first of STK-RES-001,
# -002, -003 that is on (lib/resources.rego)
deny contains v if {
	resources.owner == "STK-RES-003"
	resources.several
	some entry in pods.resource_containers
	resources.bare(entry.container)
	v := resources.bare_finding(entry)
}

deny contains v if {
	resources.owner == "STK-RES-003"
	not resources.several
	some entry in pods.resource_containers
	resources.bare(entry.container)
	v := {"msg": msg(entry), "path": array.concat(entry.path, ["resources", "requests", "memory"])}
}

msg(entry) := sprintf("container %q has no memory request (and no memory limit it would default to)", [pods.container_name(entry.container)])
