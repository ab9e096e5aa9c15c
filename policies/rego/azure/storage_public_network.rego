# METADATA
# title: Storage account reachable from public networks
# description: >-
#   A storage account holding training data or checkpoints must not accept traffic from the internet:
#   publicNetworkAccess Disabled, or the firewall's defaultAction Deny with no IP or virtual-network
#   rules (then only private endpoints and trusted services reach it). publicNetworkAccess unset means
#   Enabled.
# custom:
#   id: STK-AZ-001
#   severity: high
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage, MCSB-NS-2]
#   remediation: >-
#     Set publicNetworkAccess to Disabled (az storage account update --public-network-access Disabled)
#     after creating private endpoints for the sub-resources in use.
package stockade.azure.storage_public_network

import data.stockade.lib.arm
import rego.v1

access := arm.prop(["publicNetworkAccess"], "Enabled")

default_action := arm.prop(["networkAcls", "defaultAction"], "Allow")

rules := array.concat(arm.list(["networkAcls", "ipRules"]), arm.list(["networkAcls", "virtualNetworkRules"]))

closed if access == "Disabled"

closed if {
	default_action == "Deny"
	count(rules) == 0
}

deny contains v if {
	not closed
	default_action != "Deny"
	v := {
		"msg": sprintf("storage account allows public network access (publicNetworkAccess %s, networkAcls.defaultAction %s)", [arm.shown_prop(["publicNetworkAccess"], "Enabled"), arm.shown_prop(["networkAcls", "defaultAction"], "Allow")]),
		"path": arm.path(["publicNetworkAccess"]),
		"details": {"publicNetworkAccess": access, "defaultAction": default_action},
	}
}

deny contains v if {
	not closed
	default_action == "Deny"
	v := {
		"msg": sprintf("storage account is reachable from %d public IP or virtual-network rule(s)%s%s", [count(rules), arm.why(["networkAcls", "ipRules"]), arm.why(["networkAcls", "virtualNetworkRules"])]),
		"path": arm.path(["networkAcls"]),
		"details": {"rules": count(rules)},
	}
}
