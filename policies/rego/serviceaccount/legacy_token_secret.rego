# METADATA
# title: Legacy ServiceAccount token Secret
# description: >-
#   A Secret of type kubernetes.io/service-account-token holds a token of its ServiceAccount (the
#   kubernetes.io/service-account.name annotation) that never expires: unlike the tokens the kubelet
#   mounts (bound to the pod, rotated hourly), it works until the Secret is deleted, from anywhere,
#   for whoever has read it once. Kubernetes stopped creating them in 1.24 and invalidates unused
#   ones; one that is written by hand, or kept, is a standing credential. Only the Secret's type and
#   annotations are read, never its data. A Secret the API server has already invalidated (the
#   kubernetes.io/legacy-token-invalid-since label) is not reported.
# custom:
#   id: STK-SA-003
#   severity: medium
#   kinds: [Secret]
#   frameworks: [CIS-5.1.6, NSA-CISA, pod-best-practice]
#   remediation: >-
#     Delete the Secret. Workloads get short-lived tokens by default (or a projected
#     serviceAccountToken volume with an expiry); for a client outside the cluster, issue a token with
#     kubectl create token --duration, or use workload identity.
package stockade.serviceaccount.legacy_token_secret

import rego.v1

md := object.get(input.object, "metadata", {})

deny contains v if {
	input.object.type == "kubernetes.io/service-account-token"
	not object.get(md, "labels", {})["kubernetes.io/legacy-token-invalid-since"]
	account := object.get(object.get(md, "annotations", {}), "kubernetes.io/service-account.name", "")
	v := {
		"msg": sprintf("Secret holds a non-expiring token of ServiceAccount %q (type kubernetes.io/service-account-token)", [account]),
		"path": ["type"],
		"details": {"serviceAccount": account},
	}
}
