# METADATA
# title: Storage private endpoint not resolvable from the cluster VNet
# description: >-
#   A private endpoint only helps if the cluster resolves the account's name to it: the privatelink
#   DNS zone of each sub-resource in use (privatelink.blob.core.windows.net, ...) must exist and be
#   linked to the VNet of every AKS cluster seen (from its node pools' vnetSubnetID). Without the
#   link, pods resolve the public address and either fail or leave Private Link. Checked when cluster
#   VNets are known (input.facts.storage); a missing zone is reported when the zones of the whole
#   subscription were listed, or when the scanned set has zones but not this one.
# custom:
#   id: STK-AZ-006
#   severity: medium
#   kinds: [Microsoft.Storage/storageAccounts]
#   frameworks: [private-link-storage]
#   remediation: >-
#     Create the privatelink zone, add the endpoint's DNS zone group, and link the zone to the cluster
#     VNet (az network private-dns link vnet create ...).
package stockade.azure.storage_private_dns

import data.stockade.lib.arm
import rego.v1

storage := object.get(input.facts, "storage", {})

zones := object.get(storage, "dnsZones", {})

vnets := object.get(storage, "clusterVnets", [])

zones_seen if {
	some _, z in zones
	z.found
}

deny contains v if {
	count(vnets) > 0
	some group in arm.required_subresources
	zone := zones[group]
	not zone.found
	object.get(storage, "complete", false) == true
	v := {
		"msg": sprintf("no private DNS zone %s for the %s endpoint", [zone.zone, group]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"subresource": group, "zone": zone.zone},
	}
}

deny contains v if {
	count(vnets) > 0
	some group in arm.required_subresources
	zone := zones[group]
	not zone.found
	object.get(storage, "complete", false) != true
	zones_seen
	v := {
		"msg": sprintf("no private DNS zone %s for the %s endpoint", [zone.zone, group]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"subresource": group, "zone": zone.zone},
	}
}

deny contains v if {
	some group in arm.required_subresources
	zone := zones[group]
	zone.found
	count(zone.unlinkedVnets) > 0
	v := {
		"msg": sprintf("private DNS zone %s is not linked to the cluster VNet(s) %s", [zone.zone, concat(", ", zone.unlinkedVnets)]),
		"path": arm.path(["privateEndpointConnections"]),
		"details": {"subresource": group, "zone": zone.zone, "vnets": zone.unlinkedVnets},
	}
}
