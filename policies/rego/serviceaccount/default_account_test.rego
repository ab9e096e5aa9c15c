package stockade.serviceaccount.default_account_test

import data.stockade.serviceaccount.default_account
import rego.v1

inp(spec) := {"pod": {"spec": spec, "metadata": {}, "path": []}}

deny(spec) := d if {
	d := default_account.deny with input as inp(spec)
}

test_named_service_account_allowed if {
	count(deny({"serviceAccountName": "trainer"})) == 0
	count(deny({"serviceAccount": "trainer"})) == 0
}

test_unset_denied if {
	some v in deny({})
	v.path == ["spec", "serviceAccountName"]
	v.msg == "the workload runs as the namespace's default ServiceAccount (spec.serviceAccountName is unset)"
	some w in deny({"serviceAccountName": ""})
	contains(w.msg, "unset")
}

test_explicit_default_denied if {
	some v in deny({"serviceAccountName": "default"})
	contains(v.msg, "spec.serviceAccountName is \"default\"")
}

test_deprecated_field_default_denied if {
	some v in deny({"serviceAccount": "default"})
	contains(v.msg, "spec.serviceAccount is \"default\"")
}

test_service_account_name_wins_over_deprecated_field if {
	count(deny({"serviceAccountName": "trainer", "serviceAccount": "default"})) == 0
}

test_template_path_prefixed if {
	i := {"pod": {"spec": {}, "metadata": {}, "path": ["spec", "jobTemplate", "spec", "template"]}}
	some v in default_account.deny with input as i
	v.path == ["spec", "jobTemplate", "spec", "template", "spec", "serviceAccountName"]
}

# input.pod.account from the kinds table (kinds/api.py Account)
with_account(spec, account) := {"pod": {"spec": spec, "metadata": {}, "path": ["spec"], "account": account}}

test_inherited_account_not_judged if {
	# KServe's ServingRuntime has no serviceAccountName: the InferenceService using it names the account
	d := default_account.deny with input as with_account({}, {"source": "inherited", "by": "InferenceService"})
	count(d) == 0
}

test_operator_account_not_default if {
	# KubeRay's autoscaling head runs as an account named after the cluster (or a generated one)
	d1 := default_account.deny with input as with_account({}, {"source": "operator", "by": "KubeRay", "name": "raycluster-autoscaler", "apiClient": true})
	count(d1) == 0
	d2 := default_account.deny with input as with_account({}, {"source": "operator", "by": "KubeRay", "name": "", "apiClient": true})
	count(d2) == 0
}

test_operator_keeps_an_explicit_default if {
	# KubeRay keeps the head template's own serviceAccountName, "default" included
	i := with_account({"serviceAccountName": "default"}, {"source": "operator", "by": "KubeRay", "name": "default", "apiClient": true})
	some v in default_account.deny with input as i
	contains(v.msg, "spec.serviceAccountName is \"default\"")
}

test_own_account_still_judged if {
	count(default_account.deny) == 1 with input as with_account({}, {"source": "pod"})
}
