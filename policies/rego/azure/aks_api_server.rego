# METADATA
# title: AKS API server open to the internet
# description: >-
#   The cluster's API server must be private (apiServerAccessProfile.enablePrivateCluster) or limited
#   to authorized IP ranges that do not include 0.0.0.0/0. A public API server is one stolen
#   kubeconfig away from the fleet.
# custom:
#   id: STK-AZ-010
#   severity: high
#   kinds: [Microsoft.ContainerService/managedClusters]
#   frameworks: [aks-baseline]
#   remediation: >-
#     Enable a private cluster, or set --api-server-authorized-ip-ranges to the admin networks.
package stockade.azure.aks_api_server

import data.stockade.lib.arm
import rego.v1

ranges := arm.prop(["apiServerAccessProfile", "authorizedIPRanges"], [])

private if arm.prop(["apiServerAccessProfile", "enablePrivateCluster"], false) == true

deny contains v if {
	not private
	count(ranges) == 0
	v := {
		"msg": sprintf("the API server is public: not a private cluster and no authorized IP ranges%s", [arm.why(["apiServerAccessProfile", "enablePrivateCluster"])]),
		"path": arm.path(["apiServerAccessProfile"]),
		"details": {},
	}
}

deny contains v if {
	not private
	some i, r in ranges
	r in {"0.0.0.0/0", "0.0.0.0/1", "128.0.0.0/1", "*"}
	v := {
		"msg": sprintf("authorized IP range %s lets the whole internet reach the API server", [r]),
		"path": arm.path(["apiServerAccessProfile", "authorizedIPRanges", i]),
		"details": {"range": r},
	}
}

deny contains v if {
	not private
	arm.unknown(ranges)
	v := {
		"msg": sprintf("the API server may be public: not a private cluster, and authorizedIPRanges%s", [arm.why(["apiServerAccessProfile", "authorizedIPRanges"])]),
		"path": arm.path(["apiServerAccessProfile", "authorizedIPRanges"]),
		"details": {},
	}
}

deny contains v if {
	not private
	some i, r in ranges
	arm.unknown(r)
	v := {
		"msg": sprintf("authorized IP range %s may let the whole internet reach the API server", [r]),
		"path": arm.path(["apiServerAccessProfile", "authorizedIPRanges", i]),
		"details": {"range": r},
	}
}
