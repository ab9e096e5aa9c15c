package stockade.azure.ai_local_auth_test

import data.stockade.azure.ai_local_auth as rule
import rego.v1

acct(props) := {"object": {"type": "Microsoft.CognitiveServices/accounts", "kind": "OpenAI", "name": "oai", "properties": props}}

test_disabled_allowed if {
	count(rule.deny) == 0 with input as acct({"disableLocalAuth": true})
}

test_unset_denied if {
	some v in rule.deny with input as acct({})
	v.path == ["properties", "disableLocalAuth"]
}

test_false_denied if {
	count(rule.deny) == 1 with input as acct({"disableLocalAuth": false})
}
