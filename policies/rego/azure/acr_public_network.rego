# METADATA
# title: Container registry reachable from public networks
# description: >-
#   A registry holding model-serving and training images must not accept traffic from the internet:
#   publicNetworkAccess Disabled, or networkRuleSet.defaultAction Deny with no IP rules (then only
#   private endpoints and, with networkRuleBypassOptions AzureServices, trusted services reach it).
#   publicNetworkAccess unset means Enabled and networkRuleSet unset means Allow. REST properties of
#   Microsoft.ContainerRegistry/registries, api-version 2023-07-01.
# custom:
#   id: STK-AZ-020
#   severity: high
#   kinds: [Microsoft.ContainerRegistry/registries]
#   frameworks: [azure-policy-d0793b48-0edc-4296-a390-4c75d1bdfd71, azure-policy-0fdf0491-d080-4575-b627-ad0e843cba0f, private-link-acr, MCSB-NS-2]
#   remediation: >-
#     Set publicNetworkAccess to Disabled (az acr update --public-network-enabled false; Premium SKU)
#     after creating a private endpoint (group id registry) in the cluster VNet.
package stockade.azure.acr_public_network

import data.stockade.lib.arm
import rego.v1

access := arm.prop(["publicNetworkAccess"], "Enabled")

default_action := arm.prop(["networkRuleSet", "defaultAction"], "Allow")

rules := array.concat(arm.prop(["networkRuleSet", "ipRules"], []), arm.prop(["networkRuleSet", "virtualNetworkRules"], []))

closed if lower(access) == "disabled"

closed if {
	lower(default_action) == "deny"
	count(rules) == 0
}

deny contains v if {
	not closed
	lower(default_action) != "deny"
	v := {
		"msg": sprintf("container registry allows public network access (publicNetworkAccess %s, networkRuleSet.defaultAction %s)", [arm.shown_prop(["publicNetworkAccess"], "Enabled"), arm.shown_prop(["networkRuleSet", "defaultAction"], "Allow")]),
		"path": arm.path(["publicNetworkAccess"]),
		"details": {"publicNetworkAccess": access, "defaultAction": default_action},
	}
}

deny contains v if {
	not closed
	lower(default_action) == "deny"
	v := {
		"msg": sprintf("container registry is reachable from %d public IP or virtual-network rule(s)", [count(rules)]),
		"path": arm.path(["networkRuleSet"]),
		"details": {"rules": count(rules)},
	}
}
