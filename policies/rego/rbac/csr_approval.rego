# METADATA
# title: Role approves certificate signing requests
# description: >-
#   update on certificatesigningrequests/approval together with approve on signers lets a subject
#   approve certificate signing requests, and so mint client certificates for any user or group
#   (kube-apiserver-client signer), including system:masters. Kubernetes requires both: either alone
#   approves nothing, so a role is reported when it grants both. Rules granting them for some
#   resourceNames count too (those objects are still reachable). System bootstrap objects are out of
#   scope unless scope.include_system_rbac.
# custom:
#   id: STK-RBAC-008
#   severity: high
#   kinds: [Role, ClusterRole]
#   frameworks: [rbac-good-practices]
#   remediation: >-
#     Leave CSR approval to the built-in approvers; grant approve on signers only with resourceNames
#     naming a signer that is not kubernetes.io/kube-apiserver-client.
package stockade.rbac.csr_approval

import data.stockade.lib.rbac
import rego.v1

granted := rbac.granted("STK-RBAC-008")

approval if {
	some [_, p] in granted
	contains(p, "certificatesigningrequests/approval")
}

signers if {
	some [_, p] in granted
	endswith(p, " signers.certificates.k8s.io")
}

deny contains v if {
	approval
	signers
	some v in rbac.permission_violations("STK-RBAC-008")
}
