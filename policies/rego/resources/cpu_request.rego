# METADATA
# title: CPU request missing
# description: >-
#   Every init and regular container must request CPU (when resources.require_cpu_request is true, the
#   default), so the scheduler reserves it and the container is not starved under contention. The
#   effective request counts, as Kubernetes defaults it on a Pod: a container that sets
#   resources.limits.cpu but no request gets the limit as its request (SetDefaults_Pod), so the limit
#   satisfies this rule. Deciding on the manifest as written would report a Pod in a scan that the
#   admission webhook and the cluster audit (which see the defaulted Pod) pass. Polaris
#   cpuRequestsMissing and Kubescape C-0268 ask for an explicit request and differ here. A container
#   that sets no CPU or memory quantity at all is reported once, by STK-RES-001 when it is on (its
#   finding lists the CPU request), else by this rule.
# custom:
#   id: STK-RES-002
#   severity: low
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, pod-best-practice]
#   remediation: Set resources.requests.cpu on the container to what it needs under normal load.
package stockade.resources.cpu_request

import data.stockade.lib.pods
import data.stockade.lib.resources
import rego.v1

deny contains v if {
	resources.on("STK-RES-002")
	some entry in pods.resource_containers
	not pods.resource_value(entry.container, "requests", "cpu")
	not pods.resource_value(entry.container, "limits", "cpu")
	not resources.bare(entry.container)
	v := {"msg": msg(entry), "path": array.concat(entry.path, ["resources", "requests", "cpu"])}
}

# a container with no CPU or memory resources at all: reported once, by the first of STK-RES-001,
# -002, -003 that is on (lib/resources.rego)
deny contains v if {
	resources.owner == "STK-RES-002"
	resources.several
	some entry in pods.resource_containers
	resources.bare(entry.container)
	v := resources.bare_finding(entry)
}

deny contains v if {
	resources.owner == "STK-RES-002"
	not resources.several
	some entry in pods.resource_containers
	resources.bare(entry.container)
	v := {"msg": msg(entry), "path": array.concat(entry.path, ["resources", "requests", "cpu"])}
}

msg(entry) := sprintf("container %q has no CPU request (and no CPU limit it would default to)", [pods.container_name(entry.container)])
