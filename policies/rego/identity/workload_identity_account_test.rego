package stockade.identity.workload_identity_account_test

import data.stockade.identity.workload_identity_account as rule
import rego.v1

pod(labels, sa) := {
	"pod": {"spec": {"serviceAccountName": "trainer"}, "metadata": {"labels": labels}, "path": ["spec", "template"]},
	"facts": {"serviceAccount": sa},
}

use := {"azure.workload.identity/use": "true"}

annotated := {"name": "trainer", "known": true, "exists": true, "annotations": {"azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000001"}}

bare := {"name": "trainer", "known": true, "exists": true, "annotations": {}}

test_annotated_account_allowed if {
	count(rule.deny) == 0 with input as pod(use, annotated)
}

test_missing_annotation_denied if {
	some v in rule.deny with input as pod(use, bare)
	v.path == ["spec", "template", "metadata", "labels", "azure.workload.identity/use"]
	contains(v.msg, "ServiceAccount \"trainer\" has no azure.workload.identity/client-id")
}

test_empty_annotation_denied if {
	sa := object.union(bare, {"annotations": {"azure.workload.identity/client-id": " "}})
	count(rule.deny) == 1 with input as pod(use, sa)
}

test_unknown_account_not_reported if {
	count(rule.deny) == 0 with input as pod(use, {"name": "trainer", "known": false, "exists": null, "annotations": {}})
}

test_missing_account_in_complete_inventory_denied if {
	some v in rule.deny with input as pod(use, {"name": "trainer", "known": false, "exists": false, "annotations": {}})
	contains(v.msg, "does not exist")
}

test_unlabelled_pod_ignored if {
	count(rule.deny) == 0 with input as pod({}, bare)
	count(rule.deny) == 0 with input as pod({"azure.workload.identity/use": "false"}, bare)
}
