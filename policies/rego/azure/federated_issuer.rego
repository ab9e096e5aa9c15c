# METADATA
# title: Federated identity credential trusts a cluster that was not read
# description: >-
#   A federated identity credential of a user-assigned managed identity lets whoever presents a token
#   of its issuer for its subject act as the identity. For a Kubernetes subject
#   (system:serviceaccount:NAMESPACE:NAME) the issuer must be the OIDC issuer URL
#   (oidcIssuerProfile.issuerURL) of an AKS cluster of the estate; an issuer that is none of the AKS
#   clusters read with it (the audited subscriptions, the templates and plans of the scan) trusts a
#   cluster outside them: a forgotten, deleted (issuer URLs are not reused, but the credential stays),
#   personal or another team's cluster. Judged only when the clusters read all have a known issuer
#   URL; subjects that are not Kubernetes ones (GitHub Actions, other IdPs) are left alone.
# custom:
#   id: STK-AZ-039
#   severity: high
#   kinds: [Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials]
#   frameworks: [workload-identity]
#   remediation: >-
#     Delete the credential, or re-create it with the issuer of the cluster that runs the workload:
#     az aks show -n CLUSTER -g RG --query oidcIssuerProfile.issuerUrl.
package stockade.azure.federated_issuer

import data.stockade.lib.arm
import rego.v1

subject := arm.prop(["subject"], "")

issuer := arm.prop(["issuer"], "")

federation := input.facts.federation if is_object(input.facts.federation)

normalized(url) := trim_right(lower(trim_space(url)), "/")

deny contains v if {
	is_string(subject)
	startswith(subject, "system:serviceaccount:")
	federation.issuersKnown == true
	is_string(issuer)
	not arm.unknown(issuer)
	not normalized(issuer) in federation.clusterIssuers
	v := {
		"msg": sprintf(
			"federated credential %s lets tokens of issuer %s for %s act as the identity, but that issuer is the OIDC issuer of none of the %d AKS cluster(s) read (properties.issuer)",
			[input.object.name, issuer, subject, federation.clusters],
		),
		"path": arm.path(["issuer"]),
		"details": {"issuer": issuer, "subject": subject, "clusterIssuers": federation.clusterIssuers},
	}
}
