package stockade.azure.federated_subject_test

import data.stockade.azure.federated_subject as rule
import rego.v1

fic(props) := {"object": {
	"type": "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
	"name": "id-train/fc",
	"properties": object.union({"issuer": "https://i/"}, props),
}}

test_one_service_account_passes if {
	count(rule.deny) == 0 with input as fic({"subject": "system:serviceaccount:train:trainer"})
}

test_default_account if {
	some v in rule.deny with input as fic({"subject": "system:serviceaccount:train:default"})
	contains(v.msg, "the default ServiceAccount of namespace train")
	v.path == ["properties", "subject"]
}

test_wildcard_and_expression if {
	some v in rule.deny with input as fic({"subject": "system:serviceaccount:train:*"})
	contains(v.msg, "a wildcard in its subject system:serviceaccount:train:*")
	some w in rule.deny with input as fic({"claimsMatchingExpression": {"value": "claims['sub'] startswith 'system:serviceaccount:train:'", "languageVersion": 1}})
	contains(w.msg, "a claims-matching expression")
}

test_unknown_subject_is_the_worst_case if {
	some v in rule.deny with input as fic({"subject": "[unknown: set by an expression stockade cannot evaluate: parameters('sa'): no value in x]"})
	contains(v.msg, "a subject set by an expression stockade cannot evaluate: parameters('sa')")
}
