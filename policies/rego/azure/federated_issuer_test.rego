package stockade.azure.federated_issuer_test

import data.stockade.azure.federated_issuer as rule
import rego.v1

aks_issuer := "https://eastus.oic.prod-aks.azure.com/tenant/uid"

fic(issuer, subject, federation) := {
	"object": {
		"type": "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
		"name": "id-train/fc",
		"properties": {"issuer": issuer, "subject": subject, "audiences": ["api://AzureADTokenExchange"]},
	},
	"facts": {"federation": federation},
}

known := {"clusterIssuers": [aks_issuer], "clusters": 1, "issuersKnown": true}

test_issuer_of_no_cluster_read if {
	some v in rule.deny with input as fic("https://westeurope.oic.prod-aks.azure.com/t/other/", "system:serviceaccount:train:trainer", known)
	contains(v.msg, "is the OIDC issuer of none of the 1 AKS cluster(s) read (properties.issuer)")
	v.path == ["properties", "issuer"]
}

test_issuer_of_a_cluster_read_any_case_and_slash if {
	count(rule.deny) == 0 with input as fic("https://EASTUS.oic.prod-aks.azure.com/tenant/uid/", "system:serviceaccount:train:trainer", known)
}

test_other_idps_and_unknown_issuers_are_left_alone if {
	count(rule.deny) == 0 with input as fic("https://token.actions.githubusercontent.com", "repo:org/repo:ref:refs/heads/main", known)
	marker := "[unknown: set by an expression stockade cannot evaluate: reference('aks')]"
	count(rule.deny) == 0 with input as fic(marker, "system:serviceaccount:train:trainer", known)
}

test_without_clusters_with_known_issuers_nothing if {
	unknown := {"clusterIssuers": [], "clusters": 1, "issuersKnown": false}
	count(rule.deny) == 0 with input as fic("https://x.example/", "system:serviceaccount:a:b", unknown)
	none := {"clusterIssuers": [], "clusters": 0, "issuersKnown": false}
	count(rule.deny) == 0 with input as fic("https://x.example/", "system:serviceaccount:a:b", none)
}
