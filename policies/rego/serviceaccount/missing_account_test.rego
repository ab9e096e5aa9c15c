package stockade.serviceaccount.missing_account_test

import data.stockade.serviceaccount.missing_account
import rego.v1

inp(sa) := {
	"object": {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ml"}},
	"pod": {"spec": {"serviceAccountName": sa.name}, "metadata": {}, "path": ["spec", "template"]},
	"namespace": {"name": "ml"},
	"facts": {"serviceAccount": sa},
}

deny(sa) := d if {
	d := missing_account.deny with input as inp(sa)
}

test_missing_in_a_complete_inventory_denied if {
	vs := deny({"name": "trainer", "known": false, "exists": false})
	some v in vs
	v.path == ["spec", "template", "spec", "serviceAccountName"]
	v.msg == "pods run as ServiceAccount \"trainer\", which does not exist in namespace \"ml\""
}

test_unseen_in_a_scan_is_not_decided if {
	count(deny({"name": "trainer", "known": false, "exists": null})) == 0
}

test_existing_and_default_allowed if {
	count(deny({"name": "trainer", "known": true, "exists": true})) == 0
	count(deny({"name": "default", "known": false, "exists": false})) == 0
	d := missing_account.deny with input as {"object": {"kind": "Pod"}, "pod": {"spec": {}}}
	count(d) == 0
}

# Volcano's installer writes the deprecated alias `serviceAccount: volcano-admission`: the finding
# points at the field the manifest holds, not at a serviceAccountName it does not have.
test_the_deprecated_alias_is_the_path if {
	i := {
		"object": {"kind": "Deployment", "metadata": {"name": "d", "namespace": "ml"}},
		"pod": {"spec": {"serviceAccount": "trainer"}, "metadata": {}, "path": ["spec", "template"]},
		"namespace": {"name": "ml"},
		"facts": {"serviceAccount": {"name": "trainer", "known": false, "exists": false}},
	}
	vs := missing_account.deny with input as i
	{v.path | some v in vs} == {["spec", "template", "spec", "serviceAccount"]}
	# both written: serviceAccountName is the one the API server reads
	both := json.patch(i, [{"op": "add", "path": "/pod/spec/serviceAccountName", "value": "trainer"}])
	ws := missing_account.deny with input as both
	{w.path | some w in ws} == {["spec", "template", "spec", "serviceAccountName"]}
}
