# METADATA
# title: Workload runs as a ServiceAccount that does not exist
# description: >-
#   A workload whose pods name a ServiceAccount that does not exist cannot start them (the API
#   server's ServiceAccount admission rejects the pods), and whoever later creates an account of that
#   name decides what the workload may do in the cluster, bindings included. Where the gate sees the
#   whole namespace (an audit, the webhook once its inventory is synced: input.facts.serviceAccount.
#   exists is false); a scan of some files cannot know whether the cluster has the account, so it
#   does not decide. The default ServiceAccount, which Kubernetes creates in every namespace, always
#   exists.
# custom:
#   id: STK-SA-005
#   severity: low
#   kinds: ["@workloads"]
#   frameworks: [pod-best-practice]
#   remediation: >-
#     Create the ServiceAccount (with automountServiceAccountToken: false unless the workload calls the
#     API), or fix serviceAccountName.
package stockade.serviceaccount.missing_account

import data.stockade.lib.pods
import rego.v1

sa := input.facts.serviceAccount if is_object(input.facts.serviceAccount)

deny contains v if {
	sa.exists == false
	sa.name != "default"
	v := {
		"msg": sprintf("pods run as ServiceAccount %q, which does not exist in namespace %q", [sa.name, pods.object_namespace]),
		"path": pods.account_path,
		"details": {"serviceAccount": sa.name},
	}
}
