# METADATA
# title: Sandboxed pod receives projected cluster credentials
# description: >-
#   Code in a sandbox is untrusted by definition (an agent's tool calls, user notebooks): whatever
#   credential the pod holds, that code holds. Pods that are high-risk or run in a sandbox class must
#   not receive a projected serviceAccountToken source (of any audience), a projected
#   clusterTrustBundle or a projected podCertificate (a private key and certificate the kubelet issues
#   for the pod), nor the automounted ServiceAccount token (automountServiceAccountToken decided as
#   Kubernetes does, from the pod's setting, else its ServiceAccount's, else true), as agent-sandbox's
#   own admission policy requires. Unlike STK-SA-001 this holds for API clients too: a sandbox that
#   needs the API gets it through a proxy outside the sandbox.
# custom:
#   id: STK-RT-007
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [NSA-CISA, NIST-800-190, sandbox-best-practice]
#   remediation: >-
#     Remove projected serviceAccountToken, clusterTrustBundle and podCertificate sources from the
#     sandbox's pod template (and set automountServiceAccountToken: false); give the sandbox what it
#     needs through a narrowly scoped proxy outside it.
package stockade.runtime.sandbox_identity

import data.stockade.lib.pods
import data.stockade.lib.sandbox
import data.stockade.lib.tokens
import rego.v1

projected := {"serviceAccountToken": "a projected ServiceAccount token", "clusterTrustBundle": "a projected ClusterTrustBundle", "podCertificate": "a projected pod certificate"}

# [what, path]
credentials contains [sprintf("%s (volume %q)", [what, object.get(vol, "name", "")]), pods.spec_path(["volumes", i, "projected", "sources", j, field])] if {
	some i, vol in object.get(input.pod.spec, "volumes", [])
	some j, source in object.get(object.get(vol, "projected", {}), "sources", [])
	some field, what in projected
	is_object(source[field])
}

credentials contains [sprintf("the automounted token of ServiceAccount %q (%s)", [tokens.sa_name, tokens.mount[1]]), pods.spec_path(["automountServiceAccountToken"])] if {
	tokens.mount[0] == true
}

deny contains v if {
	sandbox.sandbox_pod
	some c in credentials
	v := {
		"msg": sprintf("pod (%s) receives %s", [sandbox.sandbox_reason, c[0]]),
		"path": c[1],
		"details": {"credential": c[0]},
	}
}
