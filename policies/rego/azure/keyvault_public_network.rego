# METADATA
# title: Key Vault reachable from public networks
# description: >-
#   A Key Vault holding the keys and secrets of model stores and inference endpoints must not accept traffic
#   from the internet: publicNetworkAccess Disabled, or the firewall's networkAcls.defaultAction Deny with no
#   IP or virtual-network rules (then only private endpoints and trusted services reach it).
#   publicNetworkAccess unset means Enabled and networkAcls unset means Allow. REST properties of
#   Microsoft.KeyVault/vaults, api-version 2023-07-01.
# custom:
#   id: STK-AZ-018
#   severity: high
#   kinds: [Microsoft.KeyVault/vaults]
#   frameworks: [azure-policy-405c5871-3e91-4644-8a63-58e19d68ff5b, azure-policy-55615ac9-af46-4a59-874e-391cc3dfb490, private-link-keyvault, MCSB-NS-2]
#   remediation: >-
#     Set publicNetworkAccess to Disabled (az keyvault update --public-network-access Disabled) after
#     creating a private endpoint (group id vault) in the cluster VNet.
package stockade.azure.keyvault_public_network

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
		"msg": sprintf("key vault allows public network access (publicNetworkAccess %s, networkAcls.defaultAction %s)", [arm.shown_prop(["publicNetworkAccess"], "Enabled"), arm.shown_prop(["networkAcls", "defaultAction"], "Allow")]),
		"path": arm.path(["publicNetworkAccess"]),
		"details": {"publicNetworkAccess": access, "defaultAction": default_action},
	}
}

deny contains v if {
	not closed
	lower(default_action) == "deny"
	v := {
		"msg": sprintf("key vault is reachable from %d public IP or virtual-network rule(s)", [count(rules)]),
		"path": arm.path(["networkAcls"]),
		"details": {"rules": count(rules)},
	}
}
