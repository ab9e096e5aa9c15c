# METADATA
# title: Azure AI services / Azure OpenAI account reachable from public networks
# description: >-
#   An Azure AI services or Azure OpenAI account serves inference on private prompts and data and must
#   not accept traffic from the internet: publicNetworkAccess Disabled, or networkAcls.defaultAction
#   Deny with no IP or virtual-network rules. publicNetworkAccess unset means Enabled and networkAcls
#   unset means Allow. REST properties of Microsoft.CognitiveServices/accounts, api-version 2023-05-01.
# custom:
#   id: STK-AZ-027
#   severity: high
#   kinds: [Microsoft.CognitiveServices/accounts]
#   frameworks: [azure-policy-037eea7a-bd0a-46c5-9a66-03aea78705d3, azure-policy-47ba1dd7-28d9-4b07-a8d5-9813bed64e0c, private-link-ai, MCSB-NS-2]
#   remediation: >-
#     Set publicNetworkAccess to Disabled (az cognitiveservices account update --custom-domain NAME
#     then az resource update --set properties.publicNetworkAccess=Disabled) after creating a private
#     endpoint (group id account) in the cluster VNet.
package stockade.azure.ai_public_network

import data.stockade.lib.arm
import rego.v1

access := arm.prop(["publicNetworkAccess"], "Enabled")

default_action := arm.prop(["networkAcls", "defaultAction"], "Allow")

rules := array.concat(arm.prop(["networkAcls", "ipRules"], []), arm.prop(["networkAcls", "virtualNetworkRules"], []))

closed if lower(access) == "disabled"

closed if {
	lower(default_action) == "deny"
	count(rules) == 0
}

deny contains v if {
	not closed
	lower(default_action) != "deny"
	v := {
		"msg": sprintf("Azure AI services account allows public network access (publicNetworkAccess %s, networkAcls.defaultAction %s)", [arm.shown_prop(["publicNetworkAccess"], "Enabled"), arm.shown_prop(["networkAcls", "defaultAction"], "Allow")]),
		"path": arm.path(["publicNetworkAccess"]),
		"details": {"publicNetworkAccess": access, "defaultAction": default_action},
	}
}

deny contains v if {
	not closed
	lower(default_action) == "deny"
	v := {
		"msg": sprintf("Azure AI services account is reachable from %d public IP or virtual-network rule(s)", [count(rules)]),
		"path": arm.path(["networkAcls"]),
		"details": {"rules": count(rules)},
	}
}
