# METADATA
# title: hostNetwork pod escapes egress policy
# description: >-
#   A pod on the host's network uses the node's network namespace, where NetworkPolicies do not apply:
#   it can reach everything the node can, metadata endpoints included. Where Pod Security (baseline or
#   restricted) applies, STK-POD-002 already reports hostNetwork; this rule covers namespaces at the
#   privileged level, so egress-wise no hostNetwork pod goes unreported.
# custom:
#   id: STK-NET-007
#   severity: high
#   kinds: ["@workloads"]
#   triggers: ['"hostNetwork"']
#   frameworks: [egress]
#   remediation: >-
#     Remove spec.hostNetwork; if the pod truly needs the node's network, waive this rule with an
#     owner, a reason and an expiry, and restrict the node's own egress (firewall, UDR).
package stockade.egress.host_network

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	input.pod.spec.hostNetwork == true
	pods.pss_level == "privileged"
	v := {
		"msg": "pod uses the host network: NetworkPolicies do not restrict its egress",
		"path": pods.spec_path(["hostNetwork"]),
	}
}
