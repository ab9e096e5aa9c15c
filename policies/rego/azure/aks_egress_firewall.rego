# METADATA
# title: AKS egress not forced through an Azure Firewall FQDN allowlist
# description: >-
#   Cluster egress must leave through an Azure Firewall that allows only listed FQDNs: outbound type
#   userDefinedRouting, a 0.0.0.0/0 route on the cluster subnet's route table to a virtual appliance
#   that is an Azure Firewall, and no allowing application rule whose target FQDNs include "*". The
#   route table and firewall come from input.facts.aks (the subscription's resources, or those in the
#   scanned files; a route table that was not seen is reported only by an audit that listed the
#   whole subscription).
# custom:
#   id: STK-AZ-015
#   severity: high
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [egress-allowlist, aks-baseline]
#   remediation: >-
#     Set outboundType to userDefinedRouting, route 0.0.0.0/0 from the cluster subnet to the Azure
#     Firewall's private IP, and allow only the FQDNs AKS and the workloads need (AzureKubernetesService
#     FQDN tag plus an explicit list), never "*".
package stockade.azure.aks_egress_firewall

import data.stockade.lib.arm
import rego.v1

outbound := arm.prop(["networkProfile", "outboundType"], "loadBalancer")

aks := object.get(input.facts, "aks", {})

route := object.get(aks, "defaultRoute", null)

deny contains v if {
	outbound != "userDefinedRouting"
	v := {
		"msg": sprintf("egress is not forced through a firewall: outboundType is %s, not userDefinedRouting", [outbound]),
		"path": arm.path(["networkProfile", "outboundType"]),
		"details": {"outboundType": outbound},
	}
}

deny contains v if {
	outbound == "userDefinedRouting"
	route == null
	object.get(aks, "routeKnown", false) == true
	v := {
		"msg": "the cluster subnet's route table has no 0.0.0.0/0 route",
		"path": arm.path(["networkProfile", "outboundType"]),
		"details": {},
	}
}

deny contains v if {
	outbound == "userDefinedRouting"
	route != null
	route.firewall == null
	v := {
		"msg": sprintf("0.0.0.0/0 goes to %s %v, which is not an Azure Firewall", [route.nextHopType, route.nextHopIpAddress]),
		"path": arm.path(["networkProfile", "outboundType"]),
		"details": {"nextHopType": route.nextHopType, "nextHopIpAddress": route.nextHopIpAddress},
	}
}

deny contains v if {
	outbound == "userDefinedRouting"
	route.firewall != null
	some rule in object.get(aks, "firewallWildcardRules", [])
	v := {
		"msg": sprintf("firewall %s allows any FQDN (\"*\") in application rule %s", [route.firewall, rule]),
		"path": arm.path(["networkProfile", "outboundType"]),
		"details": {"firewall": route.firewall, "rule": rule},
	}
}

deny contains v if {
	outbound == "userDefinedRouting"
	route == null
	object.get(aks, "routeKnown", false) != true
	object.get(aks, "complete", false) == true
	v := {
		"msg": "the route table of the cluster subnet was not found: egress through a firewall cannot be shown",
		"path": arm.path(["networkProfile", "outboundType"]),
		"details": {},
	}
}
