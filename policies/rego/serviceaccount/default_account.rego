# METADATA
# title: Workload uses the default ServiceAccount
# description: >-
#   Every namespace has a "default" ServiceAccount that all pods without serviceAccountName share, so
#   permissions granted to it for one workload reach every other, and its token identifies no workload.
#   Each workload must name its own ServiceAccount: spec.serviceAccountName (or the deprecated
#   spec.serviceAccount) set and not "default". Who decides is the kinds table's (input.pod.account):
#   a pod spec that has no such field (KServe's ServingRuntime: the InferenceService using it names
#   the account) is not judged here, and where an operator sets the account (KubeRay's head with
#   enableInTreeAutoscaling: the head template's account, else one named after the cluster) only an
#   explicit "default" is reported.
# custom:
#   id: STK-SA-002
#   severity: low
#   kinds: ["@workloads"]
#   frameworks: [CIS-5.1.5, pod-best-practice]
#   remediation: >-
#     Create a ServiceAccount for the workload (with automountServiceAccountToken: false unless it calls
#     the API) and set spec.serviceAccountName in the pod template.
package stockade.serviceaccount.default_account

import data.stockade.lib.pods
import rego.v1

name := n if {
	n := input.pod.spec.serviceAccountName
	is_string(n)
	n != ""
} else := n if {
	n := input.pod.spec.serviceAccount
	is_string(n)
	n != ""
} else := "default"

source := object.get(input.pod, ["account", "source"], "pod")

# the pod spec does not decide (inherited), or an operator sets an account of its own
decided_elsewhere if source == "inherited"

decided_elsewhere if {
	source == "operator"
	input.pod.account.name != "default"
}

deny contains v if {
	name == "default"
	not decided_elsewhere
	v := {
		"msg": sprintf("the workload runs as the namespace's default ServiceAccount (%s)", [how]),
		"path": pods.account_path,
	}
}

how := sprintf("%s is %s", [concat(".", pods.account_field), field_value])

field_value := "\"default\"" if input.pod.spec.serviceAccountName == "default"

field_value := "unset" if not input.pod.spec.serviceAccountName

how := pod_how if not pods.account_field

pod_how := "spec.serviceAccountName is \"default\"" if {
	input.pod.spec.serviceAccountName == "default"
} else := "spec.serviceAccount is \"default\"" if {
	input.pod.spec.serviceAccount == "default"
} else := "spec.serviceAccountName is unset"
