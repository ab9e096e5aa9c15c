# METADATA
# title: Federated identity credential with a broad subject
# description: >-
#   A federated identity credential should name one workload: system:serviceaccount:NAMESPACE:NAME of
#   a ServiceAccount made for it. A subject with a wildcard, a claims-matching expression (flexible
#   federated identity credentials) or the default ServiceAccount of a namespace hands the managed
#   identity, and every role it holds, to every pod that matches: in the default account's case,
#   every pod of the namespace that names no ServiceAccount. A subject set by an expression stockade
#   cannot evaluate is the worst case and says so.
# custom:
#   id: STK-AZ-040
#   severity: high
#   kinds: [Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials]
#   frameworks: [workload-identity]
#   remediation: >-
#     Federate one ServiceAccount per workload (az identity federated-credential create --subject
#     system:serviceaccount:NAMESPACE:NAME), never default or a pattern.
package stockade.azure.federated_subject

import data.stockade.lib.arm
import rego.v1

subject := arm.prop(["subject"], "")

broad contains sprintf("a wildcard in its subject %s", [subject]) if {
	is_string(subject)
	not arm.unknown(subject)
	contains(subject, "*")
}

broad contains sprintf("the default ServiceAccount of namespace %s (every pod there that names no ServiceAccount)", [parts[2]]) if {
	is_string(subject)
	parts := split(subject, ":")
	count(parts) == 4
	parts[0] == "system"
	parts[1] == "serviceaccount"
	parts[3] == "default"
}

broad contains sprintf("a claims-matching expression (%v) instead of one subject", [expr]) if {
	expr := arm.prop(["claimsMatchingExpression", "value"], null)
	expr != null
}

broad contains sprintf("a subject %s", [trim_suffix(trim_prefix(subject, "[unknown: "), "]")]) if arm.unknown(subject)

deny contains v if {
	count(broad) > 0
	v := {
		"msg": sprintf("federated credential %s gives the identity to more than one workload: %s", [input.object.name, concat("; ", sort(broad))]),
		"path": arm.path(["subject"]),
		"details": {"subject": subject, "broad": sort(broad)},
	}
}
