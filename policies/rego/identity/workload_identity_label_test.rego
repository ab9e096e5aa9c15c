package stockade.identity.workload_identity_label_test

import data.stockade.identity.workload_identity_label as rule
import rego.v1

pod(labels, annotations) := {
	"pod": {"spec": {}, "metadata": {"labels": labels}, "path": []},
	"facts": {"serviceAccount": {"name": "trainer", "known": true, "exists": true, "annotations": annotations}},
}

wi := {"azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000001"}

test_labelled_pod_allowed if {
	count(rule.deny) == 0 with input as pod({"azure.workload.identity/use": "true"}, wi)
}

test_account_without_identity_ignored if {
	count(rule.deny) == 0 with input as pod({}, {})
	count(rule.deny) == 0 with input as {"pod": {"spec": {}, "metadata": {}, "path": []}}
}

test_unlabelled_pod_denied if {
	some v in rule.deny with input as pod({"app": "x"}, wi)
	v.path == ["metadata", "labels"]
	v.details.label == null
}

test_other_label_value_denied if {
	some v in rule.deny with input as pod({"azure.workload.identity/use": "false"}, wi)
	v.details.label == "false"
}
