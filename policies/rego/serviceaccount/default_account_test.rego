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
