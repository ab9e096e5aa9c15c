# METADATA
# title: Workload reads a legacy ServiceAccount token Secret
# description: >-
#   The pods read a Secret of type kubernetes.io/service-account-token (a secret volume, a projected
#   secret source, an env var from secretKeyRef or envFrom): they hold a non-expiring token of that
#   Secret's ServiceAccount, whatever their own ServiceAccount and automountServiceAccountToken say,
#   and so does whoever compromises a container. Decided from input.facts.serviceAccount.legacyTokens,
#   which the gate computes from its inventory: the scanned set, the webhook's cache, the audited
#   cluster. A Secret the inventory does not hold cannot be told apart from any other Secret.
# custom:
#   id: STK-SA-004
#   severity: high
#   kinds: ["@workloads"]
#   frameworks: [CIS-5.1.6, NSA-CISA, pod-best-practice]
#   remediation: >-
#     Use the ServiceAccount's own short-lived token (serviceAccountName, or a projected
#     serviceAccountToken volume with an expiry) instead of a token Secret, and delete the Secret.
package stockade.serviceaccount.legacy_token_mount

import data.stockade.lib.pods
import rego.v1

deny contains v if {
	some t in input.facts.serviceAccount.legacyTokens
	v := {
		"msg": sprintf("pods read Secret %q, a non-expiring token of ServiceAccount %q", [t.secret, t.serviceAccount]),
		"path": pods.spec_path(t.path),
		"details": {"secret": t.secret, "serviceAccount": t.serviceAccount},
	}
}
